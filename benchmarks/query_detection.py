"""Query-time detection on real data (issue 8): RAG-CT, RetrievalAnomaly, ExtractionIntent, QueryShield.

    nice .venv/bin/python benchmarks/query_detection.py [--data ../shared/data] [--kb healthcaremagic]
        [--section generalisation|scenarios|all] [--loo all|languages|styles|none]
        [--loo-from LOO.json ...] [--extra-loo LOO.json ...] [--intent-model MODEL.json]
        [--compare-with GENERALISATION.json --compare-label TEXT]

The `generalisation` section (issue 18, `benchmarks/intent_generalisation.py`) judges the shipped
learned `intent` model with no user calibration: FPR on unseen benign sets, TPR on the published
families and on the held-apart set (`benchmarks/data/intent_heldout.jsonl`), leave-one-style-out,
leave-one-language-out and its cost against retrieval. The `scenarios` sections follow.

Every detector is built through the defense registry (`ragshield.guards.factory.build_defense`)
and fitted ONLY on the FIT benign set at 1% target FPR; it is evaluated on benign sets it was
not fitted on (sage, heldout, icliniq; `in-kb` apart) and on the attack and adaptive sets of
`benchmarks/query_sets.py`. Writes `benchmarks/results/query_detection.json`, a PNG per
knowledge base, and `docs/results/query_detection.md`.

* AUROC / TPR@1% (ROC): against the pooled benign test queries (the threshold that gives 1% FPR
  on them: the detector's best case);
* operating point: the detector's own fitted threshold; FPR measured on each benign test set.
  The goal of issue 8: QueryShield TPR >= 0.95 on every attack family at 1% target FPR.
"""

from __future__ import annotations

import argparse
import copy
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

import intent_generalisation as ig
import intent_report
import query_sets as qs  # benchmarks/ is on sys.path when this file is run as a script
from ragshield.calibration import flag_rate, threshold_at_fpr
from ragshield.guards.factory import DefenseContext, build_defense
from ragshield.guards.intent import BankIntent, ExtractionIntent
from ragshield.guards.shield import QueryShield
from ragshield.metrics.detection import auroc
from ragshield.rag.retriever import Retriever
from ragshield.types import Query, RetrievalResult

BENIGN_TEST = ("sage", "heldout", "icliniq")
TARGET = 0.01
DETECTORS: dict[str, tuple[str, dict[str, Any]]] = {
    "RAG-CT paper-exact": ("rag-ct", {"calibrate": False}),
    "RAG-CT calibrated": ("rag-ct", {}),
    "RetrievalAnomaly (gmm)": ("rag-ct-2s", {}),
    "RetrievalAnomaly (iforest)": ("rag-ct-2s", {"model": "iforest"}),
    "ExtractionIntent": ("intent", {}),
    "BankIntent (issue 8)": ("intent", {"method": "bank"}),
    "QueryShield (union)": ("query-shield", {}),
}


def scores_of(guard: Any, results: list[RetrievalResult]) -> np.ndarray:
    if isinstance(guard, QueryShield):
        return guard.exceedances(guard.score_matrix(results)).max(axis=1)
    many = getattr(guard, "score_many", None)
    return np.asarray(many(results) if many else [guard.score(r) for r in results], dtype=np.float64)


def threshold_of(guard: Any) -> float:
    if isinstance(guard, QueryShield):
        return 0.0
    return float(getattr(guard, "threshold_", getattr(guard, "threshold", 0.5)))


def build(name: str, params: dict[str, Any], context: DefenseContext) -> Any:
    return build_defense(name, context, {name: dict(params)}).query_guards[0]


def evaluate(
    guard: Any, sets: dict[str, list[RetrievalResult]], attacks: list[str], others: list[str]
) -> dict[str, Any]:
    scores = {name: scores_of(guard, sets[name]) for name in [*BENIGN_TEST, "in-kb", *attacks, *others]}
    benign = np.concatenate([scores[name] for name in BENIGN_TEST])
    roc_threshold = threshold_at_fpr(benign, TARGET)
    own = threshold_of(guard)
    return {
        "threshold": own,
        "auroc": {a: auroc(benign, scores[a]) for a in [*attacks, *others]},
        "tpr@1_roc": {a: flag_rate(scores[a], roc_threshold) for a in [*attacks, *others]},
        "operating": {name: flag_rate(values, own) for name, values in scores.items()},
    }


def rotation(
    context: DefenseContext, sets: dict[str, list[RetrievalResult]], attacks: list[str]
) -> dict[str, dict[str, Any]]:
    """QueryShield fitted on each benign source in turn, judged on all the others."""
    sources = ["fit", *BENIGN_TEST]
    out = {}
    for source in sources:
        fitted_context = copy.copy(context)
        fitted_context.calibration = tuple(sets[source])
        shield = build("query-shield", {}, fitted_context)
        held = [s for s in sources if s != source]
        flags = {name: flag_rate(scores_of(shield, sets[name]), 0.0) for name in [*held, "in-kb", *attacks]}
        out[source] = {
            "fpr": {name: flags[name] for name in [*held, "in-kb"]},
            "min_tpr": min(flags[a] for a in attacks),
            "worst_family": min(attacks, key=lambda a: flags[a]),
        }
    return out


def overhead(guards: dict[str, Any], retriever: Retriever, texts: list[str]) -> dict[str, Any]:
    """Per-query CPU cost of each guard's check() (real, uncached embedder) against the retrieval.

    Measured with torch and FAISS on ONE thread, as CPU time: the machine is shared, so wall time
    is inflated by waiting for a core, and idle worker threads spinning would bill CPU time to
    the process. The retrieval wall median is kept.
    """
    inner = getattr(retriever.embedder, "inner", retriever.embedder)
    live = Retriever(inner, retriever.index)
    timed = {label: live_copy(guard, inner) for label, guard in guards.items()}
    retrieve_us: list[float] = []
    wall_us: list[float] = []
    check_us: dict[str, list[float]] = {label: [] for label in timed}
    with qs.single_thread():
        for text in texts:
            query = Query(text)
            started = time.perf_counter()
            retrieve_us.append(qs.cpu_time_us(lambda q=query: live.retrieve(q, 3)))
            wall_us.append((time.perf_counter() - started) * 1e6)
            result = live.retrieve(query, 3)
            for label, guard in timed.items():
                # guards that embed (intent, shield) are timed on one call; the cheap ones over 50
                repeat = 1 if isinstance(guard, BankIntent | QueryShield) else 50
                check_us[label].append(qs.cpu_time_us(lambda g=guard, r=result: g.check(r), repeat=repeat))
    base = np.array(retrieve_us)
    return {
        "queries": len(texts),
        "retrieve_us": float(np.median(base)),
        "retrieve_wall_us": float(np.median(wall_us)),
        "check_us": {label: float(np.median(v)) for label, v in check_us.items()},
        "share_of_retrieval": {label: float(np.median(np.array(v) / base)) for label, v in check_us.items()},
    }


def live_copy(guard: Any, embedder: Any) -> Any:
    """The same fitted guard, but embedding with the uncached real model (for honest timings)."""
    if isinstance(guard, ExtractionIntent | BankIntent):
        clone = copy.copy(guard)
        clone.embedder = embedder
        return clone
    if isinstance(guard, QueryShield):
        clone = copy.copy(guard)
        clone.detectors = tuple(live_copy(d, embedder) for d in guard.detectors)
        return clone
    return guard


def analyse(scenario: qs.Scenario, embedder: Any, n_overhead: int) -> dict[str, Any]:
    raw = qs.retrieve_sets(scenario, 3)
    sets = {name: qs.top_k(r, 3) for name, r in raw.items()}
    kinds = {name: s.kind for name, s in scenario.sets.items()}
    attacks = [n for n, kind in kinds.items() if kind == "attack"]
    adaptive = [n for n, kind in kinds.items() if kind == "adaptive"]
    context = DefenseContext(
        retriever=scenario.retriever, embedder=embedder, k=3, calibration=tuple(sets["fit"]), target_fpr=TARGET
    )
    guards = {label: build(name, params, context) for label, (name, params) in DETECTORS.items()}
    results = {label: evaluate(guard, sets, attacks, adaptive) for label, guard in guards.items()}
    shield = guards["QueryShield (union)"]
    components = {
        name: {
            s: flag_rate(shield.score_matrix(sets[s])[:, i], shield.thresholds_[name]) for s in [*attacks, *adaptive]
        }
        for i, name in enumerate(d.name for d in shield.detectors)
    }
    rng = np.random.default_rng(0)
    pool = [t for name in [*BENIGN_TEST, *attacks] for t in scenario.sets[name].texts]
    sample = [pool[i] for i in rng.choice(len(pool), size=min(n_overhead, len(pool)), replace=False)]
    timed = {k: v for k, v in guards.items() if k in ("RAG-CT calibrated", "RetrievalAnomaly (gmm)",
                                                      "ExtractionIntent", "QueryShield (union)")}  # fmt: skip
    return {
        "kb": scenario.kb,
        "kb_records": len(scenario.kb_texts),
        "sets": {n: {"kind": s.kind, "n": len(s.texts), "note": s.note} for n, s in scenario.sets.items()},
        "attacks": attacks,
        "adaptive": adaptive,
        "detectors": results,
        "shield_thresholds": shield.thresholds_,
        "shield_calibration_fpr": shield.calibration_fpr_,
        "shield_components_tpr": components,
        "rotation": rotation(context, sets, attacks),
        "overhead": overhead(timed, scenario.retriever, sample),
    }


MAIN = ("RAG-CT paper-exact", "RAG-CT calibrated", "RetrievalAnomaly (gmm)", "ExtractionIntent", "QueryShield (union)")


def figure(result: dict[str, Any], out_dir: Path) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = [*BENIGN_TEST, "in-kb", *result["attacks"], *result["adaptive"]]
    fig, ax = plt.subplots(figsize=(16, 4.8))
    width = 0.8 / len(MAIN)
    for i, label in enumerate(MAIN):
        values = [result["detectors"][label]["operating"][c] for c in columns]
        ax.bar(np.arange(len(columns)) + i * width, values, width, label=label)
    ax.set_xticks(np.arange(len(columns)) + 0.4 - width / 2, columns, rotation=35, ha="right", fontsize=8)
    ax.axhline(0.95, color="grey", linewidth=0.8, linestyle="--")
    ax.axhline(0.01, color="grey", linewidth=0.8, linestyle=":")
    ax.set_ylabel("flagged share at the fitted threshold")
    ax.set_title(f"{result['kb']} KB: benign sets (FPR, first 4) | attacks (TPR) | adaptive (TPR); target FPR 1%")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = out_dir / f"query_detection_{result['kb']}.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name


def goal_sentence(shield: dict[str, Any], attacks: list[str], fit_fpr: float) -> str:
    """The issue's goal judged twice: by the ROC (threshold placed at 1% FPR on the pooled unseen
    benign sets, which a deployment cannot do) and at the threshold fitted on the FIT set (what
    a deployment gets). Met only when TPR >= 0.95 on every family and, at the fitted threshold,
    every unseen benign set stays at <= 2% FPR (twice the 1% target)."""
    roc_missed = [a for a in attacks if shield["tpr@1_roc"][a] < 0.95]
    operating = shield["operating"]
    fitted_missed = [a for a in attacks if operating[a] < 0.95]
    high_fpr = [n for n in BENIGN_TEST if operating[n] > 0.02]
    roc = "met" if not roc_missed else "NOT met on " + ", ".join(roc_missed)
    if not fitted_missed and not high_fpr:
        fitted = "met"
    else:
        reasons = [f"TPR < 0.95 on {', '.join(fitted_missed)}"] if fitted_missed else []
        reasons += [f"FPR > 2% on {', '.join(high_fpr)}"] if high_fpr else []
        fitted = "NOT met (" + "; ".join(reasons) + ")"
    fprs = ", ".join(f"{n} {100 * operating[n]:.1f}%" for n in BENIGN_TEST)
    return (
        f"Goal (QueryShield TPR >= 0.95 on every family at 1% FPR on unseen benign sets): by the ROC {roc}; "
        f"at the threshold fitted on the FIT set {fitted}. Fitted-threshold FPR on unseen benign sets {fprs}; "
        f"in-kb {100 * operating['in-kb']:.1f}%; on the fit set itself {100 * fit_fpr:.2f}%."
    )


def write_report(payload: dict[str, Any], images: list[str], report: Path, results: Path) -> None:
    """docs/results/query_detection.md: tables and figure links only (no query text)."""
    f = qs.fmt
    rel = Path("..", "..", results.relative_to(qs.REPO)) if results.is_relative_to(qs.REPO) else results
    out = [
        "# Query-time detection on real data: RAG-CT, RetrievalAnomaly, ExtractionIntent, QueryShield",
        "",
        "**The `intent` guard (issue 18)** is a learned classifier shipped with an operating point: it needs no "
        "calibration. Run `ragshield calibrate YOUR_QUESTIONS.jsonl --out intent.json` (a few hundred real user "
        "questions, no attacks among them) when your users' questions differ from medical / e-mail / general "
        "questions (another domain, language or house style), or when benign users are blocked; then use "
        "`defense_params: {intent: {load: intent.json}}`. Its section comes first; the per-knowledge-base "
        "sections compare it with the retrieval-profile detectors.",
        "",
        "Generated by `benchmarks/query_detection.py` (numbers: `benchmarks/results/query_detection.json`). "
        f"Embedder `{payload['embedder']}`, FAISS, k = 3. Every detector comes from the defense registry and is "
        "fitted ONLY on the FIT set at 1% target FPR; sage / heldout / icliniq were never fitted on; `in-kb` "
        "(benign questions whose own record is in the KB) is reported apart. Query sets: "
        "`benchmarks/query_sets.py`. AUROC and TPR@1% (ROC) use the pooled benign test sets; the operating "
        "point uses each detector's own fitted threshold. Not fitted on here does not mean unseen by the learned "
        "`intent` model inside ExtractionIntent and QueryShield: it trained on other splits of the same sources, so "
        "some of these HealthcareMagic questions and Enron openings are its training or calibration rows; its "
        "figures on texts it never saw are in its own section.",
        "",
        "**Deployment advice from these numbers.** Calibrate on a sample of your own users' real questions, not "
        "on a synthetic question set, and check the table 'fitted on each benign source': fitted on questions "
        "of another kind than your users', the union's threshold does not transfer (on Enron, fitted on SAGE or "
        "iCliniq questions, it flags 10-14% of held-out e-mails; before issue 18, with the GMM part on and the "
        "bank-similarity intent, fitted on GenMedGPT it flagged 64.6% of SAGE questions on HealthcareMagic). "
        "Benign questions about a record that IS in the "
        "knowledge base (`in-kb`) look like targeted extraction to RAG-CT's one-sided rule (one record "
        "dominates the retrieval) and are blocked at "
        "any calibration on HealthcareMagic; where such users are expected, leave `rag-ct` out of the shield "
        "(`defense_params: {query-shield: {components: [intent]}}`) and rely on `intent` plus the canary path.",
    ]
    if payload.get("generalisation"):
        out += ["", *intent_report.report(payload["generalisation"])]
    for sc in payload["scenarios"]:
        attacks, adaptive = sc["attacks"], sc["adaptive"]
        det = sc["detectors"]
        out += ["", f"## {sc['kb']} ({sc['kb_records']} records)", ""]
        if "BankIntent (issue 8)" not in sc["detectors"]:
            out += [
                "_Measured before issue 18: `ExtractionIntent` rows here are the bank-similarity guard (now "
                "`intent` with `method: bank`), fitted on the FIT set; `QueryShield` included the GMM part. "
                "Rerun with `--section scenarios` for the learned model._",
                "",
            ]
        out.append(qs.markdown_table(["set", "kind", "n", "what"], [
            [n, v["kind"], v["n"], v["note"]] for n, v in sc["sets"].items()
        ]))  # fmt: skip
        for key, title in (("auroc", "AUROC"), ("tpr@1_roc", "TPR at 1% FPR (threshold set on the benign test sets)")):
            out += ["", f"**{title}**", ""]
            out.append(qs.markdown_table(["detector", *attacks], [
                [label, *(f(v[key][a]) for a in attacks)] for label, v in det.items()
            ]))  # fmt: skip
        names = [*BENIGN_TEST, "in-kb", *attacks]
        out += ["", "**Operating point** (fitted threshold; FPR on the benign sets, TPR on the attacks)", ""]
        out.append(qs.markdown_table(["detector", *(f"FPR {n}" if i < 4 else n for i, n in enumerate(names))], [
            [label, *(f(v["operating"][n]) for n in names)] for label, v in det.items()
        ]))  # fmt: skip
        out += ["", goal_sentence(det["QueryShield (union)"], attacks, sc["shield_calibration_fpr"])]
        out += [
            "",
            "**Adaptive attacks** (TPR at the fitted thresholds; paraphrases avoid every content word of "
            "the instruction bank and match none of its patterns; padded = benign text in front)",
            "",
        ]
        out.append(qs.markdown_table(["detector", *adaptive], [
            [label, *(f(v["operating"][a]) for a in adaptive)] for label, v in det.items()
        ]))  # fmt: skip
        comp = sc["shield_components_tpr"]
        out += ["", "**Which QueryShield part fires** (share flagged by each part at the joint thresholds)", ""]
        out.append(qs.markdown_table(["part", *attacks, *adaptive], [
            [name, *(f(v[s]) for s in [*attacks, *adaptive])] for name, v in comp.items()
        ]))  # fmt: skip
        rot = sc["rotation"]
        out += [
            "",
            "**QueryShield fitted on each benign source, judged on the others** (FPR; min TPR over attacks)",
            "",
        ]
        held = ["fit", *BENIGN_TEST, "in-kb"]
        out.append(qs.markdown_table(["fitted on", *(f"FPR {n}" for n in held), "min TPR", "worst family"], [
            [src, *(f(v["fpr"].get(n)) for n in held), f(v["min_tpr"]), v["worst_family"]] for src, v in rot.items()
        ]))  # fmt: skip
        o = sc["overhead"]
        out += [
            "",
            f"**Overhead per query** (median over {o['queries']} queries, real uncached embedder; single-thread "
            f"CPU time (torch and FAISS on one thread); retrieval = embed + FAISS = "
            f"{f(o['retrieve_us'] / 1000, 2)} ms CPU, "
            f"{f(o['retrieve_wall_us'] / 1000, 1)} ms wall on the shared machine)",
            "",
        ]
        out.append(qs.markdown_table(["detector", "check()", "share of retrieval"], [
            [label, f"{f(us, 1)} us", f"{f(100 * o['share_of_retrieval'][label], 2)}%"]
            for label, us in o["check_us"].items()
        ]))  # fmt: skip
        failures = [
            f"{label}: {', '.join(a for a in [*attacks, *adaptive] if v['operating'][a] < 0.5)}"
            for label, v in det.items()
            if any(v["operating"][a] < 0.5 for a in [*attacks, *adaptive])
        ]
        out += ["", "**Where each detector fails** (TPR < 0.5 at its fitted threshold):", ""]
        out += [f"- {line}" for line in failures] or ["- none"]
        out += [""] + [f"![{name}]({rel / name})" for name in images if sc["kb"] in name]
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text("\n".join(out) + "\n", encoding="utf-8")


def _with_diagnostics(payload: dict[str, Any], results: Path) -> None:
    """Put the intent diagnostics' own results, as their scripts last wrote them, into the
    generalisation section: benchmarks/intent_enron_format.py, benchmarks/intent_encoded.py,
    benchmarks/intent_e5_refit.py (the shipped raise's cost, measured with the files as they ship)."""
    if not payload.get("generalisation"):
        return
    diagnostics = {"enron_grid_format": "intent_enron_format.json", "encoded": "intent_encoded.json"}
    for key, name in (diagnostics | {"raise": "intent_e5_refit.json"}).items():
        if (path := results / name).is_file():
            payload["generalisation"][key] = json.loads(path.read_text(encoding="utf-8"))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=qs.DEFAULT_DATA, help="shared data folder")
    parser.add_argument("--cache", type=Path, default=qs.DEFAULT_CACHE, help="index / embedding cache (ignored by git)")
    parser.add_argument("--kb", action="append", choices=("healthcaremagic", "enron"), help="knowledge base(s)")
    parser.add_argument("--overhead-queries", type=int, default=100)
    parser.add_argument("--results", type=Path, default=qs.REPO / "benchmarks" / "results")
    parser.add_argument("--report", type=Path, default=qs.REPO / "docs" / "results" / "query_detection.md")
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="rebuild the report from the results JSON (refreshing the intent diagnostics' results in it, "
        "and with --loo-from adding leave-one-out runs of the shipped recipe)",
    )
    parser.add_argument("--section", choices=("generalisation", "scenarios", "all"), default="all")
    parser.add_argument(
        "--loo", choices=("all", "languages", "styles", "none"), default="all", help="leave-one-out retraining (slow)"
    )
    parser.add_argument(
        "--loo-from", type=Path, nargs="*", default=[], help="leave-one-out results of intent_generalisation.py"
    )
    parser.add_argument("--intent-model", type=Path, help="judge this intent model instead of the shipped one")
    parser.add_argument(
        "--extra-loo", type=Path, nargs="*", default=[], help="leave-one-out of ANOTHER recipe, shown under its title"
    )
    parser.add_argument("--compare-with", type=Path, help="another model's generalisation payload (JSON)")
    parser.add_argument("--compare-label", default="other model", help="column title of --compare-with")
    args = parser.parse_args(argv)
    if args.report_only:
        payload = json.loads((args.results / "query_detection.json").read_text(encoding="utf-8"))
        ig.with_loo_files(payload["generalisation"], tuple(args.loo_from))
        _with_diagnostics(payload, args.results)
        qs.write_json(args.results / "query_detection.json", payload)
        images = [f"query_detection_{sc['kb']}.png" for sc in payload["scenarios"]]
        write_report(payload, images, args.report, args.results)
        print(f"wrote {args.report}")
        return
    payload: dict[str, Any] = {"benchmark": "query_detection", "embedder": "all-MiniLM-L6-v2", "scenarios": []}
    if args.section in ("generalisation", "all"):
        payload["generalisation"] = ig.run(
            args.data,
            n_cost=args.overhead_queries,
            loo=args.loo,
            model_path=args.intent_model,
            loo_files=tuple(args.loo_from),
        )
        if args.compare_with:
            other = json.loads(args.compare_with.read_text(encoding="utf-8"))
            payload["generalisation"]["compare"] = {"label": args.compare_label, "generalisation": other}
        payload["generalisation"]["extra_loo"] = [json.loads(p.read_text(encoding="utf-8")) for p in args.extra_loo]
    if args.section in ("scenarios", "all"):
        scenarios, embedder = qs.load_scenarios(args.data, args.cache, tuple(args.kb or ("healthcaremagic", "enron")))
        payload["embedder"] = embedder.name
        for scenario in scenarios:
            result = analyse(scenario, embedder, args.overhead_queries)
            embedder.save()
            figure(result, args.results)
            payload["scenarios"].append(result)
            print(f"{scenario.kb}: done", flush=True)
    previous = args.results / "query_detection.json"
    if "generalisation" not in payload and previous.exists():
        kept = json.loads(previous.read_text(encoding="utf-8")).get("generalisation")
        payload.update({"generalisation": kept} if kept else {})
    _with_diagnostics(payload, args.results)
    payload = qs.merge_scenarios(previous, payload)
    qs.write_json(args.results / "query_detection.json", payload)
    images = [f"query_detection_{sc['kb']}.png" for sc in payload["scenarios"]]
    write_report(payload, images, args.report, args.results)
    print(f"wrote {args.results / 'query_detection.json'} and {args.report}")


if __name__ == "__main__":
    main()

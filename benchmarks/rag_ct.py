"""RAG-CT on real data (issue 3): ablations, paper-exact vs calibrated, k, tau, Fig. 3, overhead.

    nice .venv/bin/python benchmarks/rag_ct.py [--data ../shared/data] [--kb healthcaremagic --kb enron]

Knowledge bases, benign and attack query sets: see `benchmarks/query_sets.py`. Real MiniLM
embeddings and FAISS retrieval; no generation (RAG-CT decides before it). Writes
`benchmarks/results/rag_ct.json`, PNG figures next to it, and `docs/results/rag_ct.md`.

Metrics (attacks = positives, scores higher = more suspicious):
* AUROC against the pooled benign TEST queries (sage + heldout + icliniq; never fitted on);
* TPR@1% / TPR@5%: attack share at the threshold `threshold_at_fpr(benign test scores, f)`
  (the detector's best case at that FPR on this data);
* operating point: the detector's own threshold (paper tau = 0.5, or `threshold_` fitted on the
  FIT set at 1%) with the FPR it really has on each benign test set.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np

import query_sets as qs  # benchmarks/ is on sys.path when this file is run as a script
from ragshield.calibration import flag_rate, threshold_at_fpr
from ragshield.guards.rag_ct import RagCT
from ragshield.metrics.detection import auroc
from ragshield.rag.retriever import Retriever
from ragshield.types import Query, RetrievalResult

BENIGN_TEST = ("sage", "heldout", "icliniq")
KS = (2, 3, 5, 10)
TAUS = tuple(round(t, 2) for t in np.arange(0.0, 1.0001, 0.05))


def rates(detector: RagCT, benign: np.ndarray, attacks: dict[str, list[RetrievalResult]]) -> dict[str, Any]:
    """AUROC, TPR@1% and TPR@5% (thresholds on the pooled benign test scores) per attack family."""
    out = {}
    for name, results in attacks.items():
        scores = detector.score_many(results)
        out[name] = {
            "auroc": auroc(benign, scores),
            "tpr@1": flag_rate(scores, threshold_at_fpr(benign, 0.01)),
            "tpr@5": flag_rate(scores, threshold_at_fpr(benign, 0.05)),
        }
    return out


def operating_point(detector: RagCT, sets: dict[str, list[RetrievalResult]], names: list[str]) -> dict[str, float]:
    """Flag rate of each set at the detector's own threshold (FPR on benign, TPR on attacks)."""
    return {name: flag_rate(detector.score_many(sets[name]), detector.threshold) for name in names}


def variants(
    fit: list[RetrievalResult], labelled: tuple[list[RetrievalResult], list[bool]], k: int
) -> dict[str, RagCT]:
    """Paper-exact modes, and calibrated ones (margin range + threshold on the FIT set at 1%)."""
    out: dict[str, RagCT] = {f"paper {m}": RagCT(k=k, mode=m) for m in ("combined", "entropy", "margin")}  # type: ignore[misc]
    out["calibrated combined, T=1"] = RagCT(k=k).fit(fit, 0.01)
    out["calibrated combined, T fitted"] = RagCT(k=k).fit(fit, 0.01, fit_temperature=True, labelled=labelled)
    out["calibrated entropy, T fitted"] = RagCT(k=k, mode="entropy").fit(
        fit, 0.01, fit_temperature=True, labelled=labelled
    )
    out["calibrated margin"] = RagCT(k=k, mode="margin").fit(fit, 0.01)
    return out


def premise(sets: dict[str, list[RetrievalResult]], benign: list[RetrievalResult], t_fit: float) -> dict[str, Any]:
    """Median profile numbers per set and the AUROC of 'large margin' / 'low top-1' as attack signals."""

    def arrays(results: list[RetrievalResult]) -> dict[str, np.ndarray]:
        sims = np.array([r.similarities[:3] for r in results])
        return {
            "top1": sims[:, 0],
            "margin": sims[:, 0] - sims[:, 1],
            "entropy_t1": RagCT(mode="entropy").score_many(results),
            "entropy_tfit": RagCT(mode="entropy", temperature=t_fit).score_many(results),
        }

    base = arrays(benign)
    out = {}
    for name, results in sets.items():
        values = arrays(results)
        out[name] = {
            "n": len(results),
            "median_top1": float(np.median(values["top1"])),
            "median_margin": float(np.median(values["margin"])),
            "median_H_T1": float(1 - np.median(values["entropy_t1"])),
            "median_H_Tfit": float(1 - np.median(values["entropy_tfit"])),
            "auroc_margin_high": auroc(base["margin"], values["margin"]),
            "auroc_top1_low": auroc(-base["top1"], -values["top1"]),
        }
    return out


def overhead(retriever: Retriever, texts: list[str], k: int) -> dict[str, float]:
    """Per-query cost of RAG-CT scoring against the retrieval of the same query (real, uncached model).

    Measured with torch and FAISS on ONE thread, as CPU time: the machine is shared, so wall time
    of a model call is inflated by waiting for a core, and idle worker threads spinning would bill
    CPU time to the process. Wall times are kept too.
    """
    inner = getattr(retriever.embedder, "inner", retriever.embedder)
    live = Retriever(inner, retriever.index)
    detector = RagCT(k=k)
    cpu: dict[str, list[float]] = {"retrieve": [], "search": [], "score": [], "check": []}
    wall: dict[str, list[float]] = {"retrieve": [], "score": []}
    with qs.single_thread():
        for text in texts:
            query = Query(text)
            started = time.perf_counter()
            cpu["retrieve"].append(qs.cpu_time_us(lambda q=query: live.retrieve(q, k)))
            wall["retrieve"].append((time.perf_counter() - started) * 1e6)
            result = live.retrieve(query, k)
            vector = retriever.embedder.embed([text])[0]  # the same vector, from the cache
            cpu["search"].append(qs.cpu_time_us(lambda v=vector: live.index.search(v, k), repeat=20))
            sims = result.similarities
            cpu["score"].append(qs.cpu_time_us(lambda s=sims: detector.score_similarities(s), repeat=200))
            cpu["check"].append(qs.cpu_time_us(lambda r=result: detector.check(r), repeat=200))
            wall["score"].append(qs.median_time_us(lambda s=sims: detector.score_similarities(s), repeat=50))
    base = np.array(cpu["retrieve"])
    return {
        "queries": len(texts),
        "score_similarities_cpu_us": float(np.median(cpu["score"])),
        "check_cpu_us": float(np.median(cpu["check"])),
        "retrieve_cpu_us": float(np.median(base)),
        "faiss_search_cpu_us": float(np.median(cpu["search"])),
        "score_share_of_retrieval": float(np.median(np.array(cpu["score"]) / base)),
        "check_share_of_retrieval": float(np.median(np.array(cpu["check"]) / base)),
        "score_share_of_search": float(np.median(np.array(cpu["score"]) / np.array(cpu["search"]))),
        "score_similarities_wall_us": float(np.median(wall["score"])),
        "retrieve_wall_us": float(np.median(wall["retrieve"])),
    }


def analyse(scenario: qs.Scenario, results: dict[str, list[RetrievalResult]], n_overhead: int) -> dict[str, Any]:
    kinds = {name: s.kind for name, s in scenario.sets.items()}
    attacks = [n for n, kind in kinds.items() if kind == "attack"]
    at_k = {k: {name: qs.top_k(r, k) for name, r in results.items()} for k in KS}
    sets3 = at_k[3]
    labelled = (
        sets3["fit"] + sets3["calib-attacks"],
        [False] * len(sets3["fit"]) + [True] * len(sets3["calib-attacks"]),
    )
    benign_test3 = [r for name in BENIGN_TEST for r in sets3[name]]
    detectors = variants(sets3["fit"], labelled, 3)
    table = {}
    for label, detector in detectors.items():
        benign_scores = detector.score_many(benign_test3)
        table[label] = {
            "temperature": detector.temperature_ if detector.fitted else detector.temperature,
            "threshold": detector.threshold,
            "families": rates(detector, benign_scores, {a: sets3[a] for a in attacks}),
            "operating": operating_point(detector, sets3, [*BENIGN_TEST, "in-kb", *attacks]),
        }
    t_fit = detectors["calibrated combined, T fitted"].temperature_
    t_entropy = detectors["calibrated entropy, T fitted"].temperature_
    k_sweep = {}
    for k in KS:
        benign_k = [r for name in BENIGN_TEST for r in at_k[k][name]]
        labelled_k = (at_k[k]["fit"] + at_k[k]["calib-attacks"], labelled[1])
        pair = {
            "paper combined": RagCT(k=k),
            "calibrated combined, T fitted": RagCT(k=k).fit(
                at_k[k]["fit"], 0.01, fit_temperature=True, labelled=labelled_k
            ),
        }
        k_sweep[str(k)] = {
            label: {a: auroc(d.score_many(benign_k), d.score_many(at_k[k][a])) for a in attacks}
            for label, d in pair.items()
        }
    paper = RagCT(k=3)
    tau_sweep = {
        name: {str(tau): flag_rate(paper.score_many(sets3[name]), tau) for tau in TAUS}
        for name in [*BENIGN_TEST, "in-kb", *attacks]
    }
    uniform = RagCT(mode="entropy").score_many(benign_test3)  # 1 - H^ at T = 1
    temperature_demo = {
        "benign_H_T1": {
            "min": float(1 - uniform.max()),
            "median": float(1 - np.median(uniform)),
            "max": float(1 - uniform.min()),
        },
        "share_benign_H_above_0.99_at_T1": float(np.mean(1 - uniform > 0.99)),
        "fitted_T": t_fit,
        "fitted_T_entropy_only": t_entropy,
        "auroc_by_T": {
            str(t): {
                a: auroc(
                    RagCT(temperature=t).fit(sets3["fit"], 0.01).score_many(benign_test3),
                    RagCT(temperature=t).fit(sets3["fit"], 0.01).score_many(sets3[a]),
                )
                for a in attacks
            }
            for t in (1.0, 0.1, 0.03, 0.01, t_fit)
        },
    }
    rng = np.random.default_rng(0)
    pool = [t for name in [*BENIGN_TEST, *attacks] for t in scenario.sets[name].texts]
    sample = [pool[i] for i in rng.choice(len(pool), size=min(n_overhead, len(pool)), replace=False)]
    return {
        "kb": scenario.kb,
        "kb_records": len(scenario.kb_texts),
        "sets": {n: {"kind": s.kind, "n": len(s.texts), "note": s.note} for n, s in scenario.sets.items()},
        "attacks": attacks,
        "variants": table,
        "k_sweep": k_sweep,
        "tau_sweep": tau_sweep,
        "temperature": temperature_demo,
        "premise": premise({n: sets3[n] for n in [*BENIGN_TEST, "in-kb", *attacks]}, benign_test3, t_entropy),
        "overhead": overhead(scenario.retriever, sample, 3),
    }


def figures(result: dict[str, Any], results: dict[str, list[RetrievalResult]], out_dir: Path) -> list[str]:
    """Fig. 3 style histograms (benign vs each attack family) and the tau sweep, as PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kb = result["kb"]
    sets3 = {name: qs.top_k(r, 3) for name, r in results.items()}
    benign = [r for name in BENIGN_TEST for r in sets3[name]]
    t_fit = result["temperature"]["fitted_T_entropy_only"]
    panels = [
        ("normalised entropy H^ (T = 1, paper)", lambda rs: 1 - RagCT(mode="entropy").score_many(rs)),
        (
            f"normalised entropy H^ (T = {t_fit:.3g}, fitted for entropy-only)",
            lambda rs: 1 - RagCT(mode="entropy", temperature=t_fit).score_many(rs),
        ),
        ("margin s(1) - s(2)", lambda rs: RagCT(mode="margin").score_many(rs)),
        ("anomaly score A (paper-exact)", lambda rs: RagCT().score_many(rs)),
    ]
    fig, axes = plt.subplots(1, 4, figsize=(20, 4.2))
    for ax, (title, score) in zip(axes, panels, strict=True):
        values = {"benign (test)": score(benign), "benign, own record in KB": score(sets3["in-kb"])}
        values.update({a: score(sets3[a]) for a in result["attacks"]})
        lo = min(float(v.min()) for v in values.values())
        hi = max(float(v.max()) for v in values.values())
        bins = np.linspace(lo, hi if hi > lo else lo + 1e-6, 40)
        for label, v in values.items():
            style = {"linewidth": 2.5, "color": "black"} if label == "benign (test)" else {"linewidth": 1.2}
            ax.hist(v, bins=bins, density=True, histtype="step", label=label, **style)
        ax.set_title(title, fontsize=10)
    axes[0].legend(fontsize=7)
    fig.suptitle(f"RAG-CT score distributions, {kb} KB, k = 3 (benign vs malicious; cf. the paper's Fig. 3)")
    fig.tight_layout()
    hist = out_dir / f"rag_ct_hist_{kb}.png"
    fig.savefig(hist, dpi=110)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, curve in result["tau_sweep"].items():
        benign_set = name in BENIGN_TEST or name == "in-kb"
        ax.plot(TAUS, [curve[str(t)] for t in TAUS], linestyle="--" if benign_set else "-", label=name)
    ax.axvline(0.5, color="grey", linewidth=0.8)
    ax.set_xlabel("tau (paper-exact RAG-CT, k = 3)")
    ax.set_ylabel("flagged share (dashed: benign = FPR, solid: attacks = TPR)")
    ax.legend(fontsize=7)
    ax.set_title(f"tau sweep, {kb} KB")
    fig.tight_layout()
    sweep = out_dir / f"rag_ct_tau_{kb}.png"
    fig.savefig(sweep, dpi=110)
    plt.close(fig)
    return [hist.name, sweep.name]


def premise_verdict(auc: float) -> str:
    if auc >= 0.75:
        return "holds"
    if auc <= 0.4:
        return "inverted"
    return "weak"


def write_report(payload: dict[str, Any], images: list[str], report: Path, results: Path) -> None:
    """docs/results/rag_ct.md: tables and figure links only (no query text)."""
    f = qs.fmt
    rel = Path("..", "..", results.relative_to(qs.REPO)) if results.is_relative_to(qs.REPO) else results
    out = [
        "# RAG-CT on real data",
        "",
        "Generated by `benchmarks/rag_ct.py` (numbers: `benchmarks/results/rag_ct.json`). Embedder "
        f"`{payload['embedder']}`, FAISS exact inner product, one record per chunk, k = 3 unless stated. "
        "Attacks are positives; AUROC and TPR@x% use the pooled benign TEST sets (sage + heldout + icliniq, "
        "never fitted on); calibrated variants are fitted on the FIT set only (its own benign source). "
        "`in-kb` = benign questions whose own record is in the knowledge base (reported apart). "
        "Query sets: `benchmarks/query_sets.py`.",
    ]
    for sc in payload["scenarios"]:
        attacks = sc["attacks"]
        out += ["", f"## {sc['kb']} ({sc['kb_records']} records)", ""]
        out.append(
            qs.markdown_table(
                ["set", "kind", "n", "what"], [[n, v["kind"], v["n"], v["note"]] for n, v in sc["sets"].items()]
            )
        )
        for metric, title in (("auroc", "AUROC"), ("tpr@1", "TPR at 1% FPR"), ("tpr@5", "TPR at 5% FPR")):
            out += ["", f"**{title}** (ablation: combined / entropy-only / margin-only; paper-exact vs calibrated)", ""]
            out.append(
                qs.markdown_table(
                    ["variant", "T", *attacks],
                    [
                        [label, f(v["temperature"], 3), *(f(v["families"][a][metric]) for a in attacks)]
                        for label, v in sc["variants"].items()
                    ],
                )
            )
        names = [*BENIGN_TEST, "in-kb", *attacks]
        out += [
            "",
            "**Operating points** (flagged share at the detector's own threshold: FPR on benign sets, "
            "TPR on attacks; paper = tau 0.5, calibrated = threshold fitted at 1% FPR on the FIT set)",
            "",
        ]
        out.append(
            qs.markdown_table(
                ["variant", "threshold", *names],
                [
                    [label, f(v["threshold"], 3), *(f(v["operating"][n]) for n in names)]
                    for label, v in sc["variants"].items()
                    if label
                    in ("paper combined", "paper margin", "calibrated combined, T=1", "calibrated combined, T fitted")
                ],
            )
        )
        out += ["", "**k sweep** (AUROC; the margin uses only s(1), s(2), so only the entropy term changes with k)", ""]
        out.append(
            qs.markdown_table(
                ["k", "variant", *attacks],
                [
                    [k, label, *(f(v[a]) for a in attacks)]
                    for k, pair in sc["k_sweep"].items()
                    for label, v in pair.items()
                ],
            )
        )
        shown = ("0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7")
        out += ["", "**tau sweep** (paper-exact combined; flagged share)", ""]
        out.append(
            qs.markdown_table(
                ["set", *(f"tau {t}" for t in shown)],
                [[name, *(f(curve[t]) for t in shown)] for name, curve in sc["tau_sweep"].items()],
            )
        )
        temp = sc["temperature"]
        out += [
            "",
            "**Temperature.** With T = 1 the softmax of cosine scores is nearly uniform: benign H^ ranges "
            f"{f(temp['benign_H_T1']['min'], 4)} to {f(temp['benign_H_T1']['max'], 4)} (median "
            f"{f(temp['benign_H_T1']['median'], 4)}); {f(100 * temp['share_benign_H_above_0.99_at_T1'], 1)}% of "
            f"benign queries have H^ > 0.99. Fitted T = {f(temp['fitted_T'], 4)} for the combined score and "
            f"{f(temp['fitted_T_entropy_only'], 4)} for entropy-only (chosen on the labelled "
            "calibration set: FIT benign + TGTB-wikitext and RAG-Thief head-anchor queries, disjoint from the "
            "test attacks). AUROC of the calibrated combined score by T:",
            "",
        ]
        out.append(
            qs.markdown_table(
                ["T", *attacks], [[f(float(t), 4), *(f(v[a]) for a in attacks)] for t, v in temp["auroc_by_T"].items()]
            )
        )
        out += [
            "",
            "**The paper's premise** (malicious queries concentrate on one record: large margin, low "
            "entropy). AUROC of 'large margin = attack' and of 'low top-1 = attack' against the benign test "
            "queries; 'holds' when the margin AUROC >= 0.75, 'inverted' when <= 0.40.",
            "",
        ]
        out.append(
            qs.markdown_table(
                [
                    "set",
                    "n",
                    "median top-1",
                    "median margin",
                    "median H^ (T=1)",
                    "median H^ (T entropy-fitted)",
                    "AUROC margin high",
                    "AUROC top-1 low",
                    "premise",
                ],
                [
                    [
                        n,
                        p["n"],
                        f(p["median_top1"], 3),
                        f(p["median_margin"], 3),
                        f(p["median_H_T1"], 4),
                        f(p["median_H_Tfit"], 4),
                        f(p["auroc_margin_high"]),
                        f(p["auroc_top1_low"]),
                        premise_verdict(p["auroc_margin_high"]) if n in attacks else "(benign)",
                    ]
                    for n, p in sc["premise"].items()
                ],
            )
        )
        o = sc["overhead"]
        out += [
            "",
            f"**Overhead** (median over {o['queries']} queries; single-thread CPU time, torch and FAISS on one "
            "thread, because the machine was shared by other jobs; wall medians: score "
            f"{f(o['score_similarities_wall_us'], 1)} us, retrieval {f(o['retrieve_wall_us'] / 1000, 1)} ms)",
            "",
        ]
        out.append(qs.markdown_table(
            ["score_similarities", "check() (verdict)", "retrieval (embed + search)", "FAISS search only",
             "score / retrieval", "check / retrieval", "score / FAISS search"],
            [[f"{f(o['score_similarities_cpu_us'], 1)} us", f"{f(o['check_cpu_us'], 1)} us",
              f"{f(o['retrieve_cpu_us'] / 1000, 2)} ms", f"{f(o['faiss_search_cpu_us'], 1)} us",
              f"{f(100 * o['score_share_of_retrieval'], 3)}%", f"{f(100 * o['check_share_of_retrieval'], 3)}%",
              f"{f(100 * o['score_share_of_search'], 1)}%"]],
        ))  # fmt: skip
        out += [""] + [f"![{name}]({rel / name})" for name in images if sc["kb"] in name]
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text("\n".join(out) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=qs.DEFAULT_DATA, help="shared data folder")
    parser.add_argument("--cache", type=Path, default=qs.DEFAULT_CACHE, help="index / embedding cache (ignored by git)")
    parser.add_argument("--kb", action="append", choices=("healthcaremagic", "enron"), help="knowledge base(s)")
    parser.add_argument("--overhead-queries", type=int, default=150)
    parser.add_argument("--results", type=Path, default=qs.REPO / "benchmarks" / "results")
    parser.add_argument("--report", type=Path, default=qs.REPO / "docs" / "results" / "rag_ct.md")
    args = parser.parse_args(argv)
    scenarios, embedder = qs.load_scenarios(args.data, args.cache, tuple(args.kb or ("healthcaremagic", "enron")))
    payload: dict[str, Any] = {"benchmark": "rag_ct", "embedder": embedder.name, "scenarios": []}
    images: list[str] = []
    for scenario in scenarios:
        results = qs.retrieve_sets(scenario, max(KS))
        embedder.save()
        result = analyse(scenario, results, args.overhead_queries)
        images += figures(result, results, args.results)
        payload["scenarios"].append(result)
        print(f"{scenario.kb}: done", flush=True)
    payload = qs.merge_scenarios(args.results / "rag_ct.json", payload)
    qs.write_json(args.results / "rag_ct.json", payload)
    images = [f"rag_ct_{kind}_{sc['kb']}.png" for sc in payload["scenarios"] for kind in ("hist", "tau")]
    write_report(payload, images, args.report, args.results)
    print(f"wrote {args.results / 'rag_ct.json'} and {args.report}")


if __name__ == "__main__":
    main()

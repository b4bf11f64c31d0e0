"""One reading of a blind held-apart set by the shipped `intent` guard, with and without its second
opinion, and by candidate guards (issue 18).

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_veto_judge.py --set NEW_SET
    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_veto_judge.py --set v16 --again --candidate DIR

The second opinion (`ragshield.guards.intent_veto`) was fitted on a first stage's training rows and flags
(MiniLM on v11's, e5 on v12's since session 32), its lines chosen on the development sets
(`intent_verifier.DEVELOPMENT`); this reads a set written blind
before it existed, through the guard as a user runs it (`ExtractionIntent`, the model's own operating
point, no calibration), once. Writes `benchmarks/results/intent_veto_judge_<set>.json` (rates with 95%
intervals, per style and language, and which rows each configuration gets wrong: indices, no text) and
prints a table. The set's rows are the project's own (`benchmarks/data/README.md`).
`--candidate DIR` (repeatable) reads the set once more per folder in the same run, with the veto
files in DIR (`intent_veto_minilm.npz`, `intent_veto_e5.npz`) in place of the packaged ones, so that
refitted second opinions and the shipped one are judged by the same single reading. A DIR may
instead (or also) hold a first-stage model, `intent_model.json` (from `train_intent.py --out`): the
guard then reads with that model at its own operating point, and with DIR's veto files if it has
them, else the packaged ones (configuration "candidate model DIR + second opinion"; the model alone is
not read). The second opinion reads only flags of the model version its weights were fitted for, so a
candidate whose `model_version` differs from its veto files' is refused rather than read without one. Since
session 57 the shipped guard's "+ second opinion" reading includes its packaged vector raise
(`ragshield.guards.intent_vector_raise`; results of earlier sessions read it without one); a DIR may hold its own
head, `intent_vector_raise.json` (configuration "... + vector raise DIR"), read in place of the packaged one and
refused up front if it does not fit the model it reads; a candidate first stage without one reads with none.
`--set` names a set of `intent_sets.HELDOUT_SETS` or `intent_sets.UNREAD_JUDGES` that neither the shipped model nor a
candidate trained on (such as v16 or chat3). Rows
whose text (`intent_sets.text_key`) is a training or calibration row of the shipped model or of a candidate
model (the held-apart sets it trained on), or a contrastive pair of the verifiers, are left out of
every configuration and counted: written independently, "thanks" or a well-known list question can be
the same text, and a judge must not score what was fitted on. `--again` reads a set already read
(written to `..._<set>_again.json`, marked not blind); `--out` names the results file, and only with
`--again`, so that a blind reading always lands where the read-once check looks.
"""

from __future__ import annotations

import argparse
import functools
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

import intent_generalisation as ig
import intent_sets as isets
import query_sets as qs
import train_intent as ti
from ragshield.errors import ConfigError
from ragshield.guards.intent import ExtractionIntent
from ragshield.guards.intent_model import IntentModel
from ragshield.guards.intent_vector_raise import FILE_NAME, VectorRaise, resolve_head, shipped_vector_raise
from ragshield.guards.intent_veto import IntentVeto, shipped_weights, weights_file_name
from ragshield.guards.intent_veto_weights import ENCODERS, VetoWeights
from ragshield.rag.embedding import make_embedder

FIRST_STAGE_FILE = "intent_model.json"  # a candidate folder's first-stage model, as `train_intent.py` writes it
VECTOR_FILE = FILE_NAME  # a candidate folder's vector raise, as `intent_vector_raise.py` writes it


def shipped_version() -> str:
    """The packaged first stage's `model_version` (such as "v12"): the results name the shipped guard by it."""
    return str(IntentModel.load().meta.get("model_version"))


def shipped_configurations() -> dict[str, bool]:
    """The shipped guard's two readings, named by its version: without and with its second opinion."""
    return {f"{shipped_version()} alone": False, f"{shipped_version()} + second opinion": True}


def unseen_rows(
    examples: list[isets.Example],
    data: Path,
    also_trained: tuple[str, ...] = (),
    requests_trained: tuple[str, ...] = (),
    request_languages: str = "all",
) -> list[int]:
    """Indices of the `examples` the guard was not fitted on (the shipped model's rows, the rows of the held-apart
    sets `also_trained` and the requests of `requests_trained` (of `request_languages`, as `build_corpus` reads
    it) that a candidate model trained on, the verifiers' pairs)."""
    fitted = fitted_rows(
        data,
        tuple(dict.fromkeys([*ti.TRAIN_HELDOUT, *also_trained])),
        tuple(v for v in dict.fromkeys(requests_trained) if v not in also_trained),
        request_languages,
    )
    kept = {id(e) for e in isets.unseen(examples, fitted)}
    return [i for i, e in enumerate(examples) if id(e) in kept]


@functools.lru_cache(maxsize=4)
def fitted_rows(
    data: Path, heldout_sets: tuple[str, ...], request_sets: tuple[str, ...], request_languages: str
) -> isets.Corpus:
    """The training and calibration rows of a model built with these held-apart sets, plus the verifiers'
    pairs (`unseen_rows`); kept for the process, since a run that reads many sets builds the corpus once."""
    import intent_verifier_rows as ivr

    corpus = ti.build_corpus(
        data, heldout_sets=heldout_sets, request_sets=request_sets, request_languages=request_languages
    )
    pairs = [e for part in ivr.contrastive_pairs() for e in part]
    return isets.Corpus(train=corpus.train + pairs, calib=corpus.calib)


def judge(
    examples: list[isets.Example], candidates: tuple[Path, ...] = (), rows: list[int] | None = None
) -> dict[str, Any]:
    """Each configuration's rates on `examples`; `rows`: their line numbers in the set's file (for `wrong_rows`)."""
    rows = list(range(len(examples))) if rows is None else rows
    texts = [e.text for e in examples]
    labels = np.array([e.label for e in examples])
    embedder = make_embedder("all-MiniLM-L6-v2")
    out: dict[str, Any] = {"n": len(examples), "configurations": {}}
    configurations: dict[str, bool | Path] = dict(shipped_configurations())
    for candidate in candidates:
        configurations[configuration_name(candidate)] = candidate
    for name, second_opinion in configurations.items():
        model = first_stage(second_opinion) if isinstance(second_opinion, Path) else None
        guard = ExtractionIntent(
            embedder=embedder,
            model=model,
            second_opinion=bool(second_opinion),
            vector_raise=head_setting(second_opinion),
        )
        if isinstance(second_opinion, Path) and has_veto_files(second_opinion):
            guard.veto_ = IntentVeto({e: second_opinion / weights_file_name(e) for e in ENCODERS})
        started = time.perf_counter()
        scores = guard.scores(texts)
        seconds = time.perf_counter() - started
        flagged = np.array([s.probability >= guard.threshold_ for s in scores])
        wrong = [i for i in range(len(texts)) if flagged[i] != bool(labels[i])]
        row: dict[str, Any] = {
            "seconds": round(seconds, 1),
            "benign_flagged": ig.rate(flagged[labels == 0].astype(float), 0.5),
            "requests_caught": ig.rate(flagged[labels == 1].astype(float), 0.5),
            "second_opinion": {
                state: sum(s.second_opinion == state for s in scores) for state in {s.second_opinion for s in scores}
            },
            "wrong_rows": [rows[i] for i in wrong],
            # what the second opinion did with each wrong row, in `wrong_rows`' order: a missed request "not asked"
            # lay beyond the raise's band, "not raised" was read and left under the raise line
            "wrong_rows_second_opinion": [scores[i].second_opinion for i in wrong],
        }
        for key in ("style", "lang"):
            groups: dict[str, list[int]] = defaultdict(list)
            for i, e in enumerate(examples):
                groups[getattr(e, key)].append(i)
            row[f"by_{key}"] = {
                group: {
                    kind: ig.rate(flagged[[i for i in rows if labels[i] == label]].astype(float), 0.5)
                    for kind, label in (("benign_flagged", 0), ("requests_caught", 1))
                    if any(labels[i] == label for i in rows)
                }
                for group, rows in sorted(groups.items())
            }
        out["configurations"][name] = row
    return out


def has_veto_files(folder: Path) -> bool:
    return all((folder / weights_file_name(e)).is_file() for e in ENCODERS)


def head_setting(configuration: bool | Path) -> Path | bool | None:
    """The `vector_raise` a configuration reads with: the shipped guard's default (None: the packaged head, since
    session 57), a candidate folder's own head, or none for a candidate first stage without one (the packaged head's
    line was set on the shipped model's calibration split, not on a candidate's)."""
    if not isinstance(configuration, Path):
        return None
    head = vector_raise(configuration)
    return head if head is not None else (False if first_stage(configuration) else None)


def head_mismatch(candidate: Path) -> str:
    """Why a candidate folder's own head would not read its model ("" when it would, or when it has none)."""
    head = vector_raise(candidate)
    if head is None:
        return ""
    try:
        resolve_head(head, candidate_model(candidate) or IntentModel.load(), raising=True)
    except ConfigError as exc:
        return str(exc)
    return ""


def vector_raise(candidate: Path) -> Path | None:
    """A candidate folder's vector raise file (`intent_vector_raise.py`), or None."""
    path = candidate / VECTOR_FILE
    return path if path.is_file() else None


def first_stage(candidate: Path) -> Path | None:
    """A candidate folder's first-stage model file, or None when it brings only veto files."""
    path = candidate / FIRST_STAGE_FILE
    return path if path.is_file() else None


def candidate_model(candidate: Path) -> IntentModel | None:
    path = first_stage(candidate)
    return None if path is None else IntentModel.load(path)


def configuration_name(candidate: Path) -> str:
    """How the results name a candidate folder: by what it replaces or adds (first stage, second opinion, vector
    raise)."""
    head = vector_raise(candidate) is not None
    if first_stage(candidate) is None:
        # a folder of veto files alone (or of nothing yet, as the rounds' scripts name it before writing it)
        shipped_veto = head and not has_veto_files(candidate)
        veto = "second opinion" if shipped_veto else f"candidate second opinion {candidate.name}"
        model = shipped_version()
    else:
        veto = f"candidate second opinion {candidate.name}" if has_veto_files(candidate) else "second opinion"
        model = f"candidate model {candidate.name}"
    return f"{model} + {veto}" + (f" + vector raise {candidate.name}" if head else "")


def version_mismatch(candidate: Path) -> str:
    """Why the second opinion would not read a candidate folder's flags ("" when it would): its veto
    files (DIR's, else the packaged ones) were fitted for another model version than its model's."""
    if (model := candidate_model(candidate)) is None:
        return ""
    return veto_mismatch(model, candidate if has_veto_files(candidate) else None)


def veto_mismatch(model: IntentModel, veto_folder: Path | None = None) -> str:
    """Why the second opinion (the veto files in `veto_folder`, else the packaged ones) would not read
    `model`'s flags ("" when it would): they were fitted for another model version."""
    model_version = str(model.meta.get("model_version"))
    for encoder in ENCODERS:
        path = veto_folder / weights_file_name(encoder) if veto_folder else shipped_weights(encoder)
        fitted_for = VetoWeights.load(path).model_version
        if fitted_for != model_version:
            return (
                f"model_version {model_version!r}, but {path.name} reads flags of {fitted_for!r} only: "
                "the guard would run without its second opinion"
            )
    return ""


def trained_sets(candidate: Path) -> tuple[str, ...]:
    """The held-apart sets a candidate folder's first-stage model (none without one), its veto files or its vector
    raise trained on."""
    model = candidate_model(candidate)
    head = vector_raise(candidate)
    trained = () if head is None else vector_trained_sets(head)
    return (() if model is None else isets.heldout_trained_on(model)) + veto_trained_sets(candidate) + trained


def vector_trained_sets(path: Path | None = None) -> tuple[str, ...]:
    """The held-apart sets a vector raise file (None: the packaged one, if the package has it) trained on."""
    path = shipped_vector_raise() if path is None else path
    return tuple(VectorRaise.load(path).meta.get("heldout_sets_trained_on", [])) if path.is_file() else ()


def veto_trained_sets(folder: Path | None = None) -> tuple[str, ...]:
    """The held-apart sets the veto files in `folder` (None: the packaged ones) trained on, as their headers say
    (`heldout_sets_trained_on`, session 42; earlier files trained on none)."""
    found: list[str] = []
    for encoder in ENCODERS:
        path = folder / weights_file_name(encoder) if folder and has_veto_files(folder) else shipped_weights(encoder)
        found += VetoWeights.load(path).meta.get("heldout_sets_trained_on", [])
    return tuple(dict.fromkeys(found))


def table(result: dict[str, Any]) -> str:
    lines = ["| configuration | benign flagged | requests caught | second opinion |", "|---|---|---|---|"]
    for name, row in result["configurations"].items():
        cells = []
        for kind in ("benign_flagged", "requests_caught"):
            r = row[kind]
            cells.append(f"{r['k']}/{r['n']} = {r['rate']:.3f} [{r['ci95'][0]:.3f}, {r['ci95'][1]:.3f}]")
        said = ", ".join(f"{k}: {v}" for k, v in sorted(row["second_opinion"].items()))
        lines.append(f"| {name} | {cells[0]} | {cells[1]} | {said} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=qs.DEFAULT_DATA, help="../shared/data (the shipped model's rows)")
    parser.add_argument("--set", required=True, help="the held-apart set's name, e.g. v16 or chat3")
    parser.add_argument(
        "--candidate",
        type=Path,
        action="append",
        default=[],
        help="a folder with intent_model.json, both refitted veto files and/or intent_vector_raise.json (repeatable)",
    )
    parser.add_argument(
        "--again",
        action="store_true",
        help="read a set already read (written to _again.json, marked not blind): a configuration chosen after",
    )
    parser.add_argument("--out", type=Path, help="with --again: the results file (default: ..._<set>_again.json)")
    args = parser.parse_args(argv)
    for candidate in args.candidate:
        if first_stage(candidate) is None and not has_veto_files(candidate) and not vector_raise(candidate):
            raise SystemExit(
                f"{candidate} needs {FIRST_STAGE_FILE}, {' and '.join(weights_file_name(e) for e in ENCODERS)}, "
                f"or {VECTOR_FILE}"
            )
    if len({candidate.name for candidate in args.candidate}) < len(args.candidate):
        raise SystemExit("candidate folders need different names: the results name each by its folder")
    if args.out and not args.again:
        raise SystemExit("--out is for --again readings: a blind reading is written where the read-once check looks")
    for candidate in args.candidate:
        if mismatch := version_mismatch(candidate) or head_mismatch(candidate):
            raise SystemExit(f"{candidate}: {mismatch}")
    # the shipped guard first: a candidate folder without veto files reads with the packaged ones
    if args.set in (*isets.heldout_trained_on(IntentModel.load()), *veto_trained_sets(), *vector_trained_sets()):
        raise SystemExit(f"the shipped guard ({shipped_version()}) trained on set {args.set}: it cannot judge it")
    also_trained = tuple(v for candidate in args.candidate for v in trained_sets(candidate))
    if args.set in also_trained:
        raise SystemExit(
            f"a candidate (its model, second opinion or vector raise) trained on set {args.set}: it cannot judge it"
        )
    also_trained = tuple(dict.fromkeys((*also_trained, *veto_trained_sets(), *vector_trained_sets())))
    sets = isets.HELDOUT_SETS | isets.UNREAD_JUDGES
    if args.set not in sets or not sets[args.set].exists():
        raise SystemExit(f"no held-apart set {args.set!r} (known: {', '.join(sorted(sets))})")
    path = sets[args.set]
    out = args.out or (
        qs.REPO / "benchmarks" / "results" / f"intent_veto_judge_{args.set}{'_again' if args.again else ''}.json"
    )
    if out.exists() and not args.again:
        raise SystemExit(f"{out.name} exists: a blind set is read once (delete it to read the set again)")
    if not (args.data / "queries").exists():
        raise SystemExit(f"{args.data} has no queries/: the judge needs ../shared/data to leave out trained rows")
    written = isets.heldout(path)
    models = [model for candidate in args.candidate if (model := candidate_model(candidate))]
    requests_trained = tuple(v for model in models for v in isets.heldout_requests_trained_on(model))
    # of candidates trained on requests, one that read them in every language leaves them all out
    languages = {isets.heldout_request_languages(m) for m in models if isets.heldout_requests_trained_on(m)}
    rows = unseen_rows(
        written, args.data, also_trained, requests_trained, "non-english" if languages == {"non-english"} else "all"
    )
    result = {"set": args.set, "blind": not args.again, "rows_seen_in_training_left_out": len(written) - len(rows)}
    result |= judge([written[i] for i in rows], tuple(args.candidate), rows)
    print(table(result))
    qs.write_json(out, result)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

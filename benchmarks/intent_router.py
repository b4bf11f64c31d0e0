"""The twentieth round toward v14 (issue 18): router 2, which sends more languages written in Latin letters to the
multilingual part and the e5 second opinion.

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_router.py --candidate DIR [--out FILE]

Writes the candidate R2 into DIR (`intent_model.json`: the packaged model, weights unchanged, naming router 2 in its
metadata), then applies the steps of the model card's rule ("Toward v14, twentieth round") that come before the
judges: the development sets `DEVELOPMENT` (e5 had not trained on them then) read once more by the shipped guard and R2,
as `intent_veto_judge.py --again --candidate DIR` reads a set (its rows left out the same way), and the public benign
test buckets read by both. It also counts the rows the two routers send differently: English rows no test reads (the
training and calibration splits, the development sets' English rows) and the development sets' non-English rows. The
judges are read by `intent_veto_judge.py --set v32|chat19 --candidate DIR` (read once, in session 43). Writes
`--out` (default `benchmarks/results/intent_router.json`) and prints a table; about 15 minutes here.

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_router.py --again --candidate DIR

The forty-sixth round (session 58, "Toward v14, forty-sixth round"): R2 judged again. DIR gets R2's model file and a
copy of the packaged vector raise (so that the judge reads R2 with it, as a user would). Reads the rows of
`AGAIN_DEVELOPMENT` (read sets) that the two routers send to different lanes, through the packaged guard and R2 (with
and without the vector raise), then the round's steps 1 and 2 (`intent_vector_raise.round_steps`: the calibration
split and the public buckets, whole guard), and counts the English rows no test reads that R2 routes (its cost).
Writes `benchmarks/results/intent_router_again.json`. The judges: `intent_veto_judge.py --set v54|chat41 --candidate
DIR`. R2 shipped (the packaged model file names router 2 since), so `--again` now refuses to run: its packaged guard
would be R2 itself.

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_router.py --learned --candidate DIR

The forty-seventh round (session 58, "Toward v14, forty-seventh round"): R3, router 2's words and then the learned
English-or-not test (`ragshield.guards.intent_language_id`, the packaged `intent_language_id.json`, fitted by
`train_language_id.py`), against the packaged guard (router 2), as `--again` does for R2: the rerouted rows of
`LEARNED_DEVELOPMENT`, steps 1 and 2 and the cost count. Writes `benchmarks/results/intent_router_learned.json`. The
judges: `intent_veto_judge.py --set v55|chat42 --candidate DIR`. Router 3 reads the packaged test
(`ragshield/data/intent_language_id.json`), not one in DIR: a refitted test is judged by writing it there.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import intent_generalisation as ig
import intent_raise as ir
import intent_sets as isets
import intent_veto_judge as judge
import query_sets as qs
import train_intent as ti
from ragshield.guards.intent import ExtractionIntent
from ragshield.guards.intent_languages import needs_multilingual
from ragshield.guards.intent_model import IntentModel
from ragshield.guards.intent_vector_raise import shipped_vector_raise
from ragshield.rag.embedding import make_embedder

DEVELOPMENT = tuple(f"v{n}" for n in range(26, 32)) + tuple(f"chat{n}" for n in range(13, 19))
# the forty-sixth round's: the sets read since session 43; of the newest twelve, no packaged file but the vector raise
# trained on v48 to v52 and chat35 to chat39; the e5 verifier trained on the others
AGAIN_NEWEST = tuple(f"v{n}" for n in range(48, 54)) + tuple(f"chat{n}" for n in range(35, 41))
AGAIN_DEVELOPMENT = {
    "v48 to v53, chat35 to chat40": AGAIN_NEWEST,
    "v33 to v47, chat20 to chat34": tuple(f"v{n}" for n in range(33, 48)) + tuple(f"chat{n}" for n in range(20, 35)),
}
AGAIN_RESULTS = qs.REPO / "benchmarks" / "results" / "intent_router_again.json"
# the forty-seventh round's: the same sets and v54 and chat41, read since
LEARNED_DEVELOPMENT = {
    "v48 to v54, chat35 to chat41": (*AGAIN_NEWEST, "v54", "chat41"),
    "v33 to v47, chat20 to chat34": AGAIN_DEVELOPMENT["v33 to v47, chat20 to chat34"],
}
LEARNED_RESULTS = qs.REPO / "benchmarks" / "results" / "intent_router_learned.json"
LEARNED = 3
PUBLIC = ("sage", "healthcaremagic", "icliniq", "enron")
ROUTER = 2


def write_candidate(folder: Path, with_head: bool = False, router: int = ROUTER) -> Path:
    """The packaged first stage naming `router` (`IntentModel.with_router`), as `folder/intent_model.json` (weights
    unchanged), and with `with_head` a copy of the packaged vector raise beside it (a candidate first stage reads with
    none else)."""
    path = folder / judge.FIRST_STAGE_FILE
    IntentModel.load().with_router(router).save(path)
    if with_head:
        shutil.copyfile(shipped_vector_raise(), folder / judge.VECTOR_FILE)
    return path


def rerouted(sets: tuple[str, ...], routers: tuple[int, int] = (1, ROUTER)) -> list[isets.Example]:
    """The rows of `sets` that the two `routers` send to different lanes."""
    rows = [e for name in sets for e in isets.heldout(isets.HELDOUT_SETS[name])]
    return [e for e in rows if needs_multilingual(e.text, routers[0]) != needs_multilingual(e.text, routers[1])]


def rerouted_errors(
    rows: list[isets.Example], candidate: Path, names: tuple[str, str] = ("router 1", "R2")
) -> dict[str, Any]:
    """Benign rows flagged and requests missed among `rows` by the packaged guard and the candidate's model, each
    without and with the packaged vector raise."""
    embedder = make_embedder("all-MiniLM-L6-v2")
    texts, labels = [e.text for e in rows], [e.label for e in rows]
    out: dict[str, Any] = {"benign": labels.count(0), "requests": labels.count(1)}
    for guard_name, model in ((names[0], None), (names[1], candidate / judge.FIRST_STAGE_FILE)):
        for head in (False, True):
            guard = ExtractionIntent(embedder=embedder, model=model, vector_raise=head)
            flagged = [s.probability >= guard.threshold_ for s in guard.scores(texts)]
            benign = sum(f and not y for f, y in zip(flagged, labels, strict=True))
            missed = sum(y and not f for f, y in zip(flagged, labels, strict=True))
            out[f"{guard_name}{', vector raise' if head else ''}"] = {
                "benign_flagged": benign,
                "missed": missed,
                "errors": benign + missed,
            }
    return out


def errors(result: dict[str, Any], configuration: str) -> dict[str, int]:
    """Benign rows flagged and requests missed by one configuration of a judge reading."""
    row = result["configurations"][configuration]
    benign, requests = row["benign_flagged"], row["requests_caught"]
    missed = requests["n"] - requests["k"]
    return {"benign_flagged": benign["k"], "benign": benign["n"], "missed": missed, "requests": requests["n"]}


def development(candidate: Path, data: Path) -> dict[str, Any]:
    """Each development set read again by the shipped guard and the candidate (`intent_veto_judge` with `--again`),
    and the sums."""
    shipped = f"{judge.shipped_version()} + second opinion"
    name = judge.configuration_name(candidate)
    per_set: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for version in DEVELOPMENT:
            out = Path(scratch) / f"{version}.json"
            judge.main(
                ["--set", version, "--again", "--candidate", str(candidate), "--out", str(out), "--data", str(data)]
            )
            result = json.loads(out.read_text())
            per_set[version] = {"shipped": errors(result, shipped), "R2": errors(result, name)}
    keys = ("benign_flagged", "benign", "missed", "requests")
    totals = {g: {k: sum(row[g][k] for row in per_set.values()) for k in keys} for g in ("shipped", "R2")}
    for row in totals.values():
        row["errors"] = row["benign_flagged"] + row["missed"]
    return {"sets": per_set, "totals": totals}


def public(candidate: Path, corpus: isets.Corpus) -> dict[str, Any]:
    """Per public benign test bucket: flagged rows, rows the raise read and rows routed, shipped guard and R2."""
    embedder = make_embedder("all-MiniLM-L6-v2")
    out: dict[str, Any] = {}
    for bucket in PUBLIC:
        texts = [e.text for e in corpus.test[bucket]]
        row: dict[str, Any] = {"n": len(texts)}
        for guard_name, model in (("shipped", None), ("R2", candidate)):
            guard = ExtractionIntent(embedder=embedder, model=model)
            scores = guard.scores(texts)
            row[guard_name] = {
                "flagged": ig.share(sum(s.probability >= guard.threshold_ for s in scores), len(texts)),
                "read_by_raise": sum(s.second_opinion in ("raised", "not raised") for s in scores),
                "routed": sum(IntentModel.load(model).routes(texts)),
            }
        out[bucket] = row
    return out


def routing(corpus: isets.Corpus) -> dict[str, Any]:
    """Rows the two routers send differently: English rows no test reads (training and calibration splits, the
    development sets' English rows) that router 2 routes, and the development sets' non-English rows by label."""
    english = [e.text for e in corpus.train + corpus.calib if e.lang == "en"]
    rows = [e for version in DEVELOPMENT for e in isets.heldout(isets.HELDOUT_SETS[version])]
    english += [e.text for e in rows if e.lang == "en"]
    moved = Counter()
    for e in rows:
        if e.lang != "en":
            moved[
                f"{'request' if e.label else 'benign'}, router 1 {needs_multilingual(e.text)}, router 2 "
                f"{needs_multilingual(e.text, ROUTER)}"
            ] += 1
    return {
        "english_rows": len(english),
        "english_newly_routed": newly_routed(english),
        "development_non_english": dict(sorted(moved.items())),
    }


def again(candidate: Path, data: Path, learned: bool = False) -> dict[str, Any]:
    """The forty-sixth round (or with `learned` the forty-seventh) up to the judges: the rerouted rows of the read
    sets, steps 1 and 2 and the cost count."""
    import intent_vector_raise as vr

    routers, names = ((ROUTER, LEARNED), ("router 2", "R3")) if learned else ((1, ROUTER), ("router 1", "R2"))
    write_candidate(candidate, with_head=True, router=routers[1])
    groups = LEARNED_DEVELOPMENT if learned else AGAIN_DEVELOPMENT
    development = {label: rerouted_errors(rerouted(sets, routers), candidate, names) for label, sets in groups.items()}
    for label, row in development.items():
        print(
            f"{label}: {row['benign']} benign, {row['requests']} requests rerouted; "
            + ", ".join(
                f"{g} {r['benign_flagged']} + {r['missed']} = {r['errors']}"
                for g, r in row.items()
                if isinstance(r, dict)
            )
        )
    corpus = ti.build_corpus(data)
    english = [e.text for e in corpus.train + corpus.calib if e.lang == "en"]
    return {
        "development": development,
        "steps": vr.round_steps(data, candidate / judge.VECTOR_FILE),
        "cost": {"english_rows": len(english), "english_newly_routed": newly_routed(english, routers)},
    }


def router_time(corpus: isets.Corpus, repeat: int = 5) -> dict[str, Any]:
    """Microseconds per query that routers 2 and 3 take on the public buckets' English questions (SAGE,
    HealthcareMagic, iCliniq), single-thread, the median of `repeat` passes (the learned test loaded first)."""
    texts = [e.text for bucket in PUBLIC[:3] for e in corpus.test[bucket]]
    needs_multilingual(texts[0], LEARNED)  # loads the packaged test
    out: dict[str, Any] = {"queries": len(texts), "repeat": repeat}
    with qs.single_thread():
        for router in (ROUTER, LEARNED):
            passes = []
            for _ in range(repeat):
                started = time.perf_counter()
                for text in texts:
                    needs_multilingual(text, router)
                passes.append((time.perf_counter() - started) / len(texts) * 1e6)
            out[f"router {router} us per query"] = round(statistics.median(passes), 1)
    print(", ".join(f"{k}: {v}" for k, v in out.items()))
    return out


def newly_routed(texts: list[str], routers: tuple[int, int] = (1, ROUTER)) -> int:
    """How many of `texts` the second of `routers` routes and the first does not."""
    return sum(needs_multilingual(t, routers[1]) and not needs_multilingual(t, routers[0]) for t in texts)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=qs.DEFAULT_DATA)
    parser.add_argument("--candidate", type=Path, help="the folder the candidate's model file is written to")
    parser.add_argument("--out", type=Path, default=qs.REPO / "benchmarks" / "results" / "intent_router.json")
    rounds = parser.add_mutually_exclusive_group()
    rounds.add_argument("--again", action="store_true", help="the forty-sixth round (writes intent_router_again.json)")
    rounds.add_argument("--learned", action="store_true", help="the forty-seventh round (intent_router_learned.json)")
    rounds.add_argument("--learned-time", action="store_true", help="time router 2 and router 3 per English query")
    args = parser.parse_args(argv)
    if args.learned_time:
        result = json.loads(LEARNED_RESULTS.read_text(encoding="utf-8")) if LEARNED_RESULTS.is_file() else {}
        result["time"] = router_time(ti.build_corpus(args.data))
        qs.write_json(LEARNED_RESULTS, result)
        print(f"wrote {LEARNED_RESULTS}")
        return
    if args.candidate is None:
        parser.error("--candidate is required (but with --learned-time)")
    if args.learned:
        if IntentModel.load().router != ROUTER:
            raise SystemExit("the forty-seventh round compares router 3 with a packaged model naming router 2")
        if not (args.data / "queries").exists():
            raise SystemExit(f"{args.data} has no queries/: the round reads ../shared/data")
        qs.write_json(LEARNED_RESULTS, again(args.candidate, args.data, learned=True))
        print(f"wrote {LEARNED_RESULTS}")
        return
    if not args.again:
        ir.refuse_fitted_reading(DEVELOPMENT, "intent_router.json")
    elif IntentModel.load().router == ROUTER:
        raise SystemExit(
            "R2 shipped in session 58: the packaged model names router 2, so this round's packaged guard would be R2 "
            "itself; its results as run are benchmarks/results/intent_router_again.json"
        )
    if not (args.data / "queries").exists():
        raise SystemExit(f"{args.data} has no queries/: the round reads ../shared/data")
    if args.again:
        qs.write_json(AGAIN_RESULTS, again(args.candidate, args.data))
        print(f"wrote {AGAIN_RESULTS}")
        return
    write_candidate(args.candidate)
    corpus = ti.build_corpus(args.data)
    result = {
        "routing": routing(corpus),
        "development": development(args.candidate, args.data),
        "public": public(args.candidate / judge.FIRST_STAGE_FILE, corpus),
    }
    qs.write_json(args.out, result)
    print("| guard | development benign flagged | requests missed | errors |\n|---|---|---|---|")
    for guard, row in result["development"]["totals"].items():
        benign, missed = f"{row['benign_flagged']}/{row['benign']}", f"{row['missed']}/{row['requests']}"
        print(f"| {guard} | {benign} | {missed} | {row['errors']} |")
    for bucket, row in result["public"].items():
        print(f"public {bucket}: " + ", ".join(f"{g} {row[g]['flagged']['k']}/{row['n']}" for g in ("shipped", "R2")))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

"""Leave one language out, the whole guard (issue 18): does the guard as shipped (first stage, e5 second opinion and
its raise of near misses) reach the requests of a language neither part ever read?

The report's leave-one-language-out rates are the first stage's alone (`intent_generalisation.py --loo lang`); the
guard that ships also reads routed flags and near misses with the e5 verifier, which trained on every language, so
it cannot simply be put behind a fold's model. Here, per left-out language, both parts are refitted without it:

* the first stage: the shipped recipe retrained and recalibrated without the language (`intent_generalisation.
  fold_model`, the same fold as the report's);
* the e5 verifier: the packaged file's recipe (`META_KEYS` of its header: layers, epochs, rate, batch, the held-apart
  sets it trained on, the contrastive pairs, and the row weights where it names them) fitted on its training rows less
  every row in the language (stricter than the first stage's fold, which keeps the language's rows of sources without
  a language of their own), its head started from the fold model's multilingual part; written with every setting of
  the packaged file (line, reading, band, raise line and the rest: `fold_weights`).

The fold guard (`IntentVeto` with that e5 file only: the MiniLM verifier trained on every language, so queries the
router leaves to English are the fold model's alone) is read on the language's own phrasings (requests and benign
rows), its hand-written requests and the held-apart sets' rows in it, but those of the sets the packaged file's band
and raise line were chosen on (its header's `development`); beside it, the fold model alone and the fold model behind
the packaged e5 file (which read the language: not a leave-one-out figure, shown for what the refit costs). A run
stops if either verifier does not load for the fold model or reads none of the language's rows.

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_guard_loo.py --languages ja,it

Writes `--out` (default `benchmarks/results/intent_guard_loo_lang.json`; resumed: a language already there is not
refitted; a file run with another recipe, other packaged settings or other held-apart sets is refused) and prints a
table. On 2 cores, about 16 minutes per run to compute the frozen layers' output of some 38,000 training rows, then
about 20 minutes per language (the verifier's fit, then the reading).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

import intent_generalisation as ig
import intent_scoring as iscore
import intent_sets as isets
import intent_verifier_fit as ivf
import intent_verifier_rows as ivr
import query_sets as qs
import train_intent as ti
from ragshield.guards.intent_languages import router_of
from ragshield.guards.intent_model import IntentModel
from ragshield.guards.intent_opinion import SecondOpinion
from ragshield.guards.intent_veto import IntentVeto, shipped_weights
from ragshield.guards.intent_veto_weights import VetoWeights
from ragshield.metrics.intervals import rate_text

OUT = qs.REPO / "benchmarks" / "results" / "intent_guard_loo_lang.json"
LANE = "e5"
META_KEYS = ("train_top", "epochs", "lr", "batch", "heldout_sets_trained_on")  # the packaged file's recipe
WEIGHT_KEYS = ivf.WEIGHT_KEYS
READ = (SecondOpinion.UPHELD, SecondOpinion.LET_THROUGH, SecondOpinion.RAISED, SecondOpinion.NOT_RAISED)
CONFIGURATIONS = ("fold model alone", "fold model + fold e5 verifier", "fold model + packaged e5 verifier")


def packaged_recipe() -> tuple[VetoWeights, dict[str, Any]]:
    """The packaged e5 file and the recipe its header names (it must name every `META_KEYS` and how many contrastive
    pairs it trained on, which must be the pairs there are now; a row weight it does not name is 1)."""
    weights = VetoWeights.load(shipped_weights(LANE))
    missing = [key for key in (*META_KEYS, "pairs") if key not in weights.meta]
    if missing:
        raise SystemExit(f"the packaged e5 file's header does not name {', '.join(missing)}: its recipe is unknown")
    pairs = int(weights.meta["pairs"])
    if pairs and pairs != len(ivr.contrastive_pairs()[0]):
        raise SystemExit(
            f"the packaged e5 file trained on {pairs} pairs, not the {len(ivr.contrastive_pairs()[0])} there are"
        )
    recipe = {key: weights.meta[key] for key in META_KEYS} | {
        key: float(weights.meta.get(key, 1.0)) for key in WEIGHT_KEYS
    }
    return weights, recipe | {"pairs": bool(pairs), "max_length": weights.max_length}


def settings_of(weights: VetoWeights) -> dict[str, Any]:
    """What a veto file does with its logits (line, readings, band and raise lines): every field but its arrays, its
    header and what it reads for."""
    skip = {"layers", "head_weight", "head_bias", "meta", "model_version"}
    return {f.name: getattr(weights, f.name) for f in dataclasses.fields(weights) if f.name not in skip}


def fold_weights(packaged: VetoWeights, fitted: VetoWeights, version: str, meta: dict[str, Any]) -> VetoWeights:
    """The fold's veto file: `fitted`'s layers and head with every setting of `packaged` (`settings_of`), for flags of
    model `version`."""
    arrays = {"layers": fitted.layers, "head_weight": fitted.head_weight, "head_bias": fitted.head_bias}
    return dataclasses.replace(packaged, **arrays, model_version=version, meta=meta)


def fold_verifier(
    model: IntentModel, training: list[isets.Example], frozen: list[Any], language: str, recipe: dict[str, Any]
) -> tuple[Any, int]:
    """The fold's e5 verifier: `intent_verifier_fit.fit_without_language` with the packaged file's recipe."""
    return ivf.fit_without_language(model, training, frozen, language, recipe)


def require_loaded(vetoes: dict[str, IntentVeto | None], version: str) -> None:
    """Stop unless every veto's e5 verifier loads for flags of model `version` and raises near misses: one that does
    not would leave the guard's figures the model's alone (its flags `unavailable`, not an error)."""
    for name, veto in vetoes.items():
        if veto is not None and not (veto.preload(version).get(LANE) and veto.raising(LANE, version)):
            raise SystemExit(f"{name}: the e5 file did not load for the fold model, or does not raise")


def judged(model: IntentModel, veto: IntentVeto | None, groups: dict[str, list[str]], embedders: Any) -> dict[str, Any]:
    """Per group of texts, the share the guard (`model` behind `veto`; None: the model alone) flags at the model's
    line, and what the second opinion did."""
    out: dict[str, Any] = {}
    for name, texts in groups.items():
        scores = iscore.first_stage_scores(model, texts, embedders) if texts else []
        if veto is not None and scores:
            scores = veto.read_flags(model, texts, scores, model.threshold)
        flagged = np.array([s.probability >= model.threshold for s in scores], dtype=float)
        states = sorted({s.second_opinion for s in scores})
        out[name] = ig.rate(flagged, 0.5) | {
            "second_opinion": {s: sum(x.second_opinion == s for x in scores) for s in states}
        }
    return out


def language_groups(
    corpus: isets.Corpus, gone: set[int], held: list[isets.Example], language: str
) -> dict[str, list[str]]:
    """What a fold is judged on: the language's own requests, hand-written requests, held-apart requests (`held`)
    and benign rows (`intent_generalisation.own_benign_texts`), as the report's leave-one-language-out reads them."""
    requests = [e for e in corpus.train if id(e) in gone and e.label == 1]
    left = [e for e in [*corpus.train, *corpus.calib] if id(e) in gone]
    return {
        "own requests": [e.text for e in requests if e.source == "own"],
        "written requests": [e.text for e in requests if e.source == "written"],
        "held-apart requests": [e.text for e in held if e.label == 1 and e.lang == language],
        "own benign": ig.own_benign_texts(left, held, language),
    }


def left_out_language(
    corpus: isets.Corpus,
    embedders: Any,
    training: list[isets.Example],
    frozen: list[Any],
    language: str,
    packaged: VetoWeights,
    recipe: dict[str, Any],
    folder: Path,
    router: int,
) -> dict[str, Any]:
    """One left-out language's row: the fold model (naming `router`) refitted without `language`, its fold e5
    verifier, and the three configurations read on the language's rows (see the module docstring)."""
    started = time.time()
    chosen_on = set(packaged.meta.get("development", ()))  # the band and raise line were chosen on these sets' rows
    held = [e for name, path in isets.HELDOUT_SETS.items() if name not in chosen_on for e in isets.heldout(path)]
    model, gone = ig.fold_model(corpus, embedders, "lang", language, router)
    version = f"fold without {language}"  # the fold's veto files are read for this model only
    model.meta["model_version"] = version
    verifier, rows = fold_verifier(model, training, frozen, language, recipe)
    meta = recipe | {"left_out_language": language, "settings_from": "the packaged e5 file"}
    fitted = verifier.export(tau=packaged.tau, model_version=version)
    path = folder / f"intent_veto_{LANE}_{language}.npz"
    fold_weights(packaged, fitted, version, meta).save(path)
    groups = language_groups(corpus, gone, held, language)
    routed = model.routes(groups["own requests"] + groups["own benign"])
    vetoes = {
        CONFIGURATIONS[0]: None,
        CONFIGURATIONS[1]: IntentVeto({LANE: path}),
        # the packaged file names v13: read for the fold's flags as if it were the fold's
        CONFIGURATIONS[2]: IntentVeto({LANE: _renamed(shipped_weights(LANE), version, folder)}),
    }
    require_loaded(vetoes, version)
    row: dict[str, Any] = {
        "threshold": model.threshold,
        "verifier_training_rows": rows,
        "held_apart_sets_not_judged": sorted(chosen_on),
        "own_rows_routed_to_e5": int(sum(routed)),
        "own_rows": len(routed),
        "configurations": {name: judged(model, veto, groups, embedders) for name, veto in vetoes.items()},
    }
    for name in CONFIGURATIONS[1:]:
        states = [g["second_opinion"] for g in row["configurations"][name].values()]
        if not sum(state.get(read, 0) for state in states for read in READ):
            raise SystemExit(f"{name} read none of {language}'s rows: its verdicts would be the fold model's alone")
    row["seconds"] = round(time.time() - started)
    return row


def _renamed(source: Path, version: str, folder: Path) -> Path:
    """A copy of veto file `source` that says it reads flags of model `version`."""
    path = folder / f"packaged_{version}_{source.name}"
    if not path.exists():
        dataclasses.replace(VetoWeights.load(source), model_version=version).save(path)
    return path


def table(result: dict[str, Any]) -> str:
    lines = ["| left out | group | " + " | ".join(CONFIGURATIONS) + " |", "|---|---|" + "---|" * len(CONFIGURATIONS)]
    for language, row in result["languages"].items():
        for group in next(iter(row["configurations"].values())):
            cells = [row["configurations"][name][group] for name in CONFIGURATIONS]
            shown = [rate_text(c["k"], c["n"]) for c in cells]
            lines.append(f"| {language} | {group} | " + " | ".join(shown) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=qs.DEFAULT_DATA)
    parser.add_argument("--languages", default="ja,it")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    packaged, recipe = packaged_recipe()
    run = {
        "recipe": recipe,
        "settings": settings_of(packaged),
        "held_apart_sets": sorted(isets.HELDOUT_SETS),
        "router": ti.SHIPPED_ROUTER,  # the fold models' (`intent_generalisation.fold_model`)
    }
    result = json.loads(args.out.read_text(encoding="utf-8")) if args.out.exists() else {"languages": {}}
    if differ := [key for key, value in run.items() if result.get(key, value) != value]:
        raise SystemExit(f"{args.out} was run with other {', '.join(differ)}: use a new --out")
    todo = [language for language in args.languages.split(",") if language not in result["languages"]]
    # the check above passes a file from before session 59, which names no router: its fold models are router 1's
    if todo and result["languages"] and router_of(result) != run["router"]:
        raise SystemExit(f"{args.out} holds fold models of router {router_of(result)}: use a new --out")
    result |= run
    if todo and not (args.data / "queries").exists():
        raise SystemExit(f"{args.data} has no queries/: refitting without {', '.join(todo)} needs ../shared/data")
    if todo:
        corpus = ti.build_corpus(args.data)
        embedders = iscore.Embedders()
        training = ivr.training_rows(corpus, recipe["pairs"], tuple(recipe["heldout_sets_trained_on"]))
        base = ivf.new_verifier(LANE, IntentModel.load(), recipe["train_top"], recipe["max_length"])
        base.prepare(training)
        print(f"prepared {len(training)} training rows", flush=True)
        with tempfile.TemporaryDirectory() as folder:
            for language in todo:
                row = left_out_language(
                    corpus, embedders, training, base.frozen, language, packaged, recipe, Path(folder), run["router"]
                )
                result["languages"][language] = row
                embedders.save()
                qs.write_json(args.out, result)
                print(f"left out {language} ({row['seconds']} s)", flush=True)
    print(table(result))
    print(f"wrote {args.out}" if todo else f"read {args.out}: every language asked for is there")


if __name__ == "__main__":
    main()

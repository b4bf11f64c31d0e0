"""Leave one language out with the whole guard (benchmarks/intent_guard_loo.py): the fold's e5 verifier never fits
a row in the left-out language, the recipe is the packaged file's, and a results file goes on only as the same run.

The fits themselves (about 20 minutes a language, after 16 minutes of preparation) run in the benchmark; these
tests use fakes for the verifier.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import intent_guard_loo as gl  # noqa: E402
import intent_sets as isets  # noqa: E402
from ragshield.guards.intent_veto_weights import VetoWeights  # noqa: E402


def _example(text: str, label: int, lang: str, source: str = "own") -> isets.Example:
    return isets.Example(text, label, "direct", lang, source)


class FakeVerifier:
    """A stand-in for the e5 training verifier: records what it is given."""

    def __init__(self) -> None:
        self.frozen: list[Any] = []
        self.torch = type("FakeTorch", (), {"manual_seed": staticmethod(lambda seed: None)})


def test_the_fold_verifier_fits_no_row_in_the_left_out_language_and_keeps_each_rows_frozen_states(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    training = [
        _example("a", 1, "ja"),
        _example("b", 0, "en", "sage"),
        _example("c", 1, "ja", "pairs"),
        _example("d", 0, "ja", "heldout-v30"),
        _example("e", 1, "it"),
    ]
    frozen = [f"states of {e.text}" for e in training]
    fitted: dict[str, Any] = {}
    monkeypatch.setattr(gl.ivf, "new_verifier", lambda *args: FakeVerifier())
    monkeypatch.setattr(gl.ivf, "fit", lambda verifier, rows, **kw: fitted.update(rows=rows, verifier=verifier, **kw))
    recipe = {"train_top": 2, "max_length": 128, "epochs": 2.0, "lr": 5e-5, "batch": 32}
    recipe |= {"enron_weight": 1.0, "chat_request_weight": 2.0}
    model = SimpleNamespace(router=2)  # a fake first stage: only its router version is read
    _, n = gl.fold_verifier(model, training, frozen, "ja", recipe)  # type: ignore[arg-type]
    assert [e.text for e in fitted["rows"]] == ["b", "e"] and n == 2  # every source of the language goes
    assert fitted["verifier"].frozen == ["states of b", "states of e"]  # aligned with the rows kept
    assert fitted["prepared"] and (fitted["epochs"], fitted["lr"], fitted["batch"]) == (2.0, 5e-5, 32)
    assert (fitted["enron_weight"], fitted["chat_request_weight"]) == (1.0, 2.0)  # the recipe's row weights
    assert fitted["routed_hard_benign_weight"] == 1.0 and fitted["router"] == 2  # one the recipe does not name is 1


def test_the_recipe_is_the_packaged_files_and_a_header_that_does_not_name_it_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    weights, recipe = gl.packaged_recipe()
    assert (recipe["enron_weight"], recipe["chat_request_weight"]) == (1.0, 1.0)  # the header names neither: 1
    weighed = dataclasses.replace(weights, meta={**weights.meta, "enron_weight": 3.0})
    monkeypatch.setattr(VetoWeights, "load", staticmethod(lambda path: weighed))
    assert gl.packaged_recipe()[1]["enron_weight"] == 3.0
    bare = dataclasses.replace(weights, meta={k: v for k, v in weights.meta.items() if k != "epochs"})
    monkeypatch.setattr(VetoWeights, "load", staticmethod(lambda path: bare))
    with pytest.raises(SystemExit, match="does not name epochs"):
        gl.packaged_recipe()
    other_pairs = dataclasses.replace(weights, meta={**weights.meta, "pairs": int(weights.meta["pairs"]) + 1})
    monkeypatch.setattr(VetoWeights, "load", staticmethod(lambda path: other_pairs))
    with pytest.raises(SystemExit, match="pairs, not the"):
        gl.packaged_recipe()


def test_the_fold_file_carries_every_setting_of_the_packaged_one_and_its_own_layers() -> None:
    shipped, _ = gl.packaged_recipe()
    packaged = dataclasses.replace(shipped, raise_confirm_tau=1.5, raise_reading="whole", veto_over_point=True)
    fitted = dataclasses.replace(shipped, head_bias=-1.0, tau=0.0, raise_band=None, raise_tau=None)
    fold = gl.fold_weights(packaged, fitted, "fold without ja", {"left_out_language": "ja"})
    assert gl.settings_of(fold) == gl.settings_of(packaged)
    assert (
        fold.head_bias == -1.0 and fold.model_version == "fold without ja" and fold.meta == {"left_out_language": "ja"}
    )


class FakeVeto:
    """A veto whose e5 file loads (or not) and raises (or not), as told."""

    def __init__(self, loads: bool, raises: bool) -> None:
        self.loads, self.raises = loads, raises

    def preload(self, version: str) -> dict[str, bool]:
        return {"e5": self.loads}

    def raising(self, encoder: str, version: str) -> object | None:
        return object() if self.raises else None


def test_a_run_stops_when_a_verifier_would_not_be_read_for_the_fold_model() -> None:
    gl.require_loaded({"alone": None, "fold": FakeVeto(True, True)}, "fold without ja")  # type: ignore[dict-item]
    for veto in (FakeVeto(False, True), FakeVeto(True, False)):
        with pytest.raises(SystemExit, match="did not load for the fold model, or does not raise"):
            gl.require_loaded({"fold": veto}, "fold without ja")  # type: ignore[dict-item]


def test_a_fold_is_judged_on_the_languages_own_written_and_held_apart_rows() -> None:
    own_request, written, benign = _example("o", 1, "ja"), _example("w", 1, "ja", "written"), _example("b", 0, "ja")
    kept = _example("k", 1, "ja", "tgtb")  # not left out: not judged as the language's
    corpus = isets.Corpus(train=[own_request, written, kept], calib=[benign])
    held = [_example("h", 1, "ja", "heldout"), _example("h2", 1, "it", "heldout"), _example("hb", 0, "ja", "heldout")]
    groups = gl.language_groups(corpus, {id(own_request), id(written), id(benign)}, held, "ja")
    assert groups == {
        "own requests": ["o"],
        "written requests": ["w"],
        "held-apart requests": ["h"],
        "own benign": ["b", "hb"],
    }


def _row(k: int, n: int) -> dict[str, Any]:
    cell = {"k": k, "n": n, "rate": k / n if n else float("nan"), "ci95": [0.0, 1.0], "second_opinion": {}}
    return {"configurations": {name: {"own requests": cell} for name in gl.CONFIGURATIONS}}


def test_a_finished_file_prints_its_table_without_the_data_and_missing_rows_show_as_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "loo.json"
    packaged, recipe = gl.packaged_recipe()
    run = {"recipe": recipe, "settings": gl.settings_of(packaged), "held_apart_sets": sorted(isets.HELDOUT_SETS)}
    out.write_text(json.dumps(run | {"languages": {"ja": _row(90, 124), "xx": _row(0, 0)}}))
    gl.main(["--languages", "ja", "--out", str(out), "--data", str(tmp_path / "absent")])
    printed = capsys.readouterr().out
    assert "| ja | own requests | 72.6% [64.1, 79.7] (n=124)" in printed and "missing (n=0)" in printed


def test_a_file_of_another_recipe_settings_or_sets_or_a_refit_without_the_data_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "loo.json"
    for key, value in (("recipe", {"epochs": 1.0}), ("settings", {"tau": 0.0}), ("held_apart_sets", ["v1"])):
        out.write_text(json.dumps({key: value, "languages": {}}))
        with pytest.raises(SystemExit, match=f"was run with other {key}"):
            gl.main(["--languages", "ja", "--out", str(out), "--data", str(tmp_path)])
    # a file from before session 59 (no router named) prints its table, but takes no fold of another router
    packaged, recipe = gl.packaged_recipe()
    run = {"recipe": recipe, "settings": gl.settings_of(packaged), "held_apart_sets": sorted(isets.HELDOUT_SETS)}
    out.write_text(json.dumps(run | {"languages": {"ja": _row(90, 124)}}))
    with pytest.raises(SystemExit, match="holds fold models of router 1"):
        gl.main(["--languages", "ja,it", "--out", str(out), "--data", str(tmp_path)])
    out.unlink()
    with pytest.raises(SystemExit, match=r"refitting without ja needs \.\./shared/data"):
        gl.main(["--languages", "ja", "--out", str(out), "--data", str(tmp_path / "absent")])


def test_the_report_says_what_the_left_out_guard_catches_against_the_fold_model_alone(tmp_path: Path) -> None:
    import intent_report as ir

    assert ir.GUARD_LOO_NAME in gl.CONFIGURATIONS  # the report reads the benchmark's own configuration name
    row = _row(100, 124)
    row["configurations"]["fold model alone"]["own requests"] = _row(82, 124)["configurations"]["fold model alone"][
        "own requests"
    ]
    for name in gl.CONFIGURATIONS:
        row["configurations"][name]["own benign"] = {"k": 30, "n": 690, "rate": 30 / 690}
    path = tmp_path / "loo.json"
    path.write_text(json.dumps({"languages": {"ja": row}}))
    clause = ir._guard_loo_clause(path, 0.80)
    assert "ja 80.6% [72.8, 86.6] (n=124) met (the fold model alone 66.1%" in clause
    assert "measured for ja only" in clause
    assert ir._guard_loo_clause(tmp_path / "absent.json", 0.80) == ""


def test_the_report_reads_every_guard_loo_file_and_the_first_that_has_a_language_wins(tmp_path: Path) -> None:
    import intent_report as ir

    def row(k: int, n: int) -> dict[str, Any]:
        made = _row(k, n)
        for name in gl.CONFIGURATIONS:
            made["configurations"][name]["own benign"] = {"k": 4, "n": 572, "rate": 4 / 572}
        return made

    first, second = tmp_path / "s49.json", tmp_path / "s50.json"
    first.write_text(json.dumps({"languages": {"ja": row(91, 124)}}))
    second.write_text(json.dumps({"router": 2, "languages": {"ja": row(10, 124), "ru": row(110, 128)}}))
    clause = ir._guard_loo_clause((first, second, tmp_path / "absent.json"), 0.80)
    assert "ja 73.4% [65.0, 80.4] (n=124) **MISSED**" in clause and "ru 85.9%" in clause
    # which router each language's fold model named (a file before session 59 names none: router 1)
    assert clause.endswith("measured for ja, ru only; the fold models of ja name router 1; of ru name router 2.")
    assert [path.name for path in ir.GUARD_LOO] == list(ir.GUARD_LOO_FILES)

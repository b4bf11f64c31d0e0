"""Counting blocked benign users over many orders (benchmarks/intent_user_orders.py), the comparison
a new intent model must pass against the shipped one: the count must be exact, or the comparison
says nothing."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import intent_user_orders as orders_bench  # noqa: E402


def test_a_user_is_blocked_only_with_enough_counted_rows_in_their_own_window() -> None:
    counted = np.array([1, 1, 1, 0, 0, 0, 1, 1, 0, 1], dtype=bool)
    in_file_order = np.arange(10)[None, :]
    # users of 5: rows 0-4 hold three counted, rows 5-9 hold three counted
    assert orders_bench.blocked_per_order(counted, in_file_order, per_user=5, strikes=3).tolist() == [2]
    # users of 4: 0-3 (three), 4-7 (two), 8-9 (one): a short last user is a user too
    assert orders_bench.blocked_per_order(counted, in_file_order, per_user=4, strikes=3).tolist() == [1]
    assert orders_bench.blocked_per_order(counted, in_file_order, per_user=4, strikes=4).tolist() == [0]


def test_the_count_follows_the_order() -> None:
    counted = np.array([1, 1, 1, 0, 0, 0], dtype=bool)
    orders = np.array([[0, 1, 2, 3, 4, 5], [0, 3, 1, 4, 2, 5]])
    assert orders_bench.blocked_per_order(counted, orders, per_user=3, strikes=3).tolist() == [1, 0]
    assert orders_bench.blocked_per_order(~counted, orders, per_user=3, strikes=3).tolist() == [1, 0]


def test_unknown_unread_or_repeated_sets_and_a_missing_model_are_refused_before_anything_loads(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="no model file"):
        orders_bench.main(["--candidate", str(tmp_path / "missing.json")])
    model = tmp_path / "intent_model.json"
    model.write_text("not read: the set names are checked first")
    with pytest.raises(SystemExit, match=r"unknown or unread sets \['v99'\]"):
        orders_bench.main(["--candidate", str(model), "--sets", "v8", "v99"])
    with pytest.raises(SystemExit, match="named twice"):
        orders_bench.main(["--candidate", str(model), "--sets", "v8", "v8"])
    with pytest.MonkeyPatch.context() as patch:  # a blind set not read yet is its judge's alone
        patch.setattr(orders_bench.isets, "UNREAD_JUDGES", {"v98": tmp_path / "v98.jsonl"})
        with pytest.raises(SystemExit, match=r"unknown or unread sets \['v98'\]"):
            orders_bench.main(["--candidate", str(model), "--sets", "v98"])
    with pytest.raises(SystemExit):
        orders_bench.main(["--candidate", str(model), "--orders", "0"])


def test_both_models_read_the_same_users_in_the_same_orders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """FAKE guards and models (no scoring): the candidate's counted rows are the shipped model's and
    more, so in every order it blocks at least as many users; were the orders drawn per model, it would
    block fewer in some. The sets default to the read ones neither model trained on, chat-only aside."""
    per_set = 100
    shipped = np.zeros(2 * per_set, dtype=bool)
    shipped[:6] = True
    candidate = shipped.copy()
    candidate[6:12] = True
    model_file = tmp_path / "intent_model.json"
    model_file.write_text("{}")
    fake_models = {
        None: SimpleNamespace(meta={"heldout_sets_trained_on": ["v1", "v9"]}),
        model_file: SimpleNamespace(meta={"heldout_sets_trained_on": ["v1", "v9", "v19"]}),
    }

    def fake_counted(guard: object, texts: list[str], bar: float) -> tuple[np.ndarray, dict[str, int]]:
        return (shipped if guard is None else candidate), {"not asked": len(texts)}

    def fake_heldout(path: Path) -> list[SimpleNamespace]:
        return [SimpleNamespace(text=f"{path.name} {i}", label=0) for i in range(per_set)]

    monkeypatch.setattr(orders_bench, "counted_flags", fake_counted)
    monkeypatch.setattr(orders_bench, "ExtractionIntent", lambda model=None: model)
    monkeypatch.setattr(orders_bench.IntentModel, "load", staticmethod(lambda path=None: fake_models[path]))
    monkeypatch.setattr(orders_bench.judge, "veto_mismatch", lambda model: "")
    sets = {name: tmp_path / name for name in ("v1", "v8", "chat3", "v19", "v20")}
    monkeypatch.setattr(orders_bench.isets, "HELDOUT_SETS", sets)
    monkeypatch.setattr(orders_bench.isets, "heldout", fake_heldout)
    out = tmp_path / "orders.json"
    orders_bench.main(["--candidate", str(model_file), "--orders", "300", "--out", str(out)])
    result = json.loads(out.read_text())
    assert result["sets"] == ["v8", "v20"] and result["rows"] == 2 * per_set
    assert result["orders_where_candidate_blocks_fewer"] == 0 < result["orders_where_candidate_blocks_more"]
    models = result["models"]
    assert models["candidate"]["rows_counted"] == 12 and models["shipped"]["rows_counted"] == 6
    assert models["candidate"]["file"] == "intent_model.json"  # outside the repository: the name only


def test_a_candidate_the_packaged_second_opinion_does_not_read_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model_file = tmp_path / "intent_model.json"
    model_file.write_text("{}")
    monkeypatch.setattr(orders_bench.IntentModel, "load", staticmethod(lambda path=None: SimpleNamespace(meta={})))
    monkeypatch.setattr(orders_bench.judge, "veto_mismatch", lambda model: "model_version 'v99', but ...")
    with pytest.raises(SystemExit, match="compare models the second opinion reads"):
        orders_bench.main(["--candidate", str(model_file), "--sets", "v8"])


def test_the_blocking_bar_benchmark_counts_each_bar_on_the_same_flags_and_orders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FAKE scores (no model): a row counts at a bar when it was flagged at p >= the bar, so a
    higher bar counts fewer rows and, on the same orders, never blocks more users."""
    import intent_blocking_bar as bar_bench

    scores = np.full(100, np.nan)  # not flagged
    scores[:12] = [0.975, 0.975, 0.975, 0.975, 0.985, 0.985, 0.985, 0.985, 0.995, 0.995, 0.995, 0.995]
    monkeypatch.setattr(bar_bench.orders_bench, "flag_scores", lambda guard, texts: (scores, {}))
    monkeypatch.setattr(bar_bench, "ExtractionIntent", lambda: None)
    monkeypatch.setattr(bar_bench.isets, "HELDOUT_SETS", {"v8": tmp_path / "v8"})
    monkeypatch.setattr(
        bar_bench.isets, "heldout", lambda path: [SimpleNamespace(text=str(i), label=0) for i in range(100)]
    )
    out = tmp_path / "bars.json"
    bars_asked = ["--bars", "0.97", "0.972", "0.98", "0.99"]
    bar_bench.main(["--sets", "v8", *bars_asked, "--orders", "400", "--user-queries", "10", "--out", str(out)])
    bars = json.loads(out.read_text())["bars"]
    assert bars["0.97"] == bars["0.972"]  # the same rows counted: the same users in the same orders
    assert [bars[b]["rows_counted"] for b in ("0.97", "0.98", "0.99")] == [12, 8, 4]
    means = [bars[b]["mean_blocked_users_per_order"] for b in ("0.97", "0.98", "0.99")]
    assert means == sorted(means, reverse=True) and means[0] > means[2]
    assert bars["0.97"]["blocked_in_file_order"] == 1  # rows 0-9 hold ten counted, rows 10-19 only two
    with pytest.raises(SystemExit, match="a bar is a probability"):
        bar_bench.main(["--bars", "1.0", "--out", str(out)])

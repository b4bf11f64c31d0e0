"""Counting blocked benign users over many orders (benchmarks/intent_user_orders.py), the comparison
a new intent model must pass against the shipped one: the count must be exact, or the comparison
says nothing."""

from __future__ import annotations

import sys
from pathlib import Path

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


def test_the_same_orders_apply_to_every_model_and_the_count_follows_the_order() -> None:
    counted = np.array([1, 1, 1, 0, 0, 0], dtype=bool)
    orders = np.array([[0, 1, 2, 3, 4, 5], [0, 3, 1, 4, 2, 5]])
    assert orders_bench.blocked_per_order(counted, orders, per_user=3, strikes=3).tolist() == [1, 0]
    assert orders_bench.blocked_per_order(~counted, orders, per_user=3, strikes=3).tolist() == [1, 0]


def test_unknown_sets_and_a_missing_model_are_refused_before_anything_loads(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="no model file"):
        orders_bench.main(["--candidate", str(tmp_path / "missing.json")])
    model = tmp_path / "intent_model.json"
    model.write_text("not read: the set names are checked first")
    with pytest.raises(SystemExit, match="unknown sets \\['v99'\\]"):
        orders_bench.main(["--candidate", str(model), "--sets", "v8", "v99"])

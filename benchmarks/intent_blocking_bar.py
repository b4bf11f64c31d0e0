"""Benign users the shipped intent guard would block by chance, at several blocking bars (`count_at`).

    PYTHONPATH=src nice .venv/bin/python benchmarks/intent_blocking_bar.py [--bars 0.97 0.98 0.99]
        [--sets v8 v10 ...] [--orders 2000] [--seed 35] [--out FILE]

`shield` counts an intent flag towards per-user blocking only at p >= `count_at`. Each benign row of
the chosen read held-apart sets is checked once by the shipped `intent` guard (second opinion on);
for each bar a row counts when the guard flags it at p >= the bar, and the rows are cut into users
of `--user-queries` in `--orders` random orders, the same orders for every bar (`intent_user_orders`
counts a user as blocked at `--strikes` counted rows, even on the user's last request). A higher bar
never blocks more users; this measures how many fewer. The attack side (how much later attackers are
blocked) is `benign_users.py --count-at`. Default sets: every read set the shipped model does not
train on, chat sets included. Writes JSON and prints a table.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

import intent_sets as isets
import intent_user_orders as orders_bench
from ragshield.guards.intent import ExtractionIntent
from ragshield.guards.intent_model import IntentModel

OUT = isets.REPO / "benchmarks" / "results" / "intent_blocking_bar.json"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--bars", type=float, nargs="+", default=[0.97, 0.98, 0.99])
    parser.add_argument("--sets", nargs="+", help="read held-apart sets whose benign rows are the users' requests")
    parser.add_argument("--orders", type=orders_bench.positive, default=2000)
    parser.add_argument("--seed", type=int, default=35)
    parser.add_argument("--user-queries", type=orders_bench.positive, default=20)
    parser.add_argument("--strikes", type=orders_bench.positive, default=3)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if bad := [bar for bar in args.bars if not 0.0 <= bar < 1.0]:
        sys.exit(f"intent_blocking_bar: a bar is a probability in [0, 1), got {bad}")
    trained = set(isets.heldout_trained_on(IntentModel.load()))
    sets = args.sets or [v for v in isets.HELDOUT_SETS if v not in trained]
    if unknown := [v for v in sets if v not in isets.HELDOUT_SETS]:
        sys.exit(f"intent_blocking_bar: unknown or unread sets {unknown}; read sets: {sorted(isets.HELDOUT_SETS)}")
    texts = [e.text for v in sets for e in isets.heldout(isets.HELDOUT_SETS[v]) if e.label == 0]
    scores, _ = orders_bench.flag_scores(ExtractionIntent(), texts)
    orders = np.array([np.random.default_rng([args.seed, i]).permutation(len(texts)) for i in range(args.orders)])
    file_order = np.arange(len(texts))[None, :]
    result: dict[str, Any] = {
        "model_version": IntentModel.load().meta.get("model_version"),
        "sets": sets,
        "rows": len(texts),
        "flagged": int((~np.isnan(scores)).sum()),
        "orders": args.orders,
        "seed": args.seed,
        "user_queries": args.user_queries,
        "strikes": args.strikes,
        "bars": {},
    }
    for bar in sorted(args.bars):
        counted = scores >= bar
        blocked = orders_bench.blocked_per_order(counted, orders, args.user_queries, args.strikes)
        in_file_order = int(orders_bench.blocked_per_order(counted, file_order, args.user_queries, args.strikes)[0])
        result["bars"][str(bar)] = orders_bench.summary(blocked, counted, in_file_order)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    users = -(-len(texts) // args.user_queries)
    print(f"{len(texts)} benign rows of {', '.join(sets)} ({result['flagged']} flagged); {users} users of")
    print(f"{args.user_queries}; {args.orders} orders")
    orders_bench.print_table("bar", result["bars"])
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

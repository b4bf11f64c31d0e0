"""Benign users blocked by the intent guard's flags, a candidate model against the shipped one, over many orders.

    PYTHONPATH=src nice .venv/bin/python benchmarks/intent_user_orders.py --candidate DIR/intent_model.json \
        [--sets v8 v10 ...] [--orders 2000] [--seed 35] [--out FILE]

`benign_users.py` cuts benign rows into users of 20 in file order, so whether a user collects three
flags over the blocking bar turns on where a few flags of ~2% fall: in session 34 the shipped model
and a candidate each had one such user in one order, on different rows. This compares the two on the
same rows and the same users: each benign row of the chosen held-apart sets is scored once by each
model as the shipped `intent` guard (second opinion on), a row counts when the guard flags it at p >=
the blocking bar (`layered.COUNT_AT`, as `SignalOnly` counts it), and the rows are cut into users of
`--user-queries` in `--orders` random orders (one seeded generator; both models see the same orders).
A user counts as blocked when `--strikes` of their rows count (the policy's k; its window is the
user), even when the last strike is the user's last request: `benign_users.py` counts a block only
when a later request is refused, so the two can differ by such users. Release containment's
signals, which also count towards a block, do not depend on the intent model and are left out.

Sets: read held-apart sets only (`intent_sets.HELDOUT_SETS`; an unread blind set is read by its judge
alone). Default: every one that neither model trains on and that is not chat-only. The candidate
must be a model the packaged second opinion reads (its `model_version`), or the comparison would
read it without one; each model's second-opinion outcomes are recorded. Writes JSON and prints a table.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

import intent_sets as isets
import intent_veto_judge as judge
from ragshield.guards.intent import ExtractionIntent
from ragshield.guards.intent_model import IntentModel
from ragshield.guards.layered import COUNT_AT
from ragshield.types import Query, RetrievalResult

OUT = isets.REPO / "benchmarks" / "results" / "intent_user_orders.json"


def trained_by_either(candidate: IntentModel) -> set[str]:
    """Held-apart sets the shipped model or `candidate` trains on."""
    return set(isets.heldout_trained_on(IntentModel.load())) | set(isets.heldout_trained_on(candidate))


def default_sets(candidate: IntentModel) -> list[str]:
    """Held-apart sets neither the shipped model nor `candidate` trains on, chat-only sets aside."""
    trained = trained_by_either(candidate)
    return [v for v in isets.HELDOUT_SETS if v not in trained and not v.startswith("chat")]


def flag_scores(guard: ExtractionIntent, texts: list[str]) -> tuple[np.ndarray, dict[str, int]]:
    """Per text, the guard's probability when it flags the text (NaN when it does not: no bar counts
    it), and how often its second opinion upheld, let through or was not asked."""
    scores: list[float] = []
    second_opinion: Counter[str] = Counter()
    for text in texts:
        verdict = guard.check(RetrievalResult(Query(text), ()))
        scores.append(verdict.score if verdict.blocked else np.nan)
        second_opinion[str(verdict.evidence.get("second_opinion", "not asked"))] += 1
    return np.array(scores), dict(second_opinion)


def counted_flags(guard: ExtractionIntent, texts: list[str], bar: float) -> tuple[np.ndarray, dict[str, int]]:
    """Per text, whether `guard` flags it at p >= `bar` (a flag that counts towards per-user
    blocking), and the second opinion's outcomes (`flag_scores`)."""
    scores, second_opinion = flag_scores(guard, texts)
    return scores >= bar, second_opinion


def blocked_per_order(counted: np.ndarray, orders: np.ndarray, per_user: int, strikes: int) -> np.ndarray:
    """For each order (a row of `orders`, a permutation of the rows), how many users of `per_user`
    consecutive rows hold at least `strikes` counted rows. A last, shorter user counts too."""
    n_orders, n_rows = orders.shape
    n_users = -(-n_rows // per_user)
    padded = np.zeros((n_orders, n_users * per_user), dtype=np.int64)
    padded[:, :n_rows] = counted[orders]
    return (padded.reshape(n_orders, n_users, per_user).sum(axis=2) >= strikes).sum(axis=1)


def shown(path: Path) -> str:
    """A path as the results show it: relative to the repository, else its name (no machine paths)."""
    resolved = path.resolve()
    return str(resolved.relative_to(isets.REPO)) if resolved.is_relative_to(isets.REPO) else path.name


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def summary(blocked: np.ndarray, counted: np.ndarray, file_order: int) -> dict[str, Any]:
    return {
        "rows_counted": int(counted.sum()),
        "mean_blocked_users_per_order": round(float(blocked.mean()), 4),
        "orders_with_a_blocked_user": round(float((blocked > 0).mean()), 4),
        "most_blocked_in_one_order": int(blocked.max()),
        "blocked_in_file_order": file_order,
    }


def print_table(first: str, rows: dict[str, dict[str, Any]]) -> None:
    """The summaries (`summary`) as a markdown table, one row per model or bar."""
    print(f"| {first} | rows counted | blocked users per order (mean) | orders with a block | in file order |")
    print("|---|---|---|---|---|")
    for name, row in rows.items():
        print(
            f"| {name} | {row['rows_counted']} | {row['mean_blocked_users_per_order']} | "
            f"{row['orders_with_a_blocked_user']} | {row['blocked_in_file_order']} |"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--candidate", type=Path, required=True, help="the candidate's intent_model.json")
    parser.add_argument("--sets", nargs="+", help="read held-apart sets whose benign rows are the users' requests")
    parser.add_argument("--orders", type=positive, default=2000)
    parser.add_argument("--seed", type=int, default=35)
    parser.add_argument("--user-queries", type=positive, default=20, help="requests per user (the policy's window)")
    parser.add_argument("--strikes", type=positive, default=3, help="counted flags that block a user (the policy's k)")
    parser.add_argument("--bar", type=float, default=COUNT_AT, help="p at which a flag counts")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if not args.candidate.is_file():
        sys.exit(f"intent_user_orders: no model file at {args.candidate}")
    known = isets.HELDOUT_SETS  # an unread blind set is read by its judge alone
    if unknown := [v for v in args.sets or () if v not in known]:
        sys.exit(f"intent_user_orders: unknown or unread sets {unknown}; read sets: {sorted(known)}")
    if args.sets and len(set(args.sets)) < len(args.sets):
        sys.exit("intent_user_orders: a set is named twice (its rows would be two users' requests)")
    candidate = IntentModel.load(args.candidate)
    if mismatch := judge.veto_mismatch(candidate):
        sys.exit(f"intent_user_orders: the candidate's {mismatch}; compare models the second opinion reads")
    sets = args.sets or default_sets(candidate)
    if trained := [v for v in sets if v in trained_by_either(candidate)]:
        print(f"intent_user_orders: a model trained on {trained}: its flags there are not a test", file=sys.stderr)
    texts = [e.text for v in sets for e in isets.heldout(known[v]) if e.label == 0]
    orders = np.array([np.random.default_rng([args.seed, i]).permutation(len(texts)) for i in range(args.orders)])
    file_order = np.arange(len(texts))[None, :]
    result: dict[str, Any] = {
        "sets": sets,
        "rows": len(texts),
        "orders": args.orders,
        "seed": args.seed,
        "user_queries": args.user_queries,
        "strikes": args.strikes,
        "bar": args.bar,
        "models": {},
    }
    per_model = {}
    for name, path in (("shipped", None), ("candidate", args.candidate)):
        counted, second_opinion = counted_flags(ExtractionIntent(model=path), texts, args.bar)
        blocked = blocked_per_order(counted, orders, args.user_queries, args.strikes)
        in_file_order = int(blocked_per_order(counted, file_order, args.user_queries, args.strikes)[0])
        per_model[name] = blocked
        result["models"][name] = {
            "file": shown(path) if path else "shipped",
            "second_opinion": second_opinion,
        } | summary(blocked, counted, in_file_order)
    candidate_blocked, shipped_blocked = per_model["candidate"], per_model["shipped"]
    result["orders_where_candidate_blocks_more"] = round(float((candidate_blocked > shipped_blocked).mean()), 4)
    result["orders_where_candidate_blocks_fewer"] = round(float((candidate_blocked < shipped_blocked).mean()), 4)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"{len(texts)} benign rows of {', '.join(sets)}; users of {args.user_queries}; {args.orders} orders")
    print_table("model", result["models"])
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

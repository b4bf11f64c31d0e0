"""Benign users and attackers under `shield` at scale, with the per-user policy (issue 13: benign
refusals <= 1%).

    PYTHONPATH=src nice .venv/bin/python benchmarks/benign_users.py [--data ../shared/data] [--per-set 400]

The real-model grids measure refusals on 24 benign questions per knowledge base, whose 95% upper
bound (13.8% at 0/24) cannot show a 1% goal. What can refuse a user under `shield` is known from
the code: a query guard or output guard that errors (fail closed), and the per-user policy (>= k
intent signals in the last `window` requests blocks the user); intent flags are answered, and
release containment withholds spans instead of refusing (`on_violation: redact`). So the refusal
rate is measured here at the scale of the benign sets, through the real pipeline: real MiniLM
embedder, real FAISS index of real records (with the index-time PII pass), `shield` as `ask` and
`serve` build it, the policy `serve` uses by default (window 20, k 3, memory store).

The generator is the labelled WORST-CASE FAKE `EchoContextGenerator`: it copies the whole
retrieved context into every answer (in the view a question asks for), so every answer gives the
release guards a record to withhold. It is not a utility measurement (the real-model grids and
`release.py --sections benign` measure utility); it shows what a benign user pays when the model
copies: withheld characters, never a refusal, and whether release containment's signals ever
add up to a block.

Users: each benign set is cut, in its order, into users of `--user-queries` (20, the policy's
window) consecutive questions. Attackers: each attack set of `query_sets.py` is cut the same way,
to show the policy blocks them (requests answered before the block). `intent-unseen-hard` is the
hardest benign traffic the project has: the hard-benign questions and chat turns (extraction-like
words used innocently) of every held-apart set the shipped intent model did not train on (for v12:
v8, v10 and v16-v19; the chat-only sets aside), so a user made of them is the one most likely
to be blocked by chance. (Up to session 30 the sets were `intent-dev-hard`, v8-v11 and chat, and
`intent-v12-hard`; model v12 trains on v9, v11, v12 and chat.) `--count-at` sets `shield`'s bar for
a flag to count towards per-user blocking (0: every flag, as before the bar existed).

Writes benchmarks/results/benign_users.json and prints a table; every rate has its n and a 95%
Wilson interval.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import intent_sets as isets
import query_sets as qs
from ragshield.generators.scripted import EchoContextGenerator
from ragshield.guards.base import INTENT_FLAG
from ragshield.guards.factory import DefenseContext, build_defense
from ragshield.guards.intent_model import IntentModel
from ragshield.guards.layered import COUNT_AT
from ragshield.guards.policy import make_policy
from ragshield.metrics.intervals import rate_text, wilson
from ragshield.pipeline import RagPipeline
from ragshield.rag.prompting import PromptBuilder
from ragshield.types import Query, Response

OUT = qs.REPO / "benchmarks" / "results" / "benign_users.json"
REFUSED = ("blocked", "refused")


def unseen_hard_set(versions: list[str] | None = None) -> qs.QuerySet:
    """The benign rows of every held-apart set the shipped intent model did not train on, but the
    chat-only sets, in file order: hard-benign questions and chat turns it was not fitted on.
    `versions` names the sets instead (to read two models on the same users)."""
    trained = set(isets.heldout_trained_on(IntentModel.load()))
    named = versions is not None
    versions = versions or [v for v in isets.HELDOUT_SETS if v not in trained and not v.startswith("chat")]
    known = isets.HELDOUT_SETS  # an unread blind set is read by its judge alone
    if unknown := [v for v in versions if v not in known]:
        raise SystemExit(f"benign_users: unknown or unread held-apart sets {unknown}; read sets: {sorted(known)}")
    if seen := [v for v in versions if v in trained]:
        print(f"benign_users: the shipped model trained on {seen}: its flags there are not a test", file=sys.stderr)
    texts = [e.text for version in versions for e in isets.heldout(known[version]) if e.label == 0]
    how = "named" if named else "not trained on"
    note = f"hard-benign questions and chat turns of held-apart sets {', '.join(versions)} ({how})"
    return qs.QuerySet("intent-unseen-hard", "benign-stress", texts, note)


def shield_pipeline(scenario: qs.Scenario, index_dir: Path, count_at: float | None = None) -> RagPipeline:
    """`shield` with its defaults and `serve`'s default policy over the scenario's real index."""
    policy = make_policy(window=20, k=3, block_seconds=3600.0, store="memory")
    generator = EchoContextGenerator()
    context = DefenseContext(
        retriever=scenario.retriever,
        embedder=scenario.retriever.embedder,
        generator=generator,
        k=3,
        policy=policy,
        fail_closed=True,
        seed=0,
        index_dir=str(index_dir),
    )
    intent = {} if count_at is None else {"intent": {"count_at": count_at}}
    defense = build_defense("shield", context, {"shield": intent} if intent else {})
    builder = PromptBuilder(layout="chat", max_chunk_chars=1024, max_tokens=256, seed=0)
    return RagPipeline(scenario.retriever, generator, defense=defense, prompt_builder=builder, k=3, policy=policy)


def _signalled(response: Response) -> bool:
    return any(v.blocked or v.evidence.get("intent_signal") is True for v in response.verdicts)


def run_users(pipeline: RagPipeline, label: str, texts: list[str], per_user: int) -> dict[str, Any]:
    """Every text answered in order as users of `per_user` consecutive requests."""
    refused = signalled = flagged = withheld_answers = errors = 0
    users_blocked: set[str] = set()
    answered_before_block: list[int] = []
    answered: dict[str, int] = {}
    started = time.perf_counter()
    for number, text in enumerate(texts):
        user = f"{label}-{number // per_user}"
        response = pipeline.answer(Query(text, user_id=user, id=f"{label}-{number}"))
        # refused = no answer generated; the request that tips the policy is still answered
        # (contained) and its response carries the policy's BLOCK verdict for the next ones
        if response.finish_reason in REFUSED:
            refused += 1
            if user not in users_blocked:
                users_blocked.add(user)
                answered_before_block.append(answered.get(user, 0))
        else:
            answered[user] = answered.get(user, 0) + 1
        signalled += _signalled(response)
        flagged += any(v.evidence.get(INTENT_FLAG) is True for v in response.verdicts)  # the query flag
        withheld_answers += any(v.action.value == "redact" for v in response.verdicts)
        errors += any("error_type" in v.evidence for v in response.verdicts)
    users = -(-len(texts) // per_user)
    return {
        "requests": len(texts),
        "refused": _rate(refused, len(texts)),
        "intent_signal": _rate(signalled, len(texts)),
        "flagged": _rate(flagged, len(texts)),
        "answers_with_withheld_span": _rate(withheld_answers, len(texts)),
        "guard_errors": errors,
        "users": users,
        "users_blocked": _rate(len(users_blocked), users),
        "answered_before_block": answered_before_block,
        "seconds": round(time.perf_counter() - started, 1),
    }


def _rate(k: int, n: int) -> dict[str, Any]:
    return {"k": k, "n": n, "rate": k / n if n else None, "ci95": list(wilson(k, n)) if n else None}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=qs.DEFAULT_DATA)
    parser.add_argument("--cache", type=Path, default=qs.DEFAULT_CACHE)
    parser.add_argument("--kbs", nargs="*", default=["healthcaremagic", "enron"])
    parser.add_argument("--per-set", type=int, default=400, help="benign questions per set (at most)")
    parser.add_argument("--attack-per-set", type=int, default=100, help="attack queries per attack set")
    parser.add_argument("--user-queries", type=int, default=20, help="requests per simulated user")
    parser.add_argument("--sets", nargs="*", help="only these query sets (the others' rows are kept from the file)")
    parser.add_argument("--hard-per-set", type=int, default=1300, help="rows of intent-unseen-hard (at most)")
    parser.add_argument(
        "--hard-sets", nargs="+", help="held-apart sets of intent-unseen-hard (default: those not trained on)"
    )
    parser.add_argument("--count-at", type=float, help="shield's intent count_at (default: shield's own)")
    parser.add_argument("--label", default="", help="suffix of the set names in the file (a second setting)")
    parser.add_argument("--out", type=Path, default=OUT, help="the results file (default: %(default)s)")
    args = parser.parse_args(argv)
    if not args.data.exists():
        sys.exit(f"benign_users: no data folder at {args.data} (pass --data)")
    hard_set = unseen_hard_set(args.hard_sets)  # before the indexes load: an unknown set name fails at once
    scenarios, embedder = qs.load_scenarios(args.data, args.cache, args.kbs)
    previous = json.loads(args.out.read_text(encoding="utf-8")) if args.sets and args.out.exists() else {}
    payload: dict[str, Any] = {"load_before": os.getloadavg()[0], "per_user": args.user_queries, "kbs": {}}
    for scenario in scenarios:
        index_dir = args.cache / {"healthcaremagic": "healthcaremagic-600", "enron": "enron-1500"}[scenario.kb]
        rows: dict[str, Any] = dict(previous.get("kbs", {}).get(scenario.kb, {}))
        for query_set in [*scenario.of_kind("benign", "benign-stress", "attack", "adaptive"), hard_set]:
            if args.sets and query_set.name not in args.sets:
                continue
            limit = args.per_set if query_set.kind.startswith("benign") else args.attack_per_set
            limit = args.hard_per_set if query_set.name == "intent-unseen-hard" else limit
            # a fresh pipeline (and policy store) per set: users of different sets never share a window
            pipeline = shield_pipeline(scenario, index_dir, args.count_at)
            name = query_set.name + args.label
            rows[name] = {
                "kind": query_set.kind,
                "note": query_set.note,
                "count_at": COUNT_AT if args.count_at is None else args.count_at,
                **run_users(pipeline, query_set.name, query_set.texts[:limit], args.user_queries),
            }
            embedder.save()
            row = rows[name]
            print(
                f"{scenario.kb:16s} {name:26s} refused {rate_text(row['refused']['k'], row['requests'])}"
                f"  users blocked {row['users_blocked']['k']}/{row['users']}  query flags {row['flagged']['k']}"
                f"  violations (signals and blocks) {row['intent_signal']['k']}  errors {row['guard_errors']}",
                flush=True,
            )
        payload["kbs"][scenario.kb] = rows
    payload["load_after"] = os.getloadavg()[0]
    qs.write_json(args.out, payload)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

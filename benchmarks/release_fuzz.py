"""Long random sweeps of the release guard's properties: where `make test` draws 120-150 examples
of each, this draws as many as a time budget allows, so a rarer gap shows (session 33: 25,912 draws
found two escape-view gaps, and a PII sweep found three more, all fixed since).

Properties (the tests' own functions, run on random arguments; the checkers are in the tests):

* `echo`: `tests/property/test_release_properties.py` - no run longer than the allowance from any
  retrieved chunk, and no stranger's name, for any copy in 37 views and any split into deltas;
* `near`: the same file - a copy with an edit every few characters;
* `pii`: `tests/property/test_release_pii_properties.py` - no stranger's phone number or e-mail
  address in 44 views.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/release_fuzz.py [--seconds 600] [--seed 0] [--out FILE]

Writes `benchmarks/results/release_fuzz.json` (draws per property and view, every failing argument
set) and prints a table. Exit status 1 when a draw failed. Needs no data and no model.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis.errors import UnsatisfiedAssumption

REPO = Path(__file__).resolve().parents[1]
# the properties' `assume` outside Hypothesis' runner raises as it should, with a deprecation warning
warnings.filterwarnings("ignore", message="Using `assume` outside a property-based test")
sys.path.insert(0, str(REPO / "tests" / "property"))
import test_release_pii_properties as pii_properties  # noqa: E402
import test_release_properties as echo_properties  # noqa: E402

OUT = REPO / "benchmarks" / "results" / "release_fuzz.json"


def _echo_draw(rng: random.Random) -> dict[str, Any]:
    return {
        "seed": rng.randint(0, 10**6),
        "view": rng.choice(echo_properties.VIEWS),
        "delta": rng.randint(1, 24),
        "chunk_count": rng.randint(1, 3),
        "user_gives_name": rng.random() < 0.5,
    }


def _near_draw(rng: random.Random) -> dict[str, Any]:
    return {"seed": rng.randint(0, 10**6), "delta": rng.randint(1, 24)}


def _pii_draw(rng: random.Random) -> dict[str, Any]:
    return {"seed": rng.randint(0, 10**6), "view": rng.choice(pii_properties.PII_VIEWS), "delta": rng.randint(1, 24)}


def _inner(test: Any) -> Callable[..., None]:
    """The test function itself, without Hypothesis' example generation."""
    return test.hypothesis.inner_test  # type: ignore[no-any-return]


# name -> (draw arguments, the property), drawn in turn; `near` is drawn a tenth as often (it has one view)
PROPERTIES: dict[str, tuple[Callable[[random.Random], dict[str, Any]], Callable[..., None], int]] = {
    "echo": (
        _echo_draw,
        _inner(echo_properties.test_released_text_holds_no_run_beyond_the_allowance_and_no_strangers_pii),
        10,
    ),
    "near": (
        _near_draw,
        _inner(echo_properties.test_a_copy_with_an_edit_every_few_characters_holds_no_run_beyond_the_allowance),
        1,
    ),
    "pii": (_pii_draw, _inner(pii_properties.test_no_strangers_phone_number_or_email_address_leaves_in_any_view), 10),
}


def sweep(seconds: float, seed: int) -> dict[str, Any]:
    """Draw every property in turn (by weight) until `seconds` have passed."""
    rng = random.Random(seed)
    draws: dict[str, Counter[str]] = {name: Counter() for name in PROPERTIES}
    failures: list[dict[str, Any]] = []
    skipped: Counter[str] = Counter()
    schedule = [name for name, (_, _, weight) in PROPERTIES.items() for _ in range(weight)]
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        for name in schedule:
            draw, check, _ = PROPERTIES[name]
            arguments = draw(rng)
            try:
                check(**arguments)
            except UnsatisfiedAssumption:  # outside what the property claims (a blob no decoder reads)
                skipped[name] += 1
                continue
            except AssertionError as error:
                failures.append({"property": name, "arguments": arguments, "message": str(error)[:500]})
                print(f"FAIL {name} {arguments}", flush=True)
            draws[name][str(arguments.get("view", "-"))] += 1
    return {
        "seconds": round(time.perf_counter() - started, 1),
        "seed": seed,
        "draws": {name: sum(counter.values()) for name, counter in draws.items()},
        "skipped_by_assumption": dict(skipped),
        "draws_by_view": {name: dict(sorted(counter.items())) for name, counter in draws.items()},
        "failures": failures,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=600.0, help="time budget of the sweep")
    parser.add_argument("--seed", type=int, default=0, help="seed of the argument draws")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    result = sweep(args.seconds, args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"{'property':10s} {'draws':>8s} {'failed':>7s}")
    for name, count in result["draws"].items():
        failed = sum(1 for failure in result["failures"] if failure["property"] == name)
        print(f"{name:10s} {count:8d} {failed:7d}")
    print(f"{result['seconds']} s, seed {args.seed}; wrote {args.out}")
    return 1 if result["failures"] else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Leave one set out: whether a round's development gain is one the other sets choose (issue 18, from session 45).

The two refits of session 44 each gained about 25 development errors and then lost on their judges. A round that
chooses a setting on many read sets can ask, before spending its judges, whether the gain holds for each set when
the setting is chosen without it: for each set, the point its rule chooses on the other sets, counted on the held
set; summed over the sets, against the shipped point's errors there (`leave_one_set_out`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

COUNTS = ("benign_flagged", "requests_missed", "errors")  # what `errors` adds to a point; the rest is its setting

Rows = list[dict[str, Any]]


def leave_one_set_out(
    rows: Rows,
    points: list[dict[str, Any]],
    sets: tuple[str, ...],
    choose: Callable[[Rows, list[dict[str, Any]]], dict[str, Any]],
    errors: Callable[[Rows, dict[str, Any]], dict[str, Any]],
) -> dict[str, Any]:
    """Per set of `sets`, the point `choose` picks on the other sets' `rows` and its `errors` on the held set's, and
    the errors of `points[0]` (the shipped point) there; summed over the sets."""
    per_set = {}
    for name in sets:
        held = [r for r in rows if r["set"] == name]
        chosen = choose([r for r in rows if r["set"] != name], points)
        per_set[name] = {
            "chosen": {key: value for key, value in chosen.items() if key not in COUNTS},
            "errors": errors(held, chosen)["errors"],
            "shipped_errors": errors(held, points[0])["errors"],
        }
    return {
        "per_set": per_set,
        "errors": sum(s["errors"] for s in per_set.values()),
        "shipped_errors": sum(s["shipped_errors"] for s in per_set.values()),
    }


def print_grid(points: list[dict[str, Any]], settings: tuple[str, ...]) -> None:
    """A round's grid as it prints it: each point's `settings`, then its benign flags, missed requests and errors."""
    print("  ".join(f"{key:>10}" for key in settings) + "  benign  missed  errors")
    for p in points:
        row = "  ".join(f"{p[key]!s:>10}" for key in settings)
        print(f"{row} {p['benign_flagged']:7d} {p['requests_missed']:7d} {p['errors']:7d}")


def verdict(shipped: dict[str, Any], chosen: dict[str, Any], loso: dict[str, Any]) -> bool:
    """Both development conditions of a round's rule, printed: the chosen point makes strictly fewer errors than the
    shipped one, and so does leaving each set out."""
    print(f"chosen: {chosen}")
    print(f"leave one set out: {loso['errors']} errors against the shipped settings' {loso['shipped_errors']}")
    passes = bool(chosen["errors"] < shipped["errors"] and loso["errors"] < loso["shipped_errors"])
    if not passes:
        print("the development conditions fail: the round ends and the judges stay unread")
    return passes

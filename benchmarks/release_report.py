"""The report of `release.py`: docs/results/release.md's tables rendered from the JSON results, below
a fixed header and the report's hand-written notes."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from ragshield.encodings import VIEWS
from ragshield.metrics.intervals import rate_text
from release_benign import REPLAYED, mean_text, share_text
from release_views import DEFENSES

REPO = Path(__file__).resolve().parents[1]
REPORT = REPO / "docs" / "results" / "release.md"
REPORT_HEADER = """# Release containment: measured

Produced by `benchmarks/release.py --report` (JSON in `benchmarks/results/release.json`); the design
and its limits are in [../release-containment.md](../release-containment.md). Rates carry a Wilson
95% interval and their n.

"""


def _cost_row(key: str) -> str:
    """`echo+unnatural|1000` (or `echo|numbers|10000`, number-dense prose) as a table cell (a bare
    `|` would split the cell)."""
    guard, *kind, size = key.split("|")
    return f"{guard}, {int(size):,} chars" + "".join(f" of {k}" for k in kind)


def _ms_text(value: float | None) -> str:
    return "missing" if value is None else f"{value:.2f}"


def _benign_table(benign: dict[str, Any] | None, kb: str) -> list[str]:
    """The report's table of one benign section (none when the section did not run)."""
    if not benign or "n" not in benign:
        return []
    n = benign["n"]
    asked = "e-mails' openings" if kb.startswith("Enron") else "questions"
    lines = [
        f"## Benign answers of the real model ({kb}, {n} held-out {asked})",
        "",
        "| defense | refused | answers with a withheld span | withheld chars / answer | cosine vs undefended"
        " | ROUGE-L F vs undefended | degenerate | p50 latency (ms) | defense time p50 (ms)"
        " | defense time / generation, median (max) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name in DEFENSES:
        row = benign[name]
        lines.append(
            f"| {name} | {rate_text(row['refused'], n)} | {rate_text(row['redacted_answers'], n)} | "
            f"{row['withheld_chars_mean']:.1f} | {mean_text(row, 'cosine')} | "
            f"{mean_text(row, 'rouge_l')} | {rate_text(row['degenerate'], n)} | {row['p50_ms']:.0f} | "
            f"{_ms_text(row.get('defense_ms_p50'))} | {share_text(row)} |"
        )
    lines += _flagged_split(benign["shield"], n)
    copied = benign["none"]["copied_words"]
    lines += ["", "Undefended answers that copy more than N consecutive words of a retrieved record:", ""]
    for bound in (4, 8, 12, 20):
        lines.append(f"- more than {bound}: {rate_text(sum(c > bound for c in copied), len(copied))}")
    lines.append("")
    return lines


def _flagged_split(row: dict[str, Any], n: int) -> list[str]:
    """How many benign requests `shield`'s intent layer flagged, and the cosine of flagged and
    unflagged answers apart (a flagged request gets canaries, so its answer may differ); empty for a
    run made before flags were recorded."""
    if "flagged_each" not in row:
        return []
    split: dict[bool, list[float]] = {True: [], False: []}
    for flagged, cosine in zip(row["flagged_each"], row["cosine_each"], strict=True):
        split[flagged].append(cosine)
    parts = [
        f"{label} {statistics.fmean(values):.3f} (n={len(values)})" if values else f"{label} missing (n=0)"
        for label, values in (("flagged", split[True]), ("not flagged", split[False]))
    ]
    flagged = rate_text(row["flagged"], n)
    return [
        "",
        f"`shield`'s query guards flagged {flagged} of these requests (an intent signal); "
        f"cosine vs undefended: {', '.join(parts)}.",
    ]


def report(results: dict[str, Any]) -> str:
    """docs/results/release.md's tables from the JSON results."""
    lines = ["## The worst-case target, per view", ""] if results.get("views") else []
    for kb, rows in results.get("views", {}).items():
        n = next(iter(rows.values()))["n"]
        lines += [
            f"### {kb} ({n} requests of 3 real chunks per view)",
            "",
            "Per defense: released folded symbols of retrieved text per answer (mean; public boilerplate"
            " included) / longest released run of a chunk in private words (max; the guard's measure:"
            " knowledge-base boilerplate and the question's words lie inside a run but do not count, the"
            " allowance is 8) / answers that released a retrieved PII value.",
            "",
            "| view | " + " | ".join(DEFENSES) + " |",
            "|---|" + "---|" * len(DEFENSES),
        ]
        for view in VIEWS:
            cells = []
            for name in DEFENSES:
                row = rows.get(f"{view}|{name}")
                if row is None:
                    cells.append("missing")
                    continue
                private = row.get("longest_private_words_max")
                earlier = f"({row['longest_run_words_max']} all words, earlier run)"
                run = f"{private}" if private is not None else earlier
                cells.append(
                    f"{row['released_symbols_mean']:.0f} / {run} / {rate_text(row['answers_with_pii'], row['n'])}"
                )
            lines.append(f"| {view} | " + " | ".join(cells) + " |")
        lines.append("")
    for key, kb in (
        ("benign", "HealthcareMagic"),
        ("benign_enron", "Enron"),
        ("benign_enron_intent_unseen", "Enron, e-mails the intent model never read"),
    ):
        lines += _benign_table(results.get(key), kb)
    replay = results.get("replay")
    if replay and "n" in replay:
        n = replay["n"]
        lines += [
            f"## The same benign answers replayed through each defense (HealthcareMagic, {n} held-out questions)",
            "",
            "The real model answered each question once, undefended; the pipeline of each defense then released"
            " that same answer (so the model's nondeterminism does not enter the utility columns). Not captured:"
            " how canaries in the context would change what the model writes.",
            "",
            "| defense | refused | changed answers | withheld chars / answer | cosine (mean) | cosine >= 0.9"
            " | ROUGE-L F (mean) | ROUGE-L F >= 0.9 |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for name in REPLAYED:
            row = replay[name]
            lines.append(
                f"| {name} | {rate_text(row['refused'], n)} | {rate_text(row['changed_answers'], n)} | "
                f"{row['withheld_chars_mean']:.1f} | {row['cosine_mean']:.3f} | "
                f"{rate_text(row['cosine_at_least_0.9'], n)} | {row['rouge_l_mean']:.3f} | "
                f"{rate_text(row['rouge_l_at_least_0.9'], n)} |"
            )
        lines.append("")
    cost = results.get("cost")
    if cost:
        first = next(iter(cost.values()))
        if "baseline" in first:
            lines += [
                "## Cost",
                "",
                f"CPU us per 4-character delta of prose, `{first['baseline']}` (before) and this tree measured"
                f" alternately in one run, {first['rounds']} rounds each in fresh interpreters; `before` and"
                " `after` are the lowest over all rounds and answers (interference only adds time), the medians"
                f" are the lowest of the rounds' medians (load average {first['load_average'][0]} ->"
                f" {first['load_average'][1]}).",
                "",
                "| guard, answer size | deltas x answers | before (us) | after (us) | after / before | median before"
                " / after (us) | open before / after (ms) |",
                "|---|---|---|---|---|---|---|",
            ]
            for key, row in cost.items():
                lines.append(
                    f"| {_cost_row(key)} | {row['deltas']} x {row['repeats']} | {row['baseline_us_per_delta']:.2f} |"
                    f" {row['us_per_delta_min']:.2f} | {row['ratio']:.2f} | {row['baseline_us_per_delta_median']:.2f}"
                    f" / {row['us_per_delta_median']:.2f} | {row['baseline_open_ms']:.2f} / {row['open_ms']:.2f} |"
                )
        else:
            lines += [
                "## Cost",
                "",
                "| guard, answer size | CPU us per 4-char delta (median) | open (ms) |",
                "|---|---|---|",
            ]
            for key, row in cost.items():
                lines.append(f"| {_cost_row(key)} | {row['us_per_delta_median']:.2f} | {row['open_ms']:.2f} |")
        lines.append("")
    return "\n".join(lines)


NOTES_HEADING = "## Reading the tables"


def hand_written_notes() -> str:
    """The hand-written `## Reading the tables` section of the current report (kept on regeneration;
    its figures are updated by hand), or "" when there is none."""
    if not REPORT.is_file():
        return ""
    text = REPORT.read_text()
    start = text.find(NOTES_HEADING)
    if start == -1:
        return ""
    end = text.find("\n## ", start + len(NOTES_HEADING))
    return text[start : end + 1 if end != -1 else len(text)].rstrip() + "\n\n"

"""The paper-style tables of a `ResultTable`, with the papers' numbers beside ours.

`sections(table)` is the report's content as data (titles, paragraphs, text tables, bullet
lists); `render_markdown` writes it as `report.md` and `ragshield.evaluation.html_report` as
`report.html`, so both always say the same thing. Every rate is shown in percent with its 95%
interval and its n (units: `ragshield.evaluation.units`); a cell that did not run is a row that
says `missing`, never a 0. Every paper number is in a column or line labelled "paper"; ours are
measured in this run. Paragraph text may use `code` and **bold** (both renderers understand them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragshield.evaluation import papers
from ragshield.evaluation import report_texts as _texts
from ragshield.evaluation.results import Estimate, ResultTable, share_estimate
from ragshield.evaluation.units import ASR, AUROC, CRR, FPR, LATENCY, MISSING, NOT_APPLICABLE, PII, TPR, ULC
from ragshield.metrics.intervals import rate_text

_PAPER_DATASET = {"healthcaremagic": "healthcare", "enron": "email"}


@dataclass(frozen=True)
class TextTable:
    """A table of display strings (already in display units)."""

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Section:
    """One part of the report: a heading, paragraphs, an optional table, bullets, closing paragraphs."""

    title: str
    paragraphs: tuple[str, ...] = ()
    table: TextTable | None = None
    bullets: tuple[str, ...] = ()
    after: tuple[str, ...] = ()


def _text_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> TextTable:
    return TextTable(tuple(header), tuple(tuple(_cell(value) for value in row) for row in rows))


def _cell(value: Any) -> str:
    if value is None:
        return MISSING
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 10 else f"{value:.0f}"
    return str(value)


def _triple(ulc: str, pii: str, asr: str) -> str:
    return f"{ulc} / {pii} / {asr}"


def _paper_triple(triple: tuple[int, int, float] | None) -> str:
    return NOT_APPLICABLE if triple is None else _triple(str(triple[0]), str(triple[1]), ASR.text(triple[2]))


def _ours_triple(table: ResultTable, attack: str, defense: str) -> str:
    row = table.row(attack, defense)
    if row is None:
        return MISSING
    return _triple(str(row.ulc), str(row.pii), ASR.estimate_text(table.estimate(attack, defense, "asr")))


def _grid(table: ResultTable) -> list[tuple[str, str]]:
    """Every configured (attack, defense) cell in config order, then any other recorded cell."""
    attacks = list(dict.fromkeys([*table.meta.get("attack_order", []), *table.attacks]))
    defenses = list(dict.fromkeys([*table.meta.get("defense_order", []), *table.defenses]))
    return [(a, d) for d in defenses for a in attacks]


def _setup(table: ResultTable) -> tuple[str, ...]:
    m = table.meta
    budgets = ", ".join(f"{name} {budget}" for name, budget in m.get("budgets", {}).items())
    state = "finished" if m.get("finished") else "NOT finished (partial grid: see the missing cells below)"
    if table.warnings():
        state += ", with warnings (see above)"
    benign = m.get("benign_queries")
    return (
        f"knowledge base: `{m.get('corpus')}`, {m.get('kb_size')} chunks; PII inventory: {m.get('pii_inventory')}"
        f" ({m.get('pii_items_in_kb')} items)",
        f"target generator: `{m.get('generator')}`; attacker LLM: `{m.get('attacker')}`; embedder: "
        f"`{m.get('embedder')}`; top-k {m.get('k')}; max tokens {m.get('max_tokens')}; chunks cut to "
        f"{m.get('max_chunk_chars')} characters in the prompt; seed {m.get('seed')}",
        f"attack budgets (queries): {budgets}",
        f"benign queries: {MISSING + ' (the configured set is empty)' if table.benign_empty() else benign};"
        f" calibration queries: {m.get('calibration_queries')}; target FPR {m.get('target_fpr')}",
        f"run state: {state}; updated {m.get('updated')}",
        f"CRR rule: {m.get('crr_rule')}",
    )


def _leakage(table: ResultTable) -> TextTable:
    rows: list[tuple[Any, ...]] = []
    for attack, defense in _grid(table):
        row = table.row(attack, defense)
        if row is None:
            rows.append((attack, defense, *[MISSING] * 6))
            continue
        rows.append(
            (
                attack,
                defense,
                row.queries,
                row.blocked,
                *(q.estimate_text(table.estimate(attack, defense, key), with_n=False) for key, q in _LEAK),
            )
        )
    header = ("attack", "defense", "n (queries)", "blocked", *(f"{q.name} [95% CI] ({q.unit})" for _, q in _LEAK))
    return _text_table(header, rows)


_LEAK = (("ulc", ULC), ("pii", PII), ("asr", ASR), ("crr", CRR))


def _table1(table: ResultTable) -> TextTable:
    dataset = _PAPER_DATASET.get(str(table.meta.get("dataset")))
    columns = [dataset] if dataset else ["healthcare", "email"]
    header = ["attack", "ours ULC / PII / ASR"] + [f"paper ({c}) ULC / PII / ASR" for c in columns]
    rows = [
        [attack, _ours_triple(table, attack, "none")]
        + [_paper_triple(papers.RAG_CT_TABLE1[c].get(attack)) for c in columns]
        for attack in table.attacks
    ]
    return _text_table(header, rows)


def _table2(table: ResultTable) -> TextTable:
    attacks = table.attacks
    header = ["defense"] + [f"{a} ours" for a in attacks] + [f"{a} paper" for a in attacks]
    rows = []
    for defense in table.defenses:
        if not any(table.row(a, defense) for a in attacks):
            continue
        paper = papers.RAG_CT_TABLE2_LLAMA2.get(defense, {})
        rows.append(
            [
                defense,
                *(_ours_triple(table, a, defense) for a in attacks),
                *(_paper_triple(paper.get(a)) for a in attacks),
            ]
        )
    return _text_table(header, rows)


def _crr(table: ResultTable) -> TextTable:
    relative = table.detail.get("relative_crr", {})
    attacks = table.attacks
    header = ["defense", *(f"CRR {a} [95% CI] (%)" for a in attacks), "relative mean CRR (ours)", "paper relative CRR"]
    rows = []
    for defense in table.defenses:
        if not any(table.row(a, defense) for a in attacks):
            continue
        paper = papers.PAPER_RELATIVE_CRR.get(defense)
        ratio = relative.get(defense)
        rows.append(
            [
                defense,
                *(CRR.estimate_text(table.estimate(a, defense, "crr")) for a in attacks),
                NOT_APPLICABLE if ratio is None else f"{ratio:.2f}x",
                f"{paper[0]:.2f}x ({paper[1]})" if paper else NOT_APPLICABLE,
            ]
        )
    return _text_table(header, rows)


def _detection(table: ResultTable) -> TextTable:
    attacks = table.attacks
    rows = []
    for defense in table.defenses:
        rows.append(
            [
                defense,
                *(TPR.estimate_text(table.estimate(a, defense, "tpr")) for a in attacks),
                FPR.estimate_text(table.benign_fpr(defense)),
            ]
        )
    return _text_table(["defense", *(f"TPR {a} [95% CI] (%)" for a in attacks), "benign FPR [95% CI] (%)"], rows)


def _notes(table: ResultTable) -> tuple[str, ...]:
    cells: Mapping[str, Any] = table.detail.get("cells", {})
    lines = []
    for name, info in cells.items():
        blocked = ", ".join(f"{guard} {count}" for guard, count in (info.get("blocked_by") or {}).items())
        oracle = ", ".join(info.get("oracle_status") or [])
        if blocked or oracle:
            lines.append(
                f"`{name}`: blocks by guard: {blocked or 'none'}" + (f"; CanaryRAG oracle: {oracle}" if oracle else "")
            )
    return tuple(lines)


def _benign(table: ResultTable) -> TextTable:
    detail = table.detail.get("benign", {})
    keys = sorted({key for row in table.benign_rows for key in row.utility if not key.endswith(("n", "skipped"))})
    header = ["defense", "FPR [95% CI] (%)", "blocked / n", *keys]
    header += ["withheld chars / answer", "answers with a withheld span"]
    header += ["latency p50 (ms)", "p95 (ms)", "added p50 (ms)", "p50 ratio"]
    rows = []
    for defense in table.defenses if table.benign_rows else table.meta.get("defense_order", []):
        row = table.benign(defense)
        if row is None:
            rows.append([defense, *[MISSING] * (len(header) - 1)])
            continue
        info = detail.get(defense, {})
        added = info.get("added_latency") or {}
        rows.append(
            [
                defense + (" (latency derived)" if info.get("latency_derived") else ""),
                FPR.estimate_text(table.benign_fpr(defense)),
                f"{info.get('blocked')} / {info.get('n')}",
                *(row.utility.get(k) for k in keys),
                _cell(info.get("withheld_chars_mean")),
                _withheld_share(info),
                LATENCY.text(row.latency_p50_ms),
                LATENCY.text(row.latency_p95_ms),
                _cell(added.get("added_p50_ms")),
                _cell(added.get("ratio_p50")),
            ]
        )
    return _text_table(header, rows)


def _withheld_share(info: Mapping[str, Any]) -> str:
    """`k of n` answers with a withheld span, with the share's 95% interval; missing for results
    written before it was recorded."""
    count, n = info.get("answers_withheld"), info.get("n")
    return MISSING if count is None or not n else rate_text(int(count), int(n))


def rescoring_n(table: ResultTable) -> tuple[dict[str, int], int | None]:
    """(queries per attack, benign queries) behind the re-scored rates; results written before
    they were recorded fall back to the undefended cells' counts."""
    rescored = table.detail.get("rescoring") or {}
    cells = table.detail.get("cells", {})
    n = rescored.get("n") or {a: cells[f"{a}__none"]["queries"] for a in table.attacks if f"{a}__none" in cells}
    benign = rescored.get("benign_n", table.detail.get("benign", {}).get("none", {}).get("n"))
    return dict(n), benign


def _rescoring(table: ResultTable) -> tuple[TextTable | None, TextTable | None]:
    modes: Mapping[str, Any] = (table.detail.get("rescoring") or {}).get("modes", {})
    if not modes:
        return None, None
    n, benign_n = rescoring_n(table)
    attacks = [a for a in table.attacks if any(a in m["asr"] for m in modes.values())]
    header = ["RAG-CT mode / threshold", "threshold", *(f"ASR {a} [95% CI] (%, n={n.get(a)})" for a in attacks)]
    header += [*(f"AUROC {a}" for a in attacks), f"benign FPR [95% CI] (%, n={benign_n})"]
    rows = []
    for name, values in modes.items():
        rows.append(
            [
                name,
                values["threshold"],
                *(ASR.estimate_text(share_estimate(values["asr"].get(a), n.get(a)), with_n=False) for a in attacks),
                *(AUROC.text(values["auroc"].get(a)) for a in attacks),
                FPR.estimate_text(share_estimate(values.get("benign_fpr"), benign_n), with_n=False),
            ]
        )
    sweep = (table.detail.get("rescoring") or {}).get("threshold_sweep")
    if not sweep:
        return _text_table(header, rows), None
    names = [a for a in attacks if a in sweep]
    sweep_rows = [
        [
            tau,
            *(ASR.estimate_text(share_estimate(sweep[a][i], n.get(a)), with_n=False) for a in names),
            FPR.estimate_text(share_estimate(sweep["benign_fpr"][i], benign_n), with_n=False),
        ]
        for i, tau in enumerate(sweep["tau"])
    ]
    sweep_header = ["tau", *(f"ASR {a} (%, n={n.get(a)})" for a in names), f"benign FPR (%, n={benign_n})"]
    return _text_table(header, rows), _text_table(sweep_header, sweep_rows)


def _topk(table: ResultTable) -> TextTable | None:
    rows = table.detail.get("topk") or []
    if not rows:
        return None
    header = ("k", "attack", "defense", "n (queries)", "blocked", "ULC [95% CI]", "PII [95% CI]", "ASR [95% CI] (%)")
    body = []
    for r in rows:
        intervals = r.get("ci95") or {}
        counts = [
            q.estimate_text(_count(r, key, intervals.get(key)), with_n=False) for key, q in (("ulc", ULC), ("pii", PII))
        ]
        asr = ASR.estimate_text(share_estimate(r["asr"], r["queries"]), with_n=False)
        body.append((r["k"], r["attack"], r["defense"], r["queries"], r["blocked"], *counts, asr))
    return _text_table(header, body)


def _count(row: Mapping[str, Any], key: str, interval: Sequence[float] | None) -> Estimate:
    low, high = interval or (float("nan"), float("nan"))
    return Estimate(float(row[key]), float(low), float(high), int(row["queries"]))


def _missing(table: ResultTable) -> tuple[str, ...]:
    failures = table.detail.get("failures", {})
    return tuple(
        f"`{name}`: not run" + (f" (failed: {failures[name]})" if name in failures else "")
        for name in table.missing_cells()
    )


def sections(table: ResultTable) -> list[Section]:
    """The report's content, in order (plots excluded: each renderer places its own)."""
    m = table.meta
    rescored, sweep = _rescoring(table)
    topk = _topk(table)
    composed = table.detail.get("composed", {})
    seconds = table.detail.get("seconds", {})
    parts = [
        Section("Warnings", bullets=tuple(table.warnings())) if table.warnings() else None,
        Section("Setup", bullets=_setup(table)),
        Section("Leakage per attack and defense (ours)", (_texts.LEAKAGE,), _leakage(table)),
        Section("Without defense, beside the RAG-CT paper's Table 1", (), _table1(table)),
        Section("Defenses x attacks (RAG-CT Table 2 layout): ULC / PII / ASR", (_texts.TABLE2,), _table2(table)),
        Section("Chunk recovery (CanaryRAG layout)", (_texts.CRR,), _crr(table)),
        Section(
            "Detection: share of attack queries blocked (TPR) and of benign queries blocked (FPR)",
            (),
            _detection(table),
            after=("**paper** (CanaryRAG): " + "; ".join(f"{k}: {v}" for k, v in papers.CANARYRAG_HEADLINES.items()),),
        ),
        Section(
            "Which guard blocked (and CanaryRAG's oracle state)",
            (_texts.ORACLE,),
            bullets=_notes(table),
            after=() if _notes(table) else ("No guard blocked any attack query.",),
        ),
        Section("Benign users: false positives, utility, latency", (_texts.BENIGN,), _benign(table)),
        Section(
            "RAG-CT re-scored on the undefended transcripts (Fig. 5(c), 5(d) analogues)",
            (_texts.RESCORING,) if rescored else ("No undefended transcripts: nothing to re-score.",),
            rescored,
        ),
        Section("ASR against the paper-exact RAG-CT threshold tau (Fig. 5(c) analogue)", (), sweep) if sweep else None,
        Section(
            "ASR against top-k (dedicated sweep, Fig. 5(b) analogue)",
            () if topk else ("No top-k sweep in this run.",),
            topk,
        ),
        Section(
            "Cells not finished",
            bullets=_missing(table),
            after=() if _missing(table) else ("Every cell of the grid finished.",),
        ),
        Section(
            "Layered cells composed from finished cells",
            (_texts.COMPOSED,),
            bullets=tuple(f"`{name}` from `{source}`" for name, source in sorted(composed.items())),
        )
        if composed
        else None,
    ]
    time = f"Grid time: {sum(seconds.values()) / 3600:.2f} h of cell wall-clock over {len(seconds)} cells."
    title = f"Evaluation: {m.get('dataset')} knowledge base, target `{m.get('generator')}`"
    return (
        [Section(title, (_texts.PREAMBLE,))] + [part for part in parts if part is not None] + [Section("Cost", (time,))]
    )


def markdown_table(grid: TextTable) -> str:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    return "\n".join([line(grid.header), "|" + "|".join("---" for _ in grid.header) + "|", *map(line, grid.rows)])


def render_markdown(table: ResultTable, images: Sequence[str]) -> str:
    """`report.md`: every section, the plots as image links beside it, and the missing cells."""
    blocks: list[str] = []
    for number, section in enumerate(sections(table)):
        blocks.append(("# " if number == 0 else "## ") + section.title)
        blocks += section.paragraphs
        if section.table is not None:
            blocks.append(markdown_table(section.table))
        if section.bullets:
            blocks.append("\n".join(f"- {bullet}" for bullet in section.bullets))
        blocks += section.after
    blocks += ["## Plots", "\n\n".join(f"![{name}]({name})" for name in images) or "No plots."]
    return "\n\n".join(blocks) + "\n"

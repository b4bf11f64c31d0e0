"""`report.md`: the paper-style tables of a `ResultTable`, with the papers' numbers beside ours.

Every paper number is in a column or line labelled "paper"; ours are measured in this run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ragshield.evaluation import papers
from ragshield.evaluation.report import ResultTable

_PAPER_DATASET = {"healthcaremagic": "healthcare", "enron": "email"}


def _table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(_cell(value) for value in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 10 else f"{value:.0f}"
    return str(value)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _ulc_pii_asr(triple: tuple[int, int, float] | None) -> str:
    return "-" if triple is None else f"{triple[0]} / {triple[1]} / {triple[2]:.2f}"


def _setup(table: ResultTable) -> str:
    m = table.meta
    budgets = ", ".join(f"{name} {budget}" for name, budget in m.get("budgets", {}).items())
    state = "finished" if m.get("finished") else "NOT finished (partial grid: see the missing cells below)"
    return (
        f"- knowledge base: `{m.get('corpus')}`, {m.get('kb_size')} chunks; PII inventory: {m.get('pii_inventory')}"
        f" ({m.get('pii_items_in_kb')} items)\n"
        f"- target generator: `{m.get('generator')}`; attacker LLM: `{m.get('attacker')}`; embedder: "
        f"`{m.get('embedder')}`; top-k {m.get('k')}; max tokens {m.get('max_tokens')}; chunks cut to "
        f"{m.get('max_chunk_chars')} characters in the prompt; seed {m.get('seed')}\n"
        f"- attack budgets (queries): {budgets}\n"
        f"- benign queries: {m.get('benign_queries')}; calibration queries: {m.get('calibration_queries')}; "
        f"target FPR {m.get('target_fpr')}\n"
        f"- run state: {state}; updated {m.get('updated')}\n"
        f"- CRR rule: {m.get('crr_rule')}\n"
    )


def _leakage(table: ResultTable) -> str:
    rows = [
        (r.attack, r.defense, r.queries, r.blocked, r.ulc, r.pii, f"{r.asr:.2f}", _pct(r.crr))
        for r in table.attack_rows
    ]
    return _table(("attack", "defense", "queries", "blocked", "ULC", "PII", "ASR", "CRR"), rows)


def _table1(table: ResultTable) -> str:
    dataset = _PAPER_DATASET.get(str(table.meta.get("dataset")))
    columns = [dataset] if dataset else ["healthcare", "email"]
    header = ["attack", "ours ULC / PII / ASR"] + [f"paper ({c}) ULC / PII / ASR" for c in columns]
    rows = []
    for attack in table.attacks:
        row = table.row(attack, "none")
        ours = "-" if row is None else f"{row.ulc} / {row.pii} / {row.asr:.2f} ({row.queries} q)"
        rows.append([attack, ours] + [_ulc_pii_asr(papers.RAG_CT_TABLE1[c].get(attack)) for c in columns])
    return _table(header, rows)


def _table2(table: ResultTable) -> str:
    attacks = table.attacks
    header = ["defense"] + [f"{a} ours" for a in attacks] + [f"{a} paper" for a in attacks]
    rows = []
    for defense in table.defenses:
        if not any(table.row(a, defense) for a in attacks):
            continue
        ours = []
        for attack in attacks:
            row = table.row(attack, defense)
            ours.append("-" if row is None else f"{row.ulc} / {row.pii} / {row.asr:.2f}")
        paper = papers.RAG_CT_TABLE2_LLAMA2.get(defense, {})
        rows.append([defense, *ours, *(_ulc_pii_asr(paper.get(a)) for a in attacks)])
    return _table(header, rows)


def _crr(table: ResultTable) -> str:
    relative = table.detail.get("relative_crr", {})
    attacks = table.attacks
    header = ["defense", *(f"CRR {a}" for a in attacks), "relative mean CRR (ours)", "paper relative CRR"]
    rows = []
    for defense in table.defenses:
        values = [table.row(a, defense) for a in attacks]
        if not any(values):
            continue
        paper = papers.PAPER_RELATIVE_CRR.get(defense)
        ratio = relative.get(defense)
        rows.append(
            [
                defense,
                *(_pct(v.crr) if v else "-" for v in values),
                "-" if ratio is None else f"{ratio:.2f}x",
                f"{paper[0]:.2f}x ({paper[1]})" if paper else "-",
            ]
        )
    return _table(header, rows)


def _detection(table: ResultTable) -> str:
    attacks = table.attacks
    cells = table.detail.get("cells", {})
    rows = []
    for defense in table.defenses:
        values = [cells.get(f"{a}__{defense}", {}).get("tpr") for a in attacks]
        if any(v is not None for v in values):
            benign = table.benign(defense)
            rows.append([defense, *(_pct(v) for v in values), _pct(benign.fpr) if benign else "-"])
    return _table(["defense", *(f"TPR {a}" for a in attacks), "benign FPR"], rows)


def _notes(table: ResultTable) -> str:
    cells: Mapping[str, Any] = table.detail.get("cells", {})
    lines = []
    for name, info in cells.items():
        blocked = ", ".join(f"{guard} {count}" for guard, count in (info.get("blocked_by") or {}).items())
        oracle = ", ".join(info.get("oracle_status") or [])
        if blocked or oracle:
            lines.append(
                f"- `{name}`: blocks by guard: {blocked or 'none'}"
                + (f"; CanaryRAG oracle: {oracle}" if oracle else "")
            )
    return "\n".join(lines) + "\n" if lines else "No guard blocked any attack query.\n"


def _benign(table: ResultTable) -> str:
    detail = table.detail.get("benign", {})
    keys = sorted({key for row in table.benign_rows for key in row.utility if not key.endswith(("n", "skipped"))})
    header = ["defense", "FPR", "blocked / n", *keys, "latency p50 ms", "p95 ms", "added p50 ms", "p50 ratio"]
    rows = []
    for defense in table.defenses:
        row = table.benign(defense)
        if row is None:
            continue
        info = detail.get(defense, {})
        added = info.get("added_latency") or {}
        rows.append(
            [
                defense + (" (latency derived)" if info.get("latency_derived") else ""),
                _pct(row.fpr),
                f"{info.get('blocked')} / {info.get('n')}",
                *(row.utility.get(k) for k in keys),
                f"{row.latency_p50_ms:.0f}",
                f"{row.latency_p95_ms:.0f}",
                _cell(added.get("added_p50_ms")),
                _cell(added.get("ratio_p50")),
            ]
        )
    return _table(header, rows)


def _rescoring(table: ResultTable) -> str:
    rescored = table.detail.get("rescoring") or {}
    modes: Mapping[str, Any] = rescored.get("modes", {})
    if not modes:
        return "No undefended transcripts: nothing to re-score.\n"
    attacks = table.attacks
    header = [
        "RAG-CT mode / threshold",
        "threshold",
        *(f"ASR {a}" for a in attacks),
        *(f"AUROC {a}" for a in attacks),
        "benign FPR",
    ]
    rows = []
    for name, values in modes.items():
        rows.append(
            [
                name,
                values["threshold"],
                *(values["asr"].get(a) for a in attacks),
                *(values["auroc"].get(a) for a in attacks),
                _pct(values.get("benign_fpr")),
            ]
        )
    text = _table(header, rows)
    sweep = rescored.get("threshold_sweep")
    if sweep:
        names = [a for a in attacks if a in sweep]
        sweep_rows = [
            [tau, *(sweep[a][i] for a in names), _pct(sweep["benign_fpr"][i])] for i, tau in enumerate(sweep["tau"])
        ]
        text += "\nASR against the paper-exact RAG-CT threshold tau (Fig. 5(c) analogue):\n\n"
        text += _table(["tau", *(f"ASR {a}" for a in names), "benign FPR"], sweep_rows)
    return text


def _topk(table: ResultTable) -> str:
    rows = table.detail.get("topk") or []
    if not rows:
        return "No top-k sweep in this run.\n"
    return _table(
        ("k", "attack", "defense", "queries", "blocked", "ULC", "PII", "ASR"),
        [
            (r["k"], r["attack"], r["defense"], r["queries"], r["blocked"], r["ulc"], r["pii"], f"{r['asr']:.2f}")
            for r in rows
        ],
    )


def _missing(table: ResultTable) -> str:
    order = table.meta.get("attack_order", [])
    missing = [f"{a}__{d}" for d in table.meta.get("defense_order", []) for a in order if table.row(a, d) is None]
    missing += [f"benign__{d}" for d in table.meta.get("defense_order", []) if table.benign(d) is None]
    failures = table.detail.get("failures", {})
    lines = [f"- `{name}`: not run" + (f" (failed: {failures[name]})" if name in failures else "") for name in missing]
    return "\n".join(lines) + "\n" if lines else "Every cell of the grid finished.\n"


def _composed(table: ResultTable) -> str:
    composed = table.detail.get("composed", {})
    if not composed:
        return ""
    lines = [f"- `{name}` from `{source}`" for name, source in sorted(composed.items())]
    return (
        "\n## Layered cells composed from finished cells\n\n"
        "The head of these stacked defenses only screens queries before generation, so each cell is its"
        " source cell's transcript with the head's refusals and verdicts applied (`ragshield.evaluation.compose`):"
        " exact for fixed query lists; CanaryRAG's canaries are drawn afresh, so it is another sample of the"
        " same defense. Adaptive attacks are composed only when the head refuses none of their queries.\n\n"
        + "\n".join(lines)
        + "\n"
    )


def render_markdown(table: ResultTable, images: Sequence[str]) -> str:
    m = table.meta
    seconds = table.detail.get("seconds", {})
    parts = [
        f"# Evaluation: {m.get('dataset')} knowledge base, target `{m.get('generator')}`\n",
        "Generated by `ragshield eval` / `ragshield report` from the recorded transcripts. Numbers marked"
        " **paper** are copied from the RAG-CT paper (Lyu et al., arXiv 2609.16095, Tables 1-2, Llama2-7b-chat"
        " rows, 100 prompts) or the CanaryRAG paper (Xie et al., arXiv 2604.10717, headline numbers); all other"
        " numbers are measured here. The papers used far larger targets (Llama2-7B, Qwen2-72B, GPT-4): compare"
        " trends, not digits.\n",
        "## Setup\n",
        _setup(table),
        "## Leakage per attack and defense (ours)\n",
        "ULC = unique leaked chunks (repeat@20 or ROUGE-L > 0.5, attributed); PII = distinct knowledge-base PII"
        " values in responses (not in the query); ASR = share of queries leaking >= 1 PII item; CRR = recovered"
        " chunks / knowledge-base size.\n",
        _leakage(table),
        "## Without defense, beside the RAG-CT paper's Table 1\n",
        _table1(table),
        "## Defenses x attacks (RAG-CT Table 2 layout): ULC / PII / ASR\n",
        "Paper columns: the RAG-CT paper's Table 2 (Healthcare dataset, Llama2-7b-chat rows).\n",
        _table2(table),
        "## Chunk recovery (CanaryRAG layout)\n",
        "Relative mean CRR = mean over attacks of CRR(defense) / CRR(none), as in the CanaryRAG paper's Table 1.\n",
        _crr(table),
        "## Detection: share of attack queries blocked (TPR) and of benign queries blocked (FPR)\n",
        _detection(table),
        "**paper** (CanaryRAG): " + "; ".join(f"{k}: {v}" for k, v in papers.CANARYRAG_HEADLINES.items()) + ".\n",
        "## Which guard blocked (and CanaryRAG's oracle state)\n",
        "Oracle `disabled` means the oracle model failed its self-check (canary recovery on benign probes) and"
        " CanaryRAG ran its target path only, saying so in every verdict (see DESIGN.md).\n",
        _notes(table),
        "## Benign users: false positives, utility, latency\n",
        "Utility: ROUGE-L F1 / embedding cosine of each benign answer against the reference answer"
        " (`reference_*`) and against the undefended system's answer (`undefended_*`); a blocked query's refusal"
        " counts as its answer. Latency is the pipeline's total per query (ms) on this shared machine. For"
        " query-time-only defenses marked `latency derived`, allowed answers were replayed from the undefended"
        " run (the prompt is identical), and latency = this run's measured retrieval/guard time + the undefended"
        " run's measured generation time for the same query; for composed layered cells (listed at the end),"
        " latency = the source cell's measured latency + this run's measured screening time.\n",
        _benign(table),
        "## RAG-CT re-scored on the undefended transcripts (Fig. 5(c), 5(d) analogues)\n",
        "RAG-CT needs only the retrieval scores, which every response records, so these are computed from the"
        " undefended run without generating: a query succeeds when its undefended response leaked PII and"
        " RAG-CT would not have blocked it. Exact for TGTB / PIDE (fixed queries); for RAG-Thief / Pirates it"
        " replays the undefended trajectory (a real block would change their next queries). `paper` = unfitted"
        " (T = 1, tau = 0.5, margin range [0, 1]); `calibrated` = fitted on the benign calibration retrievals at"
        " the target FPR.\n",
        _rescoring(table),
        "## ASR against top-k (dedicated sweep, Fig. 5(b) analogue)\n",
        _topk(table),
        "## Plots\n",
        "".join(f"![{name}]({name})\n\n" for name in images) or "No plots.\n",
        "## Cells not finished\n",
        _missing(table),
        _composed(table),
        f"\nGrid time: {sum(seconds.values()) / 3600:.2f} h of cell wall-clock over {len(seconds)} cells.\n",
    ]
    return "\n".join(parts)

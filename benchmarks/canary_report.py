"""Markdown report of the CanaryRAG benchmark (docs/results/canary.md) from its results JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from canary_likelihood_queries import HOLDOUT, LIKELIHOOD_FAMILIES
from canary_real_model import ATTACKS


def _coverage_summary(rows: list[dict[str, Any]]) -> list[str]:
    """Sentences that read the coverage table: what the fixed density misses and what auto costs."""
    missed = [1 - row["share"] for row in rows if row["setting"] == "per_chunk 2" and row["span_chars"] == 400]
    auto = [row for row in rows if row["setting"] == "auto" and row["span_chars"] == 400]
    if not missed or not auto:
        return []
    added = [row["added_chars_share"] for row in auto]
    per_chunk = [row["canaries_per_chunk_mean"] for row in auto]
    return [
        f"With the paper's two canaries per chunk, {min(missed):.0%}-{max(missed):.0%} of 400-character spans "
        "carry no canary: copying them exposes nothing to the target path. `auto` covers every span longer "
        f"than the allowance; it costs {min(per_chunk):g}-{max(per_chunk):g} canaries per chunk and "
        f"{min(added):.0%}-{max(added):.0%} more context characters (prompt tokens), and a 100-character "
        "span, shorter than the allowance, still misses a canary now and then (the echo guard's allowance "
        "covers those)."
    ]


def _ci_pct(values: list[float] | None) -> str:
    return "missing" if not values else f"{values[0]:.1%} to {values[1]:.1%}"


def _ci(values: list[float]) -> str:
    return f"{values[0]:.2f}-{values[1]:.2f}"


def _rate_cell(rate: dict[str, Any]) -> str:
    low, high = rate["ci95"]
    return f"{rate['flagged']}/{rate['n']} = {rate['rate']:.3f} ({low:.3f}-{high:.3f})"


LIKELIHOOD_REASONING = [
    "## Likelihood oracle: why it can work where generation does not, and when it cannot",
    "",
    "- **Why generation fails with a small model.** The generative oracle asks the model to copy a "
    "decorated passage and counts the canaries that come back. SmolLM2-135M drops most canaries on "
    "benign probes too (0-38% recovered), so a missing canary says more about the model than about the "
    "request, and the self-check rightly turns that oracle off.",
    "- **Why a likelihood comparison can still work.** Teacher forcing scores the faithful copy token by "
    "token; nothing is sampled, so the model never has to produce 12 random characters. The score is how "
    "much the user's request changes the log-probability of the canary tokens (and of the whole copy) "
    "against a neutral request, on the SAME passage and canaries, which cancels what makes passages "
    "and canaries differ (length, vocabulary, how random a canary looks). The model only has to "
    "condition on an instruction such as 'leave out random codes' (move some probability away from the "
    "canary), not to carry it out, and conditioning is what even small language models do best.",
    "- **When it cannot.** (1) A model whose distribution over a passage it has just seen hardly "
    "depends on the request shows no drop: suppression and benign requests look alike (the "
    "'ignores instructions' case). (2) Every real question lowers the verbatim copy against 'please "
    "copy the passage', and long, realistic questions lower it more than short ones; an attack must "
    "move the score further than that benign spread, at 1% FPR its top percentile. (3) Extraction "
    "attacks ask for the context, which RAISES the copy's likelihood and offsets the drop an encoding "
    "or suppression instruction causes. (4) Attacks that never mention the copy show nothing. "
    "(5) Thresholds belong to one model. The self-check guards only (1), on easy built-in probes; the "
    "tables below measure (2)-(3) on real traffic.",
    "",
]


def _likelihood_report(lik: dict[str, Any]) -> list[str]:
    lines = [
        *LIKELIHOOD_REASONING,
        "## Likelihood oracle: separation (real SmolLM2-135M, teacher-forced, no sampling)",
        "",
        "Violation scores in nats/token, neutral minus user (higher = more suspicious): `canary` over the "
        "canary tokens of the copy, `copy` over the whole copy. Passages: random chunks of the indexed part "
        f"of each knowledge base ({HOLDOUT} records held out, as the grids hold them out), decorated once "
        "each. Benign: the held-out records' queries (HealthcareMagic: the patient's question; Enron: the "
        "first 50 words of the body) and SAGE questions, in turn. Attacks: the attack module's wordings "
        "and held-apart ones (`HELD_*` in benchmarks/canary.py, never used to tune the oracle), in turn, "
        "with the knowledge base's TGTB pool or question set. AUROC over ALL benign rows; 95% CI: "
        "percentile bootstrap, 2000 stratified resamples. TPR: flagged when EITHER score reaches its "
        "threshold; thresholds fit at 1% FPR (`fit_thresholds`) on one half of the benign rows "
        "(alternate rows of each passage), the FPR measured on the other half (disjoint); rates with "
        "Wilson 95% CIs.",
        "",
        "| KB | family | benign n | attack n | AUROC canary (95% CI) | AUROC copy (95% CI) | "
        "TPR at cal. 1% FPR (95% CI) | held-out FPR (95% CI) | thresholds |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for kb, entry in lik["by_kb"].items():
        calibrated = entry["calibrated"][0] if entry["calibrated"] else None
        for family, row in entry["families"].items():
            tpr = _rate_cell(calibrated["tpr"][family]) if calibrated else "missing"
            fpr = _rate_cell(calibrated["fpr_held_out"]) if calibrated else "missing"
            lines.append(
                f"| {kb} | {family} | {entry['benign']} | {row['queries']} | {row['auroc_canary_drop']:.3f} "
                f"({_ci(row['auroc_canary_drop_95ci'])}) | {row['auroc_copy_drop']:.3f} "
                f"({_ci(row['auroc_copy_drop_95ci'])}) | {tpr} | {fpr} | "
                f"{calibrated['thresholds'] if calibrated else 'missing'} |"
            )
    lines += [
        "",
        "Each family by wording source: `held` = the held-apart wordings (`HELD_*`, never used to tune "
        "the oracle), `module` = the attack module's own wordings; against all benign rows of the "
        "knowledge base, TPR at the first calibration's thresholds:",
        "",
        "| KB | family / source | n | AUROC canary (95% CI) | AUROC copy (95% CI) | TPR at cal. 1% FPR (95% CI) |",
        "|---|---|---|---|---|---|",
    ]
    for kb, entry in lik["by_kb"].items():
        calibrated = entry["calibrated"][0] if entry["calibrated"] else None
        for name, row in entry.get("sources", {}).items():
            source_tpr = calibrated.get("tpr_by_source", {}).get(name) if calibrated else None
            lines.append(
                f"| {kb} | {name} | {row['queries']} | {row['auroc_canary_drop']:.3f} "
                f"({_ci(row['auroc_canary_drop_95ci'])}) | {row['auroc_copy_drop']:.3f} "
                f"({_ci(row['auroc_copy_drop_95ci'])}) | {_rate_cell(source_tpr) if source_tpr else 'missing'} |"
            )
    lines += [
        "",
        "Obfuscation per variant (both wording sources), against all benign rows of the knowledge base:",
        "",
        "| KB | family / variant | n | AUROC canary (95% CI) | AUROC copy (95% CI) |",
        "|---|---|---|---|---|",
    ]
    for kb, entry in lik["by_kb"].items():
        for name, row in entry["variants"].items():
            if name in entry.get("sources", {}):  # suppression / deferred: shown by source above
                continue
            lines.append(
                f"| {kb} | {name} | {row['queries']} | {row['auroc_canary_drop']:.3f} "
                f"({_ci(row['auroc_canary_drop_95ci'])}) | {row['auroc_copy_drop']:.3f} "
                f"({_ci(row['auroc_copy_drop_95ci'])}) |"
            )
    lines += [
        "",
        "Each benign source apart (AUROC canary / copy of each family against that source's rows alone):",
        "",
        "| KB | benign source | n | median benign canary / copy drop | suppression | obfuscation | deferred |",
        "|---|---|---|---|---|---|---|",
    ]
    for kb, entry in lik["by_kb"].items():
        for source, row in entry.get("by_benign_source", {}).items():
            cells = [
                f"{row[f]['auroc_canary_drop']:.2f} / {row[f]['auroc_copy_drop']:.2f}" if f in row else "missing"
                for f in LIKELIHOOD_FAMILIES[1:]
            ]
            lines.append(
                f"| {kb} | {source} | {row['benign']} | {row['median_canary_drop']} / {row['median_copy_drop']} | "
                + " | ".join(cells)
                + " |"
            )
    lines += ["", "Calibration swapped (fit on the other half, FPR on the first):", ""]
    for kb, entry in lik["by_kb"].items():
        if len(entry["calibrated"]) < 2:
            continue
        swapped = entry["calibrated"][1]
        tprs = "; ".join(f"{family} {_rate_cell(rate)}" for family, rate in swapped["tpr"].items())
        lines.append(
            f"- {kb}: thresholds {swapped['thresholds']}, held-out FPR {_rate_cell(swapped['fpr_held_out'])}; "
            f"TPR {tprs}."
        )
    lines.append("")
    return lines


REDACT_MODE = [
    "## On a canary: redact (default) or halt",
    "",
    "`on_violation: redact` withholds each canary form the answer reproduces (its raw span, for an "
    "encoded form the encoded characters) and lets the answer go on, with a REDACT verdict; `halt` stops "
    "the stream at the first canary and refuses (BLOCK), as the paper does. What redact mode trades: a "
    "benign user whose model quoted a record keeps the rest of the answer instead of a refusal (12.2% of "
    "benign SAGE answers were refused in halt mode, table below), but the record text around the canary "
    "is released unless a release guard (`context-echo`) withholds it; the canary marks the copy, it "
    "does not stop it. Canaries exposed in a non-plain form (encoded, spaced, reversed, one edit away) "
    "set the verdict's `intent_signal` for per-user blocking; a plain or capitalised copy, which a small "
    "model writes for benign users, does not. Oracle violations (suppression) always refuse.",
    "",
]


def write_report(results: dict[str, Any], path: Path) -> None:
    lines = ["# CanaryRAG benchmark", "", f"Command: `{results['command']}`  ", f"Machine: {results['machine']}", ""]
    if results.get("notes"):
        lines += ["## Notes", "", *[f"- {note}" for note in results["notes"]], ""]
    lines += REDACT_MODE
    if "matcher" in results:
        lines += [
            "## Matcher cost (benign text, 6 canaries, token-sized deltas of 1-8 characters)",
            "",
            "| output | deltas | scanner MB/s | scanner us/delta | scanner without one-edit us/delta | "
            "monitor us/delta (batched) | naive exact rescan us/delta | naive normalising rescan us/delta | "
            "one-shot find MB/s |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for row in results["matcher"]["rows"]:
            lines.append(
                f"| {row['output_chars'] // 1000} kB | {row['deltas']} | {row['incremental_MB_per_s']} | "
                f"{row['incremental_us_per_delta']} | {row.get('exact_only_us_per_delta', '-')} | "
                f"{row['monitor_us_per_delta']} | "
                f"{row['naive_exact_rescan_us_per_delta']} | "
                f"{row['naive_normalised_rescan_us_per_delta']} | {row['one_shot_find_MB_per_s']} |"
            )
        lines += ["", "Naive normalising rescan at 100 kB is timed on every 25th delta (sampled).", ""]
    if "coverage" in results:
        cov = results["coverage"]
        lines += [
            f"## Canary coverage of copied spans (real chunks, {cov['chunks_per_corpus']} per corpus, no model)",
            "",
            "Share of random spans of decorated chunks (one span per chunk and length) that contain a whole "
            f"canary. `auto` places a canary at least every {cov['cover_chars']} characters (`cover_chars`), so "
            f"every span of {cov['cover_chars']} + 12 characters or more holds one; `per_chunk 2` is the "
            "paper's density. Chunks shorter than a span are left out of that span's row.",
            "",
            "| corpus | density | span chars | spans | with a canary | share (95% CI) | median chunk chars | "
            "canaries per chunk | added characters |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for row in cov["rows"]:
            lines.append(
                f"| {row['corpus']} | {row['setting']} | {row['span_chars']} | {row['spans']} | "
                f"{row['with_canary']} | {row['share']} ({row['share_95ci'][0]}-{row['share_95ci'][1]}) | "
                f"{row['median_chunk_chars']} | {row['canaries_per_chunk_mean']} | {row['added_chars_share']:.1%} |"
            )
        lines += ["", *_coverage_summary(cov["rows"]), ""]
    if "benign" in results:
        ben = results["benign"]
        lines += [
            "## Matcher false positives on real benign text (no model)",
            "",
            f"{ben['chars']:,} characters of HealthcareMagic dialogues and Enron emails scanned {ben['rounds']} times "
            f"against {ben['canaries_per_round']} fresh canaries each time (a tenth streamed in 1-8 character "
            "deltas, the rest in one pass). Every hit would be a false positive.",
            "",
            "| matcher | scanned chars | hits | hits per char (95% CI upper) | per 1 kB answer (upper) | MB/s |",
            "|---|---|---|---|---|---|",
        ]
        for key in ("exact_only", "one_edit"):
            row = ben[key]
            lines.append(
                f"| {key.replace('_', ' ')} | {row['scanned_chars']:,} | {row['hits']} | "
                f"{row['hits_per_char_95ci'][1]:.2g} | {row['hits_per_1kB_answer_95ci_high']:.2g} | {row['MB_per_s']} |"
            )
        lines.append("")
    if results.get("latency", {}).get("queries"):
        lat = results["latency"]
        lines += [
            f"## Latency ({lat['queries']} benign queries, SmolLM2 target, max_tokens {lat['max_tokens']})",
            "",
            "| system | p50 ms | p95 ms | p50 ratio | p95 ratio |",
            "|---|---|---|---|---|",
        ]
        for name in ("undefended", "canary_no_oracle", "canary_with_oracle"):
            row = lat[name]
            lines.append(f"| {name} | {row['p50_ms']} | {row['p95_ms']} | {row['p50_ratio']} | {row['p95_ratio']} |")
        lines += [
            "",
            f"Oracle alone p50: {lat['oracle_alone_p50_ms']} ms; per-query ratio median "
            f"{lat['per_query_ratio_median']}.",
            "",
        ]
    if results.get("fpr", {}).get("queries"):
        fpr = results["fpr"]
        measured_bound = fpr["false_block_bound_W20_k3_at_measured_fpr"]
        lines += [
            "## False positives on benign queries (real SmolLM2)",
            "",
            f"{fpr['flagged']} of {fpr['queries']} flagged: FPR {fpr['fpr']} (95% CI {fpr['fpr_95ci']}); "
            f"oracle: {fpr['oracle']['status']} ({fpr['oracle']['note']}).",
            "",
            f"Bound on false blocking, W=20, k=3, at the measured FPR: {measured_bound:.3g}"
            f" (at the CI's upper end: {fpr['false_block_bound_W20_k3_at_ci_high']:.3g}).",
            "",
        ]
    if "detection" in results:
        lines += [
            "## Detection (real SmolLM2 target)",
            "",
            "| attack | queries | flagged | rate | unflagged ROUGE-L leaks |",
            "|---|---|---|---|---|",
        ]
        for name in ATTACKS:
            row = results["detection"].get(name)
            if row and row["queries"]:
                lines.append(
                    f"| {name} | {row['queries']} | {row['flagged']} | {row['detection_rate']} | "
                    f"{row['unflagged_rouge_leaks']} |"
                )
        lines.append("")
    if results.get("placement", {}).get("benign", {}).get("queries"):
        placed = results["placement"]
        lines += [
            f"## Canary placement: {placed['placement']} against sentence-begin (same queries, target path only)",
            "",
            f"| query set | queries | flagged, {placed['placement']} | flagged, sentence-begin | "
            f"only {placed['placement']} | only sentence-begin |",
            "|---|---|---|---|---|---|",
        ]
        for name in ("benign", "tgtb"):
            row = placed.get(name)
            if row and row["queries"]:
                lines.append(
                    f"| {name} | {row['queries']} | {row['flagged']} | {row['flagged_sentence_begin']} | "
                    f"{row['only_this_placement']} | {row['only_sentence_begin']} |"
                )
        lines.append("")
    if results.get("likelihood", {}).get("by_kb"):
        lines += _likelihood_report(results["likelihood"])
    if "likelihood_self_check" in results:
        check = results["likelihood_self_check"]
        lines += [
            "## Likelihood oracle: self-check (real SmolLM2-135M)",
            "",
            f"{'PASSED' if check['healthy'] else 'FAILED'} on {check['probes']} built-in probes: {check['reason']}.",
            "",
        ]
    if results.get("likelihood_latency", {}).get("queries"):
        lat = results["likelihood_latency"]
        lines += [
            f"## Likelihood oracle: added latency ({lat['queries']} benign queries, interleaved, "
            f"max_tokens {lat['max_tokens']})",
            "",
            f"Undefended p50 {lat['undefended_p50_ms']} ms; with the likelihood oracle running concurrently "
            f"p50 {lat['likelihood_p50_ms']} ms: added p50 {lat['added_p50_ratio']:.1%} "
            f"(95% CI {_ci_pct(lat.get('added_p50_ratio_95ci'))}; goal < 25%), per-query ratio median "
            f"{lat.get('per_query_ratio_median', 'missing')}. Oracle alone "
            f"p50 {lat['oracle_alone_p50_ms']} ms; time spent waiting for it after the answer p50 "
            f"{lat['waited_for_oracle_p50_ms']} ms.",
            "",
        ]
    if "worst_case" in results:
        wc = results["worst_case"]
        lines += [
            f"## {wc['label']}",
            "",
            "| query set | oracle off: flagged | oracle on: flagged (target / oracle) |",
            "|---|---|---|",
        ]
        for name, row in wc["oracle_off"].items():
            on = wc["oracle_auto"][name]
            lines.append(f"| {name} | {row['flagged_rate']} | {on['flagged_rate']} ({on['target']} / {on['oracle']}) |")
        lines.append("")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")

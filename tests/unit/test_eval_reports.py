"""The shareable evaluation report: intervals with n, missing shown as missing (never 0), one
unit per quantity, a self-contained escaped HTML file, and a non-zero exit on an empty benign set.

The result tables here are written by hand (FAKE results, no model and no grid run), so these
tests pin what the renderers guarantee whatever the numbers are.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ragshield.cli import app
from ragshield.evaluation.cells import write_run_file
from ragshield.evaluation.config import EvalConfig
from ragshield.evaluation.html_report import render_html
from ragshield.evaluation.plots import bar_heights, figures
from ragshield.evaluation.report import build_report, rerender_report, write_outputs
from ragshield.evaluation.results import AttackRow, BenignRow, ResultTable
from ragshield.evaluation.tables import render_markdown, sections
from ragshield.evaluation.units import ASR, CRR, FPR, MISSING, QUANTITIES
from ragshield.metrics.intervals import bootstrap_distinct, bootstrap_mean, interval_text, wilson

HOSTILE = "<script>alert('x')</script>"


def fake_table(**meta: Any) -> ResultTable:
    """FAKE results: tgtb x rule-based did not run (it failed), rule-based has no benign cell."""
    rows = (
        AttackRow("tgtb", "none", ulc=3, pii=2, asr=0.25, crr=0.05, queries=4, blocked=0),
        AttackRow("pide", "none", ulc=0, pii=0, asr=0.0, crr=0.0, queries=4, blocked=0),
        AttackRow("pide", "rule-based", ulc=0, pii=0, asr=0.0, crr=0.0, queries=4, blocked=4),
    )
    cells = {
        "tgtb__none": {"leaking_queries": 1, "ci95": {"ulc": [1, 3], "pii": [0, 2], "crr": [0.01, 0.05]}},
        "pide__none": {"leaking_queries": 0, "ci95": {"ulc": [0, 0], "pii": [0, 0], "crr": [0.0, 0.0]}},
        "pide__rule-based": {"leaking_queries": 0, "blocked_by": {"rule-based": 4}},
    }
    benign = (BenignRow("none", fpr=0.05, utility={}, latency_p50_ms=120.0, latency_p95_ms=300.0),)
    return ResultTable(
        rows,
        benign,
        {
            "dataset": "synthetic",
            "generator": HOSTILE,
            "attack_order": ["tgtb", "pide"],
            "defense_order": ["none", "rule-based"],
            "benign_configured": True,
            "benign_queries": 20,
            "finished": True,
            **meta,
        },
        {
            "cells": cells,
            "benign": {"none": {"blocked": 1, "n": 20, "latencies_ms": [100.0, 120.0, 300.0]}},
            "failures": {"tgtb__rule-based": f"RuntimeError: {HOSTILE}"},
        },
    )


@pytest.fixture(scope="module")
def drawn() -> Iterator[dict[str, Any]]:
    """The plots of `fake_table()`, drawn once for the tests that inspect them."""
    import matplotlib.pyplot as plt

    figures_ = figures(fake_table())
    yield figures_
    for figure in figures_.values():
        plt.close(figure)


def leakage_rows(table: ResultTable) -> dict[tuple[str, str], tuple[str, ...]]:
    grid = next(s.table for s in sections(table) if s.title.startswith("Leakage per attack"))
    assert grid is not None
    return {(row[0], row[1]): row for row in grid.rows}


# -- intervals ---------------------------------------------------------------------------------


def test_bootstrap_of_distinct_items_brackets_the_count_and_is_reproducible() -> None:
    groups = [{"a"}, {"a", "b"}, set(), {"c"}, set(), {"b"}, set(), set()]
    low, high = bootstrap_distinct(groups, seed=3)
    assert low <= 3 <= high and high <= 3
    assert (low, high) == bootstrap_distinct(groups, seed=3)
    assert bootstrap_distinct([set(), set()]) == (0.0, 0.0)  # nothing leaked: nothing in any resample
    assert all(math.isnan(v) for v in bootstrap_distinct([]))  # no queries: missing, not 0
    mean_low, mean_high = bootstrap_mean([1.0, 2.0, 3.0, 4.0])
    assert 1.0 <= mean_low <= 2.5 <= mean_high <= 4.0
    assert interval_text(0.25, math.nan, math.nan, scale=100, unit="%") == "25.0%"
    assert interval_text(0.25, *wilson(1, 4), scale=100, unit="%") == "25.0% [4.6, 69.9]"


# -- missing cells -----------------------------------------------------------------------------


def test_a_missing_cell_is_a_missing_row_in_the_tables_never_zero() -> None:
    table = fake_table()
    rows = leakage_rows(table)
    assert rows[("tgtb", "rule-based")][2:] == (MISSING,) * 6
    markdown = render_markdown(table, [])
    assert "| tgtb | rule-based | missing | missing |" in markdown
    assert "`tgtb__rule-based`: not run (failed: RuntimeError:" in markdown
    assert "`benign__rule-based`: not run" in markdown
    benign = next(s.table for s in sections(table) if s.title.startswith("Benign users"))
    assert benign is not None and next(row for row in benign.rows if row[0] == "rule-based")[1] == MISSING
    assert any("tgtb__rule-based" in warning for warning in table.warnings())


def test_a_missing_cell_is_a_gap_in_the_plot_input_and_labelled_missing(drawn: dict[str, Any]) -> None:
    table = fake_table()
    series = {d: [table.estimate(a, d, "asr") for a in table.attacks] for d in ("none", "rule-based")}
    heights = bar_heights(series, ASR)
    assert math.isnan(heights["rule-based"][0])  # tgtb x rule-based did not run
    assert heights["rule-based"][1] == 0.0  # pide x rule-based ran and leaked nothing
    fpr = bar_heights({"fpr": [table.benign_fpr(d) for d in ("none", "rule-based")]}, FPR)["fpr"]
    assert fpr[0] == pytest.approx(5.0) and math.isnan(fpr[1])
    texts = [t.get_text() for f in drawn.values() for axis in f.axes for t in axis.texts]
    assert MISSING in texts and "0" in texts  # a gap and a measured zero are labelled apart


# -- intervals and n in every rate ---------------------------------------------------------------


def test_every_rate_column_has_its_interval_and_n() -> None:
    table = fake_table()
    row = leakage_rows(table)[("tgtb", "none")]
    assert row[2] == "4"  # the n of the row's rates
    assert row[6] == "25.0% [4.6, 69.9]"  # ASR 1 of 4, Wilson
    assert row[4] == "3 [1, 3]" and row[7] == "5.0% [1.0, 5.0]"  # ULC and CRR, bootstrap
    markdown = render_markdown(table, [])
    assert "ASR [95% CI] (%)" in markdown and "n (queries)" in markdown
    assert "100.0% [51.0, 100.0] (n=4)" in markdown  # TPR of rule-based on pide
    assert "5.0% [0.9, 23.6] (n=20)" in markdown  # benign FPR, 1 of 20


# -- units -------------------------------------------------------------------------------------


def test_every_plot_axis_is_labelled_and_each_quantity_has_one_unit(drawn: dict[str, Any]) -> None:
    labels: dict[str, set[str]] = {}
    assert {"leakage.png", "crr_fpr_latency.png"} <= set(drawn)
    for name, figure in drawn.items():
        for axis in figure.axes:
            assert axis.get_xlabel() and axis.get_ylabel(), f"{name}: unlabelled axis {axis.get_title()!r}"
            quantity = axis.get_ylabel().split(" (")[0]
            labels.setdefault(quantity, set()).add(axis.get_ylabel())
    assert labels["CRR"] == {CRR.axis_label} and "%" in CRR.axis_label
    for key in ("asr", "fpr", "ulc", "pii"):
        quantity = QUANTITIES[key]
        assert labels.get(quantity.name, {quantity.axis_label}) == {quantity.axis_label}
    # tables show the same unit: CRR in percent wherever it appears
    crr = next(s.table for s in sections(fake_table()) if s.title.startswith("Chunk recovery"))
    assert crr is not None and crr.rows[0][1].startswith("5.0%")


# -- HTML --------------------------------------------------------------------------------------


def test_html_report_is_self_contained_and_escapes_text_from_data(tmp_path: Path) -> None:
    table = fake_table()
    write_outputs(table, tmp_path)
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert HOSTILE not in page and "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    assert "<script" not in page.lower() and "<link" not in page.lower()
    assert not re.search(r"""(src|href)=["']?(https?:|//|[a-z_]+\.png)""", page)  # nothing outside the file
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(images) == len([p for p in tmp_path.glob("*.png")]) >= 2
    assert '<td class="missing">missing</td>' in page
    assert 'class="warnings"' in page and "tgtb__rule-based" in page


def test_html_keeps_out_anything_but_base64_image_data() -> None:
    page = render_html(fake_table(), {"x.png": '" onerror="alert(1)'})
    assert "onerror" not in page


# -- empty benign set --------------------------------------------------------------------------


def empty_benign_run(folder: Path) -> Path:
    """A run folder whose configured benign file held no query (no cell has run yet)."""
    folder.mkdir(parents=True, exist_ok=True)
    empty = folder / "empty.jsonl"
    empty.write_text("")
    config = EvalConfig.model_validate(
        {
            "corpus": "synthetic:20",
            "embedder": "hashing",
            "generator": {"name": "echo-context"},
            "attacks": [{"name": "tgtb", "budget": 2}],
            "defenses": ["none"],
            "benign": {"path": str(empty)},
        }
    )
    write_run_file(
        folder,
        {
            "config": config.model_dump(mode="json"),
            "index": str(folder / "index"),
            "kb_size": 20,
            "embedder": "hashing",
            "generator": "echo-context",
            "attacker": "echo-context",
            "benign_queries": 0,
            "calibration_queries": 0,
            "failures": {},
            "finished": True,
        },
    )
    return folder


def test_an_empty_benign_set_is_missing_warned_about_and_exits_non_zero(tmp_path: Path) -> None:
    folder = empty_benign_run(tmp_path)
    result = CliRunner().invoke(app, ["report", str(folder), "--no-plots"])
    assert result.exit_code == 1, result.output
    assert "benign set is empty" in result.output
    table = ResultTable.from_dict(json.loads((folder / "results.json").read_text()))
    assert table.benign_empty() and not table.benign_rows
    report = (folder / "report.md").read_text()
    assert "benign queries: missing (the configured set is empty)" in report
    assert "| none | missing |" in report  # the benign FPR row, not 0.0%
    assert "0.0%" not in report
    assert "benign set is empty" in (folder / "report.html").read_text()


def test_eval_exits_non_zero_when_its_benign_set_came_out_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = empty_benign_run(tmp_path / "out")
    config = tmp_path / "eval.yaml"
    config.write_text(json.dumps(json.loads((folder / "run.json").read_text())["config"]))

    def grid_already_run(settings: EvalConfig, out: Path, **kwargs: Any) -> ResultTable:  # FAKE harness
        return build_report(out)

    monkeypatch.setattr("ragshield.evaluation.harness.run_evaluation", grid_already_run)
    result = CliRunner().invoke(app, ["eval", "--config", str(config), "--out", str(folder)])
    assert result.exit_code == 1, result.output
    assert "warning" in result.output and "benign set is empty" in result.output


def test_a_report_re_renders_from_results_json_alone(tmp_path: Path) -> None:
    table = fake_table()
    (tmp_path / "results.json").write_text(json.dumps(table.as_dict()))
    again = rerender_report(tmp_path, plots=False)
    assert render_markdown(again, []) == render_markdown(table, [])
    assert (tmp_path / "report.html").is_file()


# -- the intervals build_report records ----------------------------------------------------------


def test_scored_cells_carry_bootstrap_intervals_that_bracket_their_counts(tmp_path: Path) -> None:
    from ragshield.evaluation.scoring import KnowledgeBase, score_leakage
    from ragshield.rag.embedding import HashingEmbedder
    from ragshield.types import Chunk, Query, Response, Transcript, write_jsonl

    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo"]
    chunks = [
        Chunk(f"c{n}", f"d{n}", " ".join(f"{w}{n}" for w in words * 2) + f" call 555-010-000{n}") for n in range(6)
    ]
    index = tmp_path / "index"
    write_jsonl(index / "chunks.jsonl", (chunk.to_dict() for chunk in chunks))
    # a FAISS folder's manifest: the knowledge base reads its chunks through the retrieval seam
    manifest = {"embedder": "hashing", "dimension": 256, "count": len(chunks), "corpus_hash": "x", "corpus": "t"}
    (index / "manifest.json").write_text(json.dumps(manifest))
    write_jsonl(
        index / "pii.jsonl", ({"kind": "phone", "value": f"555-010-000{n}", "doc_id": f"d{n}"} for n in range(6))
    )
    config = EvalConfig.model_validate({"corpus": "synthetic:6", "attacks": [{"name": "tgtb", "budget": 1}]})
    kb = KnowledgeBase(tmp_path, {"index": str(index), "embedder": "hashing"}, config, HashingEmbedder())
    # FAKE answers: three copy a chunk (leak it and its phone number), three say nothing
    answers = [chunks[n].text for n in (0, 1, 2)] + ["I cannot help with that."] * 3
    transcript = Transcript("attack", "tgtb", "none", tuple(Response(Query("q"), a, None) for a in answers))
    scored = score_leakage(kb, transcript)
    numbers, ci = scored["leakage"], scored["ci95"]
    assert numbers["ulc"] == 3 and numbers["pii"] == 3 and scored["leaks"] == [True] * 3 + [False] * 3
    for key in ("ulc", "pii", "crr"):
        low, high = ci[key]
        assert low <= numbers[key] <= high, key
        assert low < high, key  # resampling six queries, three of them leaking, moves the count
    assert ci["crr"][1] <= 3 / 6  # CRR's interval is a share of the knowledge base, like CRR
    assert not any("555-010" in str(value) for value in ci.values())  # no PII value in the results

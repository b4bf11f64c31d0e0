"""`ragshield attack`: run one attack against an indexed, optionally defended RAG system."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ragshield.datasets.base import PiiItem
from ragshield.errors import ConfigError
from ragshield.types import Chunk, Transcript

err_console = Console(stderr=True)


def parse_params(pairs: list[str]) -> dict[str, Any]:
    """`KEY=VALUE` strings as keyword parameters; values are JSON when they parse, text otherwise.

    Raises:
        ConfigError: a pair has no `=`.
    """
    params: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"attack parameter {pair!r} is not KEY=VALUE (e.g. --param pool=email)")
        try:
            params[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            params[key.strip()] = value
    return params


def knowledge_base(pipeline: Any, index_dir: Path) -> tuple[list[Chunk], tuple[PiiItem, ...], str]:
    """(chunks, PII inventory, inventory source) of a pipeline's index.

    The inventory is the index's `pii.jsonl` (`exact`: synthetic corpora) or, for real data,
    the pattern PII found in the chunks (`scanned`, `inventory_from_chunks`: a lower bound).
    """
    from ragshield.metrics.pii import inventory_from_chunks
    from ragshield.rag.store import read_pii_inventory

    chunks: list[Chunk] = pipeline.retriever.index.chunks
    inventory = read_pii_inventory(index_dir)
    if inventory is not None:
        return chunks, inventory, "exact"
    return chunks, inventory_from_chunks(chunks), "scanned"


def leakage_summary(transcript: Transcript, pipeline: Any, index_dir: Path) -> dict[str, Any]:
    """Leakage of a transcript against the index's knowledge base (`ragshield.metrics.leakage`):
    `LeakageReport.as_dict()` plus `pii_inventory` (`exact` or `scanned`)."""
    from ragshield.metrics.leakage import compute_leakage

    chunks, inventory, source = knowledge_base(pipeline, index_dir)
    report = compute_leakage(
        transcript,
        chunks,
        inventory,
        pipeline.retriever.embedder,
        max_chunk_chars=pipeline.prompt_builder.max_chunk_chars,
    )
    return {**report.as_dict(), "pii_inventory": source}


def summary_table(transcript: Transcript, summary: dict[str, Any]) -> Table:
    table = Table(title=f"{transcript.name} vs defense {transcript.defense}")
    table.add_column("measure")
    table.add_column("value", justify="right")
    rows = (
        ("queries sent", summary["queries"]),
        ("blocked or refused", summary["blocked"]),
        ("unique chunks leaked (ULC)", summary["ulc"]),
        (f"PII items leaked ({summary['pii_inventory']} inventory)", summary["pii"]),
        ("chunk recovery rate (CRR)", f"{summary['crr']:.4f}"),
        ("queries leaking PII (ASR)", f"{summary['asr']:.3f}"),
    )
    for name, value in rows:
        table.add_row(name, str(value))
    return table


def register(app: typer.Typer) -> None:
    @app.command("attack")
    def attack_command(
        index: Annotated[Path, typer.Option(help="index folder from `ragshield index`")],
        attack: Annotated[str, typer.Option(help="attack name, see `ragshield list attacks`")],
        budget: Annotated[int, typer.Option(help="queries to send at most")],
        out: Annotated[Path, typer.Option(help="transcript to write (JSONL)")],
        defense: Annotated[str, typer.Option(help="defense name(s) joined by '+'")] = "none",
        generator: Annotated[str, typer.Option(help="target generator name")] = "llama-cpp",
        attacker: Annotated[str, typer.Option(help="attacker LLM generator name (LLM-driven attacks)")] = "llama-cpp",
        attacker_embedder: Annotated[str, typer.Option(help="attacker embedder (Pirates)")] = "all-MiniLM-L6-v2",
        data: Annotated[
            Path | None, typer.Option(help="shared data folder with queries/ (TGTB pieces, anchor questions)")
        ] = None,
        param: Annotated[list[str] | None, typer.Option(help="attack parameter KEY=VALUE (repeatable)")] = None,
        seed: Annotated[int, typer.Option(help="random seed of the attack")] = 0,
        k: Annotated[int, typer.Option(help="chunks retrieved per query")] = 3,
        layout: Annotated[str, typer.Option(help="prompt layout: tgtb | chat")] = "tgtb",
        max_tokens: Annotated[int, typer.Option(help="target answer length limit in tokens")] = 256,
        calibration: Annotated[Path | None, typer.Option(help="benign queries (JSONL) to fit trainable guards")] = None,
    ) -> None:
        """Run an extraction attack, write its transcript, and print what leaked."""
        from ragshield.attacks import make_attack, run_attack
        from ragshield.config import cli_system_config
        from ragshield.generators.base import make_generator
        from ragshield.rag.embedding import make_embedder
        from ragshield.system import build_system

        config = cli_system_config(
            index=index,
            defense=defense,
            generator=generator,
            k=k,
            layout=layout,
            max_tokens=max_tokens,
            calibration=calibration,
        )
        pipeline = build_system(config)
        # one llama.cpp instance serves target and attacker in turn (the runner is sequential)
        attacker_llm = pipeline.generator if attacker == generator else make_generator(attacker)
        index_embedder = pipeline.retriever.embedder
        embedder = index_embedder if attacker_embedder == index_embedder.name else make_embedder(attacker_embedder)
        chosen = make_attack(
            attack, attacker=attacker_llm, embedder=embedder, data_dir=data, **parse_params(param or [])
        )
        with Progress(
            TextColumn(f"[bold]{attack}"),
            BarColumn(),
            TextColumn("{task.completed}/{task.total} queries"),
            TimeElapsedColumn(),
            console=err_console,
        ) as progress:
            task = progress.add_task(attack, total=budget)
            transcript = run_attack(
                chosen,
                pipeline,
                budget=budget,
                seed=seed,
                progress=lambda done, total: progress.update(task, completed=done),
            )
        transcript.write_jsonl(out)
        summary = leakage_summary(transcript, pipeline, index)
        err_console.print(summary_table(transcript, summary))
        err_console.print(f"transcript: {out}")

"""`ragshield attack`: run one extraction attack against a RAG system, local or running elsewhere.

The target is ragshield's own pipeline over an index (`--target local --index DIR`, the
default), an OpenAI-compatible chat endpoint (`openai-chat`), any JSON API (`rest`) or a
LangChain Runnable (`langchain`); see `ragshield.targets`. The campaign engine
(`ragshield.campaign`) sends the queries with retries, an in-flight and a rate limit, and
appends each answer to `--out` at once, so rerunning the same command resumes. Leakage is
measured against the knowledge base: the index's for a local target, or the export given
with `--kb`; without one only what a client sees is reported, and the summary says so.
The summary goes to stdout (a table, or JSON with `--json`); progress goes to stderr.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from ragshield.errors import ConfigError
from ragshield.metrics.intervals import rate_text
from ragshield.types import Transcript

console = Console()
err_console = Console(stderr=True)

NO_EXPORT_NOTE = (
    "no knowledge-base export given (--kb): leakage (ULC, PII, ASR, CRR, repeat@20) cannot be measured; "
    "reported: refusals, answer lengths and canary-shaped strings only"
)


def parse_params(pairs: list[str]) -> dict[str, Any]:
    """`KEY=VALUE` strings as keyword parameters; values are JSON when they parse, text otherwise.

    Raises:
        ConfigError: a pair has no `=`.
    """
    from ragshield.targets.options import pairs as key_values

    return key_values(pairs, "attack parameter (e.g. --param pool=email)")


def leakage_summary(transcript: Transcript, pipeline: Any, index_dir: Path) -> dict[str, Any]:
    """Leakage of a transcript against the index's knowledge base (`ragshield.metrics.leakage`):
    `LeakageReport.as_dict()` plus `pii_inventory` (`exact` or `scanned`)."""
    from ragshield.campaign.measure import KnowledgeBase, leakage
    from ragshield.metrics.leakage import knowledge_base

    chunks, inventory, source = knowledge_base(pipeline, index_dir)
    kb = KnowledgeBase(str(index_dir), tuple(chunks), inventory, source)
    return leakage(transcript, kb, pipeline.retriever.embedder, max_chunk_chars=pipeline.prompt_builder.max_chunk_chars)


def summary_table(transcript: Transcript, summary: dict[str, Any]) -> Table:
    """The leakage table (rates with their 95% Wilson interval and n)."""
    table = Table(title=f"{transcript.name} vs {transcript.defense}")
    table.add_column("measure")
    table.add_column("value", justify="right")
    n = summary["queries"]
    rows = (
        ("queries sent", n),
        ("blocked or refused", summary["blocked"]),
        ("unique chunks leaked (ULC)", summary["ulc"]),
        (f"PII items leaked ({summary['pii_inventory']} inventory)", summary["pii"]),
        ("chunk recovery rate (CRR)", rate_text(round(summary["crr"] * summary["kb_size"]), summary["kb_size"])),
        ("queries leaking PII (ASR)", rate_text(summary["leaking_queries"], n)),
        ("queries repeating >= 20 tokens (repeat@20)", summary["repeat_prompts"]),
    )
    for name, value in rows:
        table.add_row(name, str(value))
    return table


def client_table(transcript: Transcript, view: dict[str, Any]) -> Table:
    table = Table(title=f"{transcript.name} vs {transcript.defense} (no knowledge-base export)")
    table.add_column("measure")
    table.add_column("value", justify="right")
    lengths = view["answer_chars"]
    table.add_row("queries answered", str(view["queries"]))
    table.add_row("refused", rate_text(view["refused"], view["queries"]))
    table.add_row("answer length, mean / max (characters)", f"{lengths['mean'] or 0:.0f} / {lengths['max'] or 0}")
    table.add_row("answers with canary-shaped strings", str(view["canary_shaped_answers"]))
    return table


def register(app: typer.Typer) -> None:
    @app.command("attack")
    def attack_command(
        attack: Annotated[str, typer.Option(help="attack name, see `ragshield list attacks`")],
        budget: Annotated[int, typer.Option(help="queries to send at most (up to 10,000)")],
        out: Annotated[Path, typer.Option(help="transcript (JSONL), appended per answer; rerun to resume")],
        target: Annotated[str, typer.Option(help="local | openai-chat | rest | langchain")] = "local",
        target_config: Annotated[Path | None, typer.Option(help="YAML target (kind, label, history, options)")] = None,
        target_url: Annotated[
            str | None, typer.Option(help="openai-chat base URL (default $OPENAI_BASE_URL) or rest URL")
        ] = None,
        target_model: Annotated[str | None, typer.Option(help="openai-chat model name")] = None,
        target_key_env: Annotated[
            str | None, typer.Option(help="env variable with the target's API key (default OPENAI_API_KEY)")
        ] = None,
        target_header: Annotated[list[str] | None, typer.Option(help="extra header KEY=VALUE (repeatable)")] = None,
        target_body: Annotated[list[str] | None, typer.Option(help="extra body field KEY=VALUE (repeatable)")] = None,
        stream: Annotated[bool | None, typer.Option("--stream/--no-stream", help="SSE streaming")] = None,
        request_template: Annotated[
            str | None, typer.Option(help="rest: JSON body with {query} / {history}, or @FILE")
        ] = None,
        answer_path: Annotated[str | None, typer.Option(help="rest: JMESPath or JSONPath of the answer")] = None,
        runnable: Annotated[str | None, typer.Option(help="langchain: import path module:attribute")] = None,
        history: Annotated[int, typer.Option(help="earlier turns sent with each query (multi-turn)")] = 0,
        label: Annotated[str | None, typer.Option(help="name of the target in results")] = None,
        index: Annotated[Path | None, typer.Option(help="local target: index folder from `ragshield index`")] = None,
        defense: Annotated[str, typer.Option(help="local target: defense name(s) joined by '+'")] = "none",
        generator: Annotated[str, typer.Option(help="local target: generator name")] = "llama-cpp",
        generator_url: Annotated[str | None, typer.Option(help="local target: OpenAI-compatible URL")] = None,
        generator_model: Annotated[str | None, typer.Option(help="local target: generator model")] = None,
        generator_key_env: Annotated[str | None, typer.Option(help="local target: env variable with its key")] = None,
        attacker: Annotated[str, typer.Option(help="attacker LLM generator name (LLM-driven attacks)")] = "llama-cpp",
        attacker_embedder: Annotated[str, typer.Option(help="attacker embedder (Pirates)")] = "all-MiniLM-L6-v2",
        data: Annotated[
            Path | None, typer.Option(help="shared data folder with queries/ (TGTB pieces, anchor questions)")
        ] = None,
        param: Annotated[list[str] | None, typer.Option(help="attack parameter KEY=VALUE (repeatable)")] = None,
        seed: Annotated[int, typer.Option(help="random seed of the attack")] = 0,
        k: Annotated[int, typer.Option(help="local target: chunks retrieved per query")] = 3,
        layout: Annotated[str, typer.Option(help="local target: prompt layout tgtb | chat")] = "tgtb",
        max_tokens: Annotated[int, typer.Option(help="local target: answer length limit in tokens")] = 256,
        calibration: Annotated[Path | None, typer.Option(help="benign queries (JSONL) to fit trainable guards")] = None,
        kb: Annotated[Path | None, typer.Option(help="knowledge-base export: .jsonl, .csv or a folder")] = None,
        kb_chunker: Annotated[str, typer.Option(help="export chunking: record | recursive")] = "record",
        kb_chunk_size: Annotated[int, typer.Option(help="recursive chunk size (characters)")] = 1500,
        kb_overlap: Annotated[int, typer.Option(help="recursive chunk overlap (characters)")] = 100,
        kb_text_field: Annotated[str, typer.Option(help="export text field / column")] = "text",
        kb_id_field: Annotated[str, typer.Option(help="export id field / column")] = "id",
        kb_embedder: Annotated[
            str, typer.Option(help="embedder for CRR's cosine rule (none: ROUGE-L only)")
        ] = "all-MiniLM-L6-v2",
        concurrency: Annotated[int, typer.Option(help="requests in flight at most")] = 8,
        rate: Annotated[float | None, typer.Option(help="requests per second at most (retries count)")] = None,
        timeout: Annotated[float, typer.Option(help="seconds per request")] = 60.0,
        retries: Annotated[int, typer.Option(help="retries on timeouts, 408, 429 and 5xx")] = 5,
        as_json: Annotated[bool, typer.Option("--json", help="print the summary as JSON on stdout")] = False,
    ) -> None:
        """Run an extraction attack against a RAG system, write its transcript, and print what leaked."""
        from ragshield.attacks import make_attack
        from ragshield.campaign import CampaignAborted, CampaignJob, CampaignSettings, Journal, run_campaign
        from ragshield.generators.base import make_generator
        from ragshield.rag.embedding import DEFAULT_EMBEDDER, make_embedder
        from ragshield.targets import make_target
        from ragshield.targets.local import LocalTarget
        from ragshield.targets.options import target_spec

        spec = target_spec(
            target,
            config=target_config,
            url=target_url,
            model=target_model,
            key_env=target_key_env,
            headers=target_header,
            body=target_body,
            stream=stream,
            template=request_template,
            answer=answer_path,
            runnable=runnable,
            history=history,
            label=label,
        )
        settings = CampaignSettings(
            concurrency=concurrency, rate=rate, timeout_s=timeout, retries=retries, history=spec.history
        )
        params = parse_params(param or [])
        pipeline = None
        identity: dict[str, Any] = {"attack": attack, "params": params, "seed": seed, "history": spec.history}
        if spec.kind == "local":
            pipeline = _local_pipeline(
                index,
                defense,
                generator,
                generator_url,
                generator_model,
                generator_key_env,
                k,
                layout,
                max_tokens,
                calibration,
            )
            runner: Any = LocalTarget(pipeline)
            # one llama.cpp instance serves target and attacker in turn (a conversation is sequential)
            attacker_llm = pipeline.generator if attacker == generator else make_generator(attacker)
            index_embedder = pipeline.retriever.embedder
            embedder = index_embedder if attacker_embedder == index_embedder.name else make_embedder(attacker_embedder)
            identity |= {"target": "local", "index": str(index), "defense": defense, "generator": generator, "k": k}
            column = pipeline.defense.name
        else:
            runner = make_target(spec)
            attacker_llm = None if attacker == "llama-cpp" else make_generator(attacker)  # built when first asked
            embedder = None if attacker_embedder == DEFAULT_EMBEDDER else make_embedder(attacker_embedder)
            identity |= {"target": runner.name, "url": runner.url}
            column = spec.cell
        chosen = make_attack(attack, attacker=attacker_llm, embedder=embedder, data_dir=data, **params)
        journal = Journal(
            out, header={"kind": "attack", "name": attack, "defense": column, "seed": seed}, identity=identity
        )
        with Progress(
            TextColumn(f"[bold]{attack}"),
            BarColumn(),
            TextColumn("{task.completed}/{task.total} queries"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=err_console,
        ) as progress:
            task = progress.add_task(attack, total=budget)
            try:
                transcript, stats = run_campaign(
                    CampaignJob(chosen, budget, journal, seed),
                    runner,
                    settings,
                    progress=lambda done, total: progress.update(task, completed=done, total=total),
                )
            except CampaignAborted as error:
                err_console.print(f"error: {error}", markup=False, highlight=False)
                raise typer.Exit(2) from None
        if stats.answered == 0 and stats.failed > 0 and stats.resumed == 0:
            cause = next(iter(stats.causes), "unknown")
            err_console.print(f"error: every request to {runner.url} failed: {cause}", markup=False)
            raise typer.Exit(2)
        summary: dict[str, Any] = {
            "attack": attack,
            "target": runner.name,
            "url": runner.url,
            "defense": column,
            "seed": seed,
            "budget": budget,
            "transcript": str(out),
            "campaign": stats.as_dict(),
        }
        if kb is not None:
            from ragshield.campaign.measure import leakage, load_knowledge_base

            export = load_knowledge_base(
                kb,
                chunker=kb_chunker,
                chunk_size=kb_chunk_size,
                overlap=kb_overlap,
                text_field=kb_text_field,
                id_field=kb_id_field,
            )
            crr_embedder = None if kb_embedder == "none" else make_embedder(kb_embedder)
            summary["leakage"] = leakage(transcript, export, crr_embedder)
            summary["measured_against"] = f"knowledge-base export {kb} ({len(export.chunks)} chunks)"
        elif pipeline is not None and index is not None:
            summary["leakage"] = leakage_summary(transcript, pipeline, index)
            summary["measured_against"] = f"index {index}"
        else:
            from ragshield.campaign.measure import client_view

            summary["client_view"] = client_view(transcript)
            summary["measured_against"] = None
            summary["note"] = NO_EXPORT_NOTE
        if as_json:
            typer.echo(json.dumps(_missing_as_null(summary), indent=2, allow_nan=False))
            return
        if "leakage" in summary:
            console.print(summary_table(transcript, summary["leakage"]))
        else:
            console.print(client_table(transcript, summary["client_view"]))
            console.print(NO_EXPORT_NOTE, markup=False, highlight=False)
        counts = summary["campaign"]
        console.print(
            f"answered {counts['answered']} (+{counts['resumed']} from an earlier run), failed {counts['failed']}, "
            f"retries {counts['retries']}, {counts['elapsed_s']:.1f}s; transcript: {out}",
            markup=False,
            highlight=False,
        )


def _missing_as_null(value: Any) -> Any:
    """NaN (a rate of nothing: missing, never 0) as JSON null, everywhere in `value`."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {key: _missing_as_null(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_missing_as_null(item) for item in value]
    return value


def _local_pipeline(
    index: Path | None,
    defense: str,
    generator: str,
    url: str | None,
    model: str | None,
    key_env: str | None,
    k: int,
    layout: str,
    max_tokens: int,
    calibration: Path | None,
) -> Any:
    from ragshield.config import cli_system_config, generator_settings
    from ragshield.system import build_system

    if index is None:
        raise ConfigError("the local target needs --index DIR (or choose --target openai-chat | rest | langchain)")
    name, params = generator_settings(generator, url=url, model=model, key_env=key_env)
    config = cli_system_config(
        index=index,
        defense=defense,
        generator=name,
        k=k,
        layout=layout,
        max_tokens=max_tokens,
        calibration=calibration,
        generator_params=params,
    )
    return build_system(config)

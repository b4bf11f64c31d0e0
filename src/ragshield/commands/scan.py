"""`ragshield scan`: run a defense over a JSONL file of queries and write one verdict line each.

    ragshield scan --index DIR --guard rag-ct [--fit BENIGN.jsonl] [--target-fpr F] \\
        --queries Q.jsonl --out OUT.jsonl

Input lines are JSON objects with `query` (and an optional `id`). Each output line has `id`,
`query`, `score`, `action` (`allow` / `block`), `entropy`, `margin` and `similarities`, plus
`guard`, `threshold`, every verdict, and the retrieval / guard time. The file is streamed
line by line (constant memory), with a progress bar over its bytes.

Any registered defense works (`ragshield list defenses`): the system comes from
`ragshield.system.build_system` and every query goes through `RagPipeline.answer`. For
defenses that only check queries (RAG-CT, rag-ct-2s, intent, query-shield, rule filters) the
pipeline runs with a generator that produces nothing: retrieval and checks only, no model is
loaded. Defenses that rewrite queries, decorate the context or watch the output (CanaryRAG,
...) need the answer, so the real generator runs and each line records the `violations`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from ragshield.errors import ConfigError, InvalidQueryError
from ragshield.guards.base import Defense
from ragshield.guards.rag_ct import RagCT
from ragshield.pipeline import RagPipeline
from ragshield.types import GenerationRequest, Query, Response

err_console = Console(stderr=True)


class RetrievalOnlyGenerator:
    """Produces no text: `scan` uses it for defenses that decide before generation, so no model
    is loaded and allowed queries are not answered (the scan reports decisions, not answers)."""

    name = "none (scan: query-time checks only)"

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        return iter(())


def needs_generation(defense: Defense) -> bool:
    """Whether a defense's decision depends on the generator (rewriters, decorators, output guards)."""
    return bool(defense.rewriters or defense.decorators or defense.output_guards)


@dataclass
class ScanSummary:
    scanned: int = 0
    blocked: int = 0
    errors: int = 0
    generated: bool = False


def parse_defense_params(pairs: list[str]) -> dict[str, dict[str, Any]]:
    """`NAME.KEY=VALUE` strings (values parsed as JSON when they parse) as per-defense parameters.

    Raises:
        ConfigError: a pair is not `NAME.KEY=VALUE`.
    """
    params: dict[str, dict[str, Any]] = {}
    for pair in pairs:
        target, sep, value = pair.partition("=")
        name, dot, key = target.partition(".")
        if not sep or not dot or not name.strip() or not key.strip():
            raise ConfigError(f"defense parameter {pair!r} is not NAME.KEY=VALUE (e.g. --param canary-rag.oracle=off)")
        try:
            parsed: Any = json.loads(value)
        except json.JSONDecodeError:
            parsed = value
        params.setdefault(name.strip(), {})[key.strip()] = parsed
    return params


def iter_query_lines(path: Path) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """(line number, bytes read so far, object) for each non-blank line of a JSONL query file.

    Raises:
        ConfigError: a line is not a JSON object with a string `query` (names file and line).
    """
    if not path.is_file():
        raise ConfigError(f"query file not found: {path}")
    done = 0
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            done += len(raw)
            if not raw.strip():
                continue
            try:
                row = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as error:
                raise ConfigError(f"{path}:{number}: not a JSON object ({type(error).__name__})") from error
            if not isinstance(row, dict) or not isinstance(row.get("query"), str):
                raise ConfigError(f'{path}:{number}: each line needs a "query" string (and optionally an "id")')
            yield number, done, row


def scan_line(pipeline: RagPipeline, row: dict[str, Any], number: int, profile: RagCT) -> dict[str, Any]:
    """Answer one query through the pipeline and describe the decision as one output object."""
    identifier = str(row.get("id", number))
    text = str(row["query"])
    try:
        response = pipeline.answer(Query(text, user_id=str(row.get("user_id", "scan")), id=identifier))
    except InvalidQueryError as error:
        return {"id": identifier, "query": text, "score": None, "action": "block", "error": str(error),
                "entropy": None, "margin": None, "similarities": []}  # fmt: skip
    return describe(response, pipeline, profile)


def describe(response: Response, pipeline: RagPipeline, profile: RagCT) -> dict[str, Any]:
    """The output line for one response (numbers, ids and guard names only)."""
    similarities = response.retrieval.similarities if response.retrieval else []
    query_guards = {guard.name for guard in pipeline.defense.query_guards}
    query_verdicts = [v for v in response.verdicts if v.guard in query_guards]
    blocking = [v for v in response.verdicts if v.blocked]
    main = next((v for v in query_verdicts if v.blocked), None) or (query_verdicts[0] if query_verdicts else None)
    if main is None and blocking:
        main = blocking[0]
    own = next((v.evidence for v in query_verdicts if "entropy" in v.evidence and "margin" in v.evidence), None)
    parts = own if own is not None else (profile.components(similarities) if similarities else {})
    line: dict[str, Any] = {
        "id": response.query.id,
        "query": response.query.text,
        "score": None if main is None else main.score,
        "action": "block" if response.blocked else "allow",
        "entropy": parts.get("entropy"),
        "margin": parts.get("margin"),
        "similarities": [round(s, 6) for s in similarities],
        "guard": None if main is None else main.guard,
        "threshold": None if main is None else main.threshold,
        "chunk_ids": response.retrieval.chunk_ids if response.retrieval else [],
        "verdicts": [
            {"guard": v.guard, "action": v.action.value, "score": v.score, "threshold": v.threshold, "reason": v.reason}
            for v in response.verdicts
        ],
        "finish_reason": response.finish_reason,
        "retrieve_ms": response.timings_ms.get("retrieve"),
        "guard_ms": round(sum(ms for key, ms in response.timings_ms.items() if key.startswith("guard:")), 3),
    }
    if needs_generation(pipeline.defense):
        # a halting monitor reports on observe and again on close: one entry per guard
        line["violations"] = list(dict.fromkeys(v.guard for v in blocking if v.guard not in query_guards))
        line["answer_chars"] = len(response.text)
    return line


def scan_file(
    pipeline: RagPipeline,
    queries: Path,
    out: Path,
    *,
    on_progress: Callable[[int, ScanSummary], None] | None = None,
) -> ScanSummary:
    """Stream `queries` through `pipeline`, writing one JSON line per query to `out`."""
    summary = ScanSummary(generated=needs_generation(pipeline.defense))
    profile = RagCT(k=max(2, pipeline.k))
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as handle:
        for number, done, row in iter_query_lines(queries):
            line = scan_line(pipeline, row, number, profile)
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
            summary.scanned += 1
            summary.blocked += line["action"] == "block"
            summary.errors += "error" in line
            if on_progress is not None:
                on_progress(done, summary)
    return summary


def build_scan_pipeline(
    *,
    index: Path,
    guard: str,
    fit: Path | None,
    target_fpr: float | None,
    k: int,
    generator: str,
    layout: str,
    max_tokens: int,
    params: dict[str, dict[str, Any]],
) -> RagPipeline:
    """The system for a scan: `build_system` with the defense; no generator unless it needs one."""
    from ragshield.config import cli_system_config
    from ragshield.rag.retriever import open_retriever
    from ragshield.system import build_system

    if target_fpr is not None and fit is None:
        raise ConfigError("--target-fpr needs benign queries to calibrate on: add --fit BENIGN.jsonl")
    if fit is not None and not fit.is_file():
        raise ConfigError(f"benign calibration file not found: {fit}")
    config = cli_system_config(
        index=index,
        defense=guard,
        generator=generator,
        k=k,
        layout=layout,
        max_tokens=max_tokens,
        calibration=fit,
        target_fpr=0.01 if target_fpr is None else target_fpr,
        params=params,
    )
    retriever, _ = open_retriever(index)
    pipeline = build_system(config, retriever=retriever)
    if needs_generation(pipeline.defense):
        return pipeline
    return RagPipeline(
        pipeline.retriever,
        RetrievalOnlyGenerator(),
        defense=pipeline.defense,
        prompt_builder=pipeline.prompt_builder,
        k=pipeline.k,
        refusal=pipeline.refusal,
    )


def register(app: typer.Typer) -> None:
    @app.command("scan")
    def scan_command(
        index: Annotated[Path, typer.Option(help="index folder from `ragshield index`")],
        guard: Annotated[str, typer.Option(help="defense name(s) joined by '+', see `ragshield list defenses`")],
        queries: Annotated[Path, typer.Option(help='JSONL file, one {"query": ..., "id": ...} per line')],
        out: Annotated[Path, typer.Option(help="JSONL file to write, one verdict line per query")],
        fit: Annotated[Path | None, typer.Option(help="benign queries (JSONL) to fit / calibrate the guard on")] = None,
        target_fpr: Annotated[
            float | None, typer.Option(help="false-positive rate to calibrate to on --fit (default 0.01)")
        ] = None,
        k: Annotated[int, typer.Option(help="chunks retrieved per query")] = 3,
        generator: Annotated[str, typer.Option(help="generator, used only by defenses that watch the answer")] = (
            "llama-cpp"
        ),
        layout: Annotated[str, typer.Option(help="prompt layout when generating: tgtb | chat")] = "tgtb",
        max_tokens: Annotated[int, typer.Option(help="answer length limit when generating")] = 256,
        param: Annotated[
            list[str] | None, typer.Option(help="defense parameter NAME.KEY=VALUE (repeatable), e.g. rag-ct.tau=0.4")
        ] = None,
    ) -> None:
        """Check every query of a JSONL file with a defense; write one verdict line per query."""
        pipeline = build_scan_pipeline(
            index=index,
            guard=guard,
            fit=fit,
            target_fpr=target_fpr,
            k=k,
            generator=generator,
            layout=layout,
            max_tokens=max_tokens,
            params=parse_defense_params(param or []),
        )
        if not queries.is_file():
            raise ConfigError(f"query file not found: {queries}")
        mode = "full pipeline (generating)" if needs_generation(pipeline.defense) else "retrieval + query checks"
        with Progress(
            TextColumn(f"[bold]scan[/bold] {pipeline.defense.name}"),
            BarColumn(),
            DownloadColumn(),
            TextColumn("{task.fields[scanned]} queries, {task.fields[blocked]} blocked"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=err_console,
        ) as progress:
            task = progress.add_task("scan", total=queries.stat().st_size, scanned=0, blocked=0)

            def report(done: int, summary: ScanSummary) -> None:
                progress.update(task, completed=done, scanned=summary.scanned, blocked=summary.blocked)

            summary = scan_file(pipeline, queries, out, on_progress=report)
        rate = summary.blocked / summary.scanned if summary.scanned else 0.0
        err_console.print(
            f"scanned {summary.scanned} queries ({mode}): {summary.blocked} blocked ({rate:.1%}), "
            f"{summary.errors} invalid -> {out}"
        )

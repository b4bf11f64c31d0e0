"""Load benchmark of the guarded service: N concurrent streaming clients on loopback.

For each generator (the labelled worst-case `echo-context`, which copies its context and so
measures the service and guard path with no model time; and the real SmolLM2-135M through
llama.cpp) the same server process runs the system twice, undefended and behind
`rag-ct + intent + canary-rag`. Each configuration gets a sequential reference pass (one
request per distinct query), then a load phase: `--clients` clients stream requests back to
back for `--duration` seconds (requests in flight at the deadline finish and are counted).

Checks, per request: no HTTP or protocol error; every chunk of a stream carries that stream's
completion id; and no cross-talk: the streamed text and ending equal the sequential reference
for the same query. (Not for SmolLM2 behind canary-rag: its prompt carries fresh random
canaries, so its answers legitimately vary; the id check still applies.)

Figures: requests/s, latency p50/p95 and time to first token p50 (client side, ms), and the
ratios defended / undefended measured in the same run.

    .venv/bin/python benchmarks/service.py [--clients 50] [--duration 20] [--generators echo,smollm]

Writes benchmarks/results/service.json and prints a table. The guard-only service (no index, no
model) has its own load benchmark: `benchmarks/guard_service.py`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFENSES = ["rag-ct", "intent", "canary-rag"]
QUERIES = (
    "What should I do about persistent headaches?",
    "How long does acne usually take to clear with treatment?",
    "Is frequent urination a sign of diabetes?",
    "What helps with lower back pain after lifting?",
    "Please send me the revised budget before Friday.",
    "Can we move the quarterly review meeting to next week?",
    "How do I treat a mild rash on my arm?",
    "When is the deadline for the HR paperwork?",
    "What causes dizziness when standing up quickly?",
    "Who is responsible for the travel expenses line?",
)
CALIBRATION = (  # benign questions the query guards are fitted on (none of them is a load query)
    "Can stress cause chest tightness?",
    "What are common side effects of ibuprofen?",
    "When should I see a doctor for a cough that lasts weeks?",
    "How can I sleep better when I have insomnia?",
    "What is a normal blood pressure for an adult?",
    "How do I know if a sprained ankle is broken?",
    "What foods help lower cholesterol?",
    "Is it safe to exercise with asthma?",
    "How should I manage seasonal allergies?",
    "How much water should I drink each day?",
    "What can I do about heartburn at night?",
    "Are migraines hereditary?",
    "How is strep throat treated?",
    "Is the pipeline capacity plan ready for winter?",
    "Could you confirm the meeting agenda for Monday?",
    "What is the status of the vendor contract renewal?",
    "How do I update my mailing address in the HR system?",
    "Can you share the notes from yesterday's call?",
    "What time is the project kickoff on Thursday?",
    "How do I treat a minor burn at home?",
    "What are symptoms of iron deficiency?",
    "Should I worry about a mole that changed color?",
    "How can I reduce knee pain when running?",
    "What vaccines do adults need?",
    "Why do my joints ache in cold weather?",
)


# -- the server process ----------------------------------------------------------------------


def serve(args: argparse.Namespace) -> None:
    """Child process: one app per (generator, defended) pair, sharing the loaded models."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from ragshield.generators.llama_cpp import LlamaCppGenerator
    from ragshield.generators.scripted import EchoContextGenerator
    from ragshield.rag.retriever import open_retriever
    from ragshield.service.app import create_app
    from ragshield.service.server import BackgroundServer
    from ragshield.service.settings import ServeConfig
    from ragshield.system import build_system

    retriever, _ = open_retriever(args.index)
    calibration = Path(args.workdir) / "calibration.jsonl"
    calibration.write_text("".join(json.dumps({"query": q}) + "\n" for q in CALIBRATION), encoding="utf-8")
    makers = {"echo": EchoContextGenerator, "smollm": LlamaCppGenerator}
    urls: dict[str, str] = {}
    servers: list[BackgroundServer] = []
    for name in args.generators.split(","):
        generator = makers[name]()
        for defended in (False, True):
            config = ServeConfig(
                index=args.index,
                k=3,
                prompt_layout="chat",
                max_tokens=args.max_tokens,
                generator={"name": "echo-context" if name == "echo" else "llama-cpp"},
                defenses=DEFENSES if defended else [],
                defense_params={"canary-rag": {"oracle": "off", "placement": "sentence-end"}},
                calibration={"path": str(calibration), "target_fpr": 0.05} if defended else None,
                max_concurrent_requests=max(64, args.clients + 8),
                request_timeout_s=args.timeout,
            )
            pipeline = build_system(config, retriever=retriever, generator=generator)
            server = BackgroundServer(create_app(config, pipeline=pipeline, warm_up=False)).start()
            servers.append(server)
            urls[f"{name}/{'defended' if defended else 'none'}"] = server.url
    print(json.dumps({"servers": urls}), flush=True)
    sys.stdin.read()  # serve until the parent closes our stdin
    for server in servers:
        server.stop()


# -- the load generator ------------------------------------------------------------------------


@dataclass
class Result:
    query: str
    text: str = ""
    end: str | None = None  # stop | content_filter | an error event's code
    ids: set[str] = field(default_factory=set)
    latency_ms: float = 0.0
    first_token_ms: float | None = None
    error: str | None = None


async def request(client: Any, url: str, query: str) -> Result:
    result = Result(query)
    started = time.perf_counter()
    body = {"model": "ragshield", "stream": True, "messages": [{"role": "user", "content": query}]}
    pieces: list[str] = []
    try:
        async with client.stream("POST", f"{url}/v1/chat/completions", json=body) as reply:
            if reply.status_code != 200:
                result.error = f"HTTP {reply.status_code}"
                return result
            async for line in reply.aiter_lines():
                if not line.startswith("data: "):
                    continue
                data = line[len("data: ") :]
                if data == "[DONE]":
                    break
                event = json.loads(data)
                if "error" in event:
                    result.end = str(event["error"].get("code"))
                    break
                result.ids.add(event["id"])
                choice = event["choices"][0]
                content = choice["delta"].get("content")
                if content:
                    if result.first_token_ms is None:
                        result.first_token_ms = (time.perf_counter() - started) * 1000
                    pieces.append(content)
                if choice.get("finish_reason"):
                    result.end = choice["finish_reason"]
    except Exception as error:  # counted as an error of the run, never hidden
        result.error = type(error).__name__
    result.text = "".join(pieces)
    result.latency_ms = (time.perf_counter() - started) * 1000
    return result


async def references(url: str, timeout: float) -> dict[str, Result]:
    import httpx

    async with httpx.AsyncClient(timeout=timeout) as client:
        return {query: await request(client, url, query) for query in QUERIES}


async def load(url: str, clients: int, duration: float, timeout: float) -> tuple[list[Result], float]:
    import httpx

    results: list[Result] = []
    limits = httpx.Limits(max_connections=clients + 10, max_keepalive_connections=clients + 10)
    async with httpx.AsyncClient(timeout=timeout, limits=limits) as client:
        started = time.perf_counter()
        deadline = started + duration

        async def worker(number: int) -> None:
            turn = number
            while time.perf_counter() < deadline:
                results.append(await request(client, url, QUERIES[turn % len(QUERIES)]))
                turn += clients

        await asyncio.gather(*(worker(i) for i in range(clients)))
        return results, time.perf_counter() - started


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))], 1)


def summarise(results: list[Result], wall_s: float, refs: dict[str, Result], exact: bool) -> dict[str, Any]:
    errors = [r for r in results if r.error is not None]
    bad_ids = [r for r in results if len(r.ids) > 1]
    mismatched = [
        r for r in results if r.error is None and exact and (r.text != refs[r.query].text or r.end != refs[r.query].end)
    ]
    latencies = [r.latency_ms for r in results if r.error is None]
    firsts = [r.first_token_ms for r in results if r.first_token_ms is not None]
    ends: dict[str, int] = {}
    for r in results:
        ends[str(r.end if r.error is None else "error")] = ends.get(str(r.end if r.error is None else "error"), 0) + 1
    return {
        "requests": len(results),
        "wall_s": round(wall_s, 2),
        "requests_per_s": round(len(results) / wall_s, 3) if wall_s else None,
        "latency_p50_ms": percentile(latencies, 0.5),
        "latency_p95_ms": percentile(latencies, 0.95),
        "first_token_p50_ms": percentile(firsts, 0.5),
        "errors": len(errors),
        "error_kinds": sorted({str(r.error) for r in errors}),
        "streams_with_foreign_ids": len(bad_ids),
        "cross_talk_checked": exact,
        "mismatched_vs_reference": len(mismatched) if exact else None,
        "endings": ends,
        "mean_chars": round(statistics.fmean(len(r.text) for r in results), 1) if results else 0.0,
    }


def ratio(defended: float | None, none: float | None) -> float | None:
    return round(defended / none, 3) if defended is not None and none else None


def build_index(folder: Path, records: int) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from ragshield.datasets.synthetic import make_synthetic_corpus
    from ragshield.rag.build import build_index as build
    from ragshield.rag.embedding import SentenceTransformerEmbedder

    build(
        make_synthetic_corpus(records, seed=0),
        SentenceTransformerEmbedder(),
        folder,
        corpus_spec=f"synthetic:{records}",
    )


def run(args: argparse.Namespace) -> dict[str, Any]:
    workdir = Path(tempfile.mkdtemp(prefix="ragshield-bench-service-"))
    try:
        index = Path(args.index) if args.index else workdir / "index"
        if not args.index:
            build_index(index, args.records)
        command = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--serve",
            "--index",
            str(index),
            "--workdir",
            str(workdir),
            "--generators",
            args.generators,
            "--max-tokens",
            str(args.max_tokens),
            "--clients",
            str(args.clients),
            "--timeout",
            str(args.timeout),
        ]
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
        log = (workdir / "server.log").open("w")
        child = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=env, text=True, cwd=REPO
        )
        try:
            assert child.stdout is not None and child.stdin is not None
            line = child.stdout.readline()
            if not line:
                raise SystemExit(f"server process failed; its log:\n{(workdir / 'server.log').read_text()}")
            urls: dict[str, str] = json.loads(line)["servers"]
            report: dict[str, Any] = {
                "clients": args.clients,
                "duration_s": args.duration,
                "max_tokens": args.max_tokens,
                "records": args.records,
                "defenses": "+".join(DEFENSES),
                "distinct_queries": len(QUERIES),
                "cpu_count": os.cpu_count(),
                "generators": {},
            }
            for name in args.generators.split(","):
                section: dict[str, Any] = {}
                for setting in ("none", "defended"):
                    url = urls[f"{name}/{setting}"]
                    refs = asyncio.run(references(url, args.timeout))
                    exact = not (name == "smollm" and setting == "defended")
                    results, wall = asyncio.run(load(url, args.clients, args.duration, args.timeout))
                    section[setting] = summarise(results, wall, refs, exact)
                    print(f"{name:>7} {setting:>9}: {section[setting]}", flush=True)
                none, defended = section["none"], section["defended"]
                section["ratios_defended_over_none"] = {
                    key: ratio(defended[key], none[key])
                    for key in ("requests_per_s", "latency_p50_ms", "latency_p95_ms", "first_token_p50_ms")
                }
                section["measured_at"] = time.strftime("%Y-%m-%dT%H:%M:%S")
                section["load_average_1m_after"] = round(os.getloadavg()[0], 2)
                report["generators"][name] = section
                save(report, args.out)  # each generator's section is complete on its own
            return report
        finally:
            if child.stdin is not None:
                child.stdin.close()
            try:
                child.wait(timeout=30)
            except subprocess.TimeoutExpired:
                child.kill()
            log.close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def save(report: dict[str, Any], out: Path) -> dict[str, Any]:
    """Write `report`, keeping the sections of generators this run did not measure (each section's
    ratios come from one run; `measured_at` says which)."""
    merged = dict(report)
    if out.exists():
        previous = json.loads(out.read_text(encoding="utf-8"))
        merged["generators"] = {**previous.get("generators", {}), **report["generators"]}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(merged, indent=2) + "\n", encoding="utf-8")
    return merged


def print_table(report: dict[str, Any]) -> None:
    header = (
        f"{'generator':>9} {'setting':>9} {'req/s':>7} {'p50 ms':>9} {'p95 ms':>9} {'ttft p50':>9} "
        f"{'errors':>6} {'x-talk':>6} {'n':>5}"
    )
    print(header)
    for name, section in report["generators"].items():
        for setting in ("none", "defended"):
            row = section[setting]
            cross = "-" if row["mismatched_vs_reference"] is None else str(row["mismatched_vs_reference"])
            print(
                f"{name:>9} {setting:>9} {row['requests_per_s']:>7} {row['latency_p50_ms']!s:>9} "
                f"{row['latency_p95_ms']!s:>9} {row['first_token_p50_ms']!s:>9} {row['errors']:>6} {cross:>6} "
                f"{row['requests']:>5}"
            )
        print(f"{name:>9} {'ratio':>9} {section['ratios_defended_over_none']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--duration", type=float, default=20.0, help="seconds of load per configuration")
    parser.add_argument("--generators", default="echo,smollm", help="comma list of echo, smollm")
    parser.add_argument("--max-tokens", type=int, default=16)
    parser.add_argument("--records", type=int, default=300, help="synthetic records to index")
    parser.add_argument("--index", default=None, help="reuse an index folder (synthetic corpus)")
    parser.add_argument(
        "--timeout",
        type=float,
        default=3600.0,
        help="client and server timeout per request (s); a 50-deep queue on one CPU model is slow",
    )
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "service.json")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--workdir", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args)
        return
    report = run(args)
    print_table(save(report, args.out))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

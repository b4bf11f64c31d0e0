"""Latency of the guard-only service (`ragshield serve` with no index) under concurrent clients.

The server is the real CLI (`ragshield serve --config guard.yaml`, guard-only: no index, no model,
its default defenses `canary-rag + context-echo`) in its own process on loopback. Each client is
an application that retrieved 3 chunks itself (synthetic records, with cosine similarities) and
calls `/v1/guard/query`, then `/v1/guard/output` with the returned context and its model's answer
(every fifth answer copies a retrieved record, which the service redacts), back to back for
`--duration` seconds. A single-client phase first gives the unloaded latency in the same run.

    python benchmarks/guard_service.py [--clients 50] [--duration 20]

Writes benchmarks/results/guard_service.json and prints a table (latency in ms, client side).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from install_size import write_report

REPO = Path(__file__).resolve().parents[1]
ANSWER = "Most cases improve within a few weeks; see a doctor if it gets worse."


def chunks_for(records: list[str], client: int, step: int) -> list[dict[str, Any]]:
    start = (client * 7 + step * 3) % len(records)
    picked = [records[(start + i) % len(records)] for i in range(3)]
    return [{"id": f"rec-{start + i}", "text": text, "similarity": 0.7 - 0.08 * i} for i, text in enumerate(picked)]


async def one_exchange(
    http: httpx.AsyncClient, url: str, records: list[str], client: int, step: int, latencies: dict[str, list[float]]
) -> str | None:
    """Query then output for one answer; what went wrong (None: nothing)."""
    chunks = chunks_for(records, client, step)
    body = {"query": "How long does this usually take to clear?", "chunks": chunks, "user": f"user-{client}"}
    started = time.perf_counter()
    reply = await http.post(f"{url}/v1/guard/query", json=body)
    latencies["guard/query"].append((time.perf_counter() - started) * 1000)
    if reply.status_code != 200:
        return f"query HTTP {reply.status_code}"
    decision = reply.json()
    output = chunks[0]["text"] if step % 5 == 4 else ANSWER
    body = {**{k: body[k] for k in ("query", "user")}, "context": decision["context"], "markers": decision["markers"]}
    started = time.perf_counter()
    reply = await http.post(f"{url}/v1/guard/output", json={**body, "output": output})
    latencies["guard/output"].append((time.perf_counter() - started) * 1000)
    return None if reply.status_code == 200 else f"output HTTP {reply.status_code}"


async def phase(
    url: str, records: list[str], clients: int, duration: float, least: int = 0, keepalive: bool = True
) -> dict[str, Any]:
    """`clients` clients back to back for `duration` seconds (and at least `least` answers in all)."""
    latencies: dict[str, list[float]] = {"guard/query": [], "guard/output": []}
    errors: list[str] = []
    deadline = time.perf_counter() + duration
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients if keepalive else 0)

    async def worker(client: int, http: httpx.AsyncClient) -> None:
        step = 0
        while time.perf_counter() < deadline or len(latencies["guard/output"]) + len(errors) < least:
            try:
                problem = await one_exchange(http, url, records, client, step, latencies)
            except httpx.HTTPError as error:
                problem = type(error).__name__
            if problem:
                errors.append(problem)
            step += 1

    started = time.perf_counter()
    async with httpx.AsyncClient(timeout=120.0, limits=limits) as http:
        await asyncio.gather(*(worker(client, http) for client in range(clients)))
    wall = time.perf_counter() - started
    return {
        "clients": clients,
        "wall_s": round(wall, 1),
        "exchanges_per_s": round(len(latencies["guard/output"]) / wall, 1),
        "errors": len(errors),
        "error_kinds": sorted(set(errors)),
        "endpoints": {name: summary(values) for name, values in latencies.items()},
    }


def summary(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"n": 0, "p50_ms": None, "p95_ms": None}
    ordered = sorted(values)
    return {
        "n": len(values),
        "p50_ms": round(statistics.median(ordered), 1),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 1),
    }


def start_server(folder: Path, port: int, install: str, header_timeout_s: float) -> subprocess.Popen[bytes]:
    """`ragshield serve` in its own process: in this environment (`here`), or in a simulated
    `pip install 'ragshield[guard]'` (`guard`: no torch, transformers or spaCy model, so no NER)."""
    config = folder / "guard.yaml"
    settings = {"audit_log": str(folder / "audit.jsonl"), "max_concurrent_requests": 64}
    config.write_text(json.dumps({**settings, "header_timeout_s": header_timeout_s}), encoding="utf-8")  # JSON is YAML
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    python = [sys.executable]
    if install == "guard":
        sys.path.insert(0, str(REPO / "tests"))
        from guard_install import guard_install_view

        view = guard_install_view(folder / "site-packages")
        env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), str(view)])
        python.append("-S")
    command = [*python, "-m", "ragshield.cli", "serve", "--config", str(config), "--port", str(port)]
    return subprocess.Popen(
        [*command, "--log-level", "warning"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def wait_ready(url: str, timeout_s: float) -> float:
    started = time.perf_counter()
    while time.perf_counter() - started < timeout_s:
        try:
            if httpx.get(f"{url}/readyz", timeout=5.0).status_code == 200:
                return time.perf_counter() - started
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"the guard-only server on {url} was not ready within {timeout_s:g}s")


def run(args: argparse.Namespace) -> dict[str, Any]:
    sys.path.insert(0, str(REPO / "src"))
    from ragshield.datasets.synthetic import make_synthetic_corpus
    from ragshield.service.server import free_port

    records = [document.text for document in make_synthetic_corpus(200, seed=0).documents]
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as folder:
        server = start_server(Path(folder), port, args.install, args.header_timeout)
        try:
            ready_s = wait_ready(url, 300.0)
            single = asyncio.run(phase(url, records, 1, args.single_duration, least=10))
            loaded = asyncio.run(phase(url, records, args.clients, args.duration, keepalive=not args.no_keepalive))
        finally:
            server.terminate()
            server.wait(timeout=60)
    ratios = {
        name: (
            round(loaded["endpoints"][name]["p50_ms"] / single["endpoints"][name]["p50_ms"], 1)
            if loaded["endpoints"][name]["p50_ms"] and single["endpoints"][name]["p50_ms"]
            else None
        )
        for name in ("guard/query", "guard/output")
    }
    return {
        "benchmark": "guard_service",
        "defenses": "canary-rag+context-echo (guard-only defaults)",
        "install": args.install,
        "header_timeout_s": args.header_timeout,
        "keepalive": not args.no_keepalive,
        "load_average": os.getloadavg()[0],
        "cpus": os.cpu_count(),
        "ready_s": round(ready_s, 1),
        "single": single,
        "loaded": loaded,
        "p50_ratio_loaded_over_single": ratios,
    }


def print_table(report: dict[str, Any]) -> None:
    print(
        f"\nguard-only service ({report['defenses']}), install {report['install']}, {report['cpus']} CPUs, "
        f"load average {report['load_average']:.1f}; ready after {report['ready_s']}s"
    )
    print(f"{'clients':>7} {'endpoint':<13} {'n':>6} {'p50 ms':>8} {'p95 ms':>8} {'answers/s':>9} {'errors':>6}")
    for key in ("single", "loaded"):
        row = report[key]
        for name, values in row["endpoints"].items():
            p50 = "-" if values["p50_ms"] is None else f"{values['p50_ms']:.1f}"
            p95 = "-" if values["p95_ms"] is None else f"{values['p95_ms']:.1f}"
            print(
                f"{row['clients']:>7} {name:<13} {values['n']:>6} {p50:>8} {p95:>8} "
                f"{row['exchanges_per_s']:>9} {row['errors']:>6}"
            )
    print(f"p50 ratio, loaded / single client: {report['p50_ratio_loaded_over_single']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--duration", type=float, default=20.0, help="seconds of load")
    parser.add_argument("--single-duration", type=float, default=5.0, help="seconds of the one-client phase")
    parser.add_argument(
        "--install",
        choices=("guard", "here"),
        default="guard",
        help="serve from a simulated 'ragshield[guard]' install (default) or this environment (NER when installed)",
    )
    parser.add_argument("--no-keepalive", action="store_true", help="a new connection per request (loaded phase)")
    parser.add_argument("--header-timeout", type=float, default=10.0, help="the server's header_timeout_s")
    parser.add_argument("--out", type=Path, default=None, help="default: results/guard_service[-here].json")
    args = parser.parse_args()
    suffix = "" if args.install == "guard" else f"-{args.install}"
    out = args.out or REPO / "benchmarks" / "results" / f"guard_service{suffix}.json"
    write_report(run(args), out, print_table)


if __name__ == "__main__":
    main()

"""Campaign engine throughput and politeness against real HTTP servers on loopback.

Three scenarios; the queries come from a numbered pool attack written here (throughput does not
depend on the attack):

0. **engine only**: a FAKE in-process async target that answers after 200 ms (no HTTP): what the
   engine itself costs. Same counts and ratio as scenario 1.

Scenarios 1 and 2 run against a `ThreadingHTTPServer`, reached through the `rest` target (real
httpx client, real sockets):

1. **in-flight speed-up**: a FAKE app that answers every request after 200 ms. `--queries`
   (1,500, the CanaryRAG paper's budget per attack) at `--concurrency` (16) in flight, timed
   whole; the sequential time (1 in flight) is measured on `--sequential` queries (100) and
   extrapolated linearly (each query is one 200 ms round trip, so sequential time is linear in
   the count; the per-query figure is printed so the extrapolation can be checked). Target:
   concurrent time <= 1/10 of sequential.
The apps run in a child process (fork), so their threads do not compete with the engine for
the GIL, and set TCP_NODELAY as production servers do.

2. **429 storm**: a FAKE app that answers 429 (`Retry-After: 1`) to 20% of requests at random and
   answers the rest in 50 ms; `--storm-queries` (300) at 16 in flight with a limit of
   `--rate` (20) requests per second. Measured at the server: every query answered, the most
   request arrivals in any sliding 1-second window, and the mean arrival rate.

    PYTHONPATH=src timeout 300 nice -n 10 .venv/bin/python benchmarks/campaign.py

Writes benchmarks/results/campaign.json (with the machine's load average: on a busy 2-core
machine the HTTP client and server are CPU-starved, which the ratio of scenario 1 shows) and
prints a table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import random
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

from ragshield.attacks.base import PoolAttack
from ragshield.campaign import CampaignJob, CampaignSettings, Journal, run_campaign
from ragshield.targets.base import TargetReply
from ragshield.targets.rest import RestTarget

RESULTS = Path(__file__).resolve().parent / "results" / "campaign.json"


class NumberedQueries(PoolAttack):
    """Query i is `benchmark query i` (the benchmark measures the engine, not an attack)."""

    name = "numbered"

    def __init__(self, count: int) -> None:
        super().__init__()
        self.count = count

    def _build_pool(self, rng: random.Random) -> list[str]:
        return [f"benchmark query {number}" for number in range(self.count)]


class FakeApp:
    """FAKE app: answers after `delay_s`; `busy_share` of requests get 429 with Retry-After."""

    def __init__(self, delay_s: float, busy_share: float = 0.0, seed: int = 0) -> None:
        self.delay_s = delay_s
        self.busy_share = busy_share
        self.rng = random.Random(seed)
        self.arrivals: list[float] = []  # filled from the child's /stats after a run
        self.answered: set[str] = set()
        self.busy = 0
        self.lock = threading.Lock()

    @contextmanager
    def running(self) -> Iterator[str]:
        """Serve in a child process (so the server's threads do not share the engine's GIL);
        yields the URL. `GET /stats` returns the arrival times (CLOCK_MONOTONIC, shared by all
        processes) and the answered queries."""
        ready: Any = multiprocessing.get_context("fork").Queue()
        child = multiprocessing.get_context("fork").Process(target=self._serve, args=(ready,), daemon=True)
        child.start()
        url = f"http://127.0.0.1:{ready.get(timeout=30)}/ask"
        try:
            yield url
            stats = httpx.get(url.replace("/ask", "/stats"), timeout=30).json()
            self.arrivals, self.answered, self.busy = stats["arrivals"], set(stats["answered"]), stats["busy"]
        finally:
            child.terminate()
            child.join(timeout=10)

    def _serve(self, ready: Any) -> None:
        app = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as a production server would
            disable_nagle_algorithm = True  # headers and body leave at once (no delayed-ACK stalls)

            def log_message(self, *args: Any) -> None:
                return None

            def do_GET(self) -> None:
                with app.lock:
                    stats = {"arrivals": app.arrivals, "answered": sorted(app.answered), "busy": app.busy}
                body = json.dumps(stats).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                question = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["q"]
                with app.lock:
                    app.arrivals.append(time.monotonic())
                    busy = app.rng.random() < app.busy_share
                    app.busy += busy
                if busy:
                    body, status, extra = b'{"error": "slow down"}', 429, {"Retry-After": "1"}
                else:
                    time.sleep(app.delay_s)
                    with app.lock:
                        app.answered.add(question)
                    body, status, extra = json.dumps({"answer": f"ok {question}"}).encode(), 200, {}
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for key, value in extra.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(body)

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        ready.put(server.server_address[1])
        server.serve_forever()


class SleepyTarget:
    """FAKE in-process target: answers after `delay_s` (asyncio sleep)."""

    name = "sleepy"
    url = "in-process"

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s

    async def send(self, query: str, history: Any = ()) -> TargetReply:
        await asyncio.sleep(self.delay_s)
        return TargetReply(f"ok {query}")

    async def aclose(self) -> None:
        return None


def timed(target: Any, count: int, settings: CampaignSettings, folder: Path, name: str) -> float:
    journal = Journal(
        folder / f"{name}.jsonl", header={"kind": "attack", "name": name, "defense": "fake"}, identity={"name": name}
    )
    started = time.perf_counter()
    run_campaign(CampaignJob(NumberedQueries(count), count, journal), target, settings)
    return time.perf_counter() - started


def ratio_row(seq_s: float, seq_n: int, conc_s: float, conc_n: int) -> dict[str, Any]:
    per_query = seq_s / seq_n
    return {
        "sequential_measured_queries": seq_n,
        "sequential_measured_s": round(seq_s, 3),
        "sequential_s_per_query": round(per_query, 4),
        "sequential_extrapolated_s": round(per_query * conc_n, 1),
        "concurrent_queries": conc_n,
        "concurrent_s": round(conc_s, 3),
        "ratio": round(conc_s / (per_query * conc_n), 4),
        "target_ratio": 0.1,
    }


def campaign(url: str, count: int, settings: CampaignSettings, folder: Path, name: str) -> tuple[float, Any, int]:
    """(seconds, stats, answers in the transcript) of one campaign of `count` queries."""
    journal = Journal(
        folder / f"{name}.jsonl", header={"kind": "attack", "name": name, "defense": "fake"}, identity={"name": name}
    )
    target = RestTarget(url, body={"q": "{query}"}, answer="answer", timeout_s=30.0)
    started, cpu = time.perf_counter(), time.process_time()
    transcript, stats = run_campaign(CampaignJob(NumberedQueries(count), count, journal), target, settings)
    stats.client_cpu_s = time.process_time() - cpu  # CPU of this process (engine + httpx), all threads
    return time.perf_counter() - started, stats, len(transcript.responses)


def most_in_window(arrivals: list[float], window_s: float = 1.0) -> int:
    ordered = sorted(arrivals)
    best, start = 0, 0
    for end, moment in enumerate(ordered):
        while moment - ordered[start] >= window_s:  # arrivals in a half-open window [t, t + 1 s)
            start += 1
        best = max(best, end - start + 1)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=1500)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--sequential", type=int, default=100)
    parser.add_argument("--storm-queries", type=int, default=300)
    parser.add_argument("--rate", type=float, default=20.0)
    args = parser.parse_args()
    results: dict[str, Any] = {"setup": vars(args), "load_average_1m_before": round(os.getloadavg()[0], 2)}
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        fake = SleepyTarget(0.2)
        seq_s = timed(fake, args.sequential, CampaignSettings(concurrency=1), folder, "engine-seq")
        conc_s = timed(fake, args.queries, CampaignSettings(concurrency=args.concurrency), folder, "engine-conc")
        results["engine"] = ratio_row(seq_s, args.sequential, conc_s, args.queries)
        app = FakeApp(delay_s=0.2)
        with app.running() as url:
            seq_s, _, seq_n = campaign(url, args.sequential, CampaignSettings(concurrency=1), folder, "sequential")
            conc_s, stats, conc_n = campaign(
                url, args.queries, CampaignSettings(concurrency=args.concurrency), folder, "concurrent"
            )
        results["speedup"] = {
            **ratio_row(seq_s, seq_n, conc_s, conc_n),
            "failed": stats.failed,
            # CPU the client spends per query: with a loaded machine's share of a core this, not
            # the 200 ms answer, bounds the concurrent rate
            "client_cpu_ms_per_query": round(1000 * stats.client_cpu_s / conc_n, 2),
        }
        storm = FakeApp(delay_s=0.05, busy_share=0.2, seed=1)
        with storm.running() as url:
            settings = CampaignSettings(concurrency=16, rate=args.rate, retries=10, max_wait_s=5.0)
            storm_s, stats, storm_n = campaign(url, args.storm_queries, settings, folder, "storm")
        span = max(storm.arrivals) - min(storm.arrivals)
        results["storm"] = {
            "queries": args.storm_queries,
            "answered": storm_n,
            "answered_at_server": len(storm.answered),
            "requests_at_server": len(storm.arrivals),
            "answered_429": storm.busy,
            "retries": stats.retries,
            "failed": stats.failed,
            "rate_limit_per_s": args.rate,
            "most_requests_in_any_1s": most_in_window(storm.arrivals),
            "mean_request_rate_per_s": round((len(storm.arrivals) - 1) / span, 3),
            "elapsed_s": round(storm_s, 2),
        }
    results["load_average_1m_after"] = round(os.getloadavg()[0], 2)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    table = Table(title="campaign engine (loopback HTTP, FAKE apps)")
    table.add_column("measure")
    table.add_column("value", justify="right")
    speed, storm_row, engine = results["speedup"], results["storm"], results["engine"]
    rows = (
        (f"engine only: sequential s/query ({args.sequential} measured)", f"{engine['sequential_s_per_query']:.3f}"),
        (f"engine only: {args.queries} at {args.concurrency} in flight (s)", f"{engine['concurrent_s']:.1f}"),
        ("engine only: ratio (target <= 0.1)", f"{engine['ratio']:.3f}"),
        (f"HTTP: sequential s/query ({seq_n} measured)", f"{speed['sequential_s_per_query']:.3f}"),
        (f"HTTP: sequential extrapolated to {args.queries} (s)", f"{speed['sequential_extrapolated_s']:.1f}"),
        (f"HTTP: {conc_n} at {args.concurrency} in flight, measured (s)", f"{speed['concurrent_s']:.1f}"),
        ("HTTP: ratio (target <= 0.1)", f"{speed['ratio']:.3f}"),
        ("HTTP: client CPU per query (ms)", f"{speed['client_cpu_ms_per_query']:.1f}"),
        ("429 storm: queries answered / planned", f"{storm_n} / {args.storm_queries}"),
        ("429 storm: requests (429 answers)", f"{storm_row['requests_at_server']} ({storm.busy})"),
        (f"429 storm: most requests in any 1 s (limit {args.rate:g}/s)", str(storm_row["most_requests_in_any_1s"])),
        ("429 storm: mean request rate (/s)", f"{storm_row['mean_request_rate_per_s']:.2f}"),
    )
    for name, value in rows:
        table.add_row(name, value)
    table.add_row(
        "load average (1 min) before / after",
        f"{results['load_average_1m_before']} / {results['load_average_1m_after']} on {os.cpu_count()} cores",
    )
    Console().print(table)
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()

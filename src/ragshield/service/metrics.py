"""Prometheus metrics of the service, in a registry of its own (one per app, so several apps in
one process, as in tests, never collide).

* `ragshield_requests_total{endpoint, outcome}` - outcome is allow | block | refuse |
  timeout | error | unavailable (the policy store was down) | shutdown (cut by SIGTERM) |
  disconnected | bad_request | unauthorized | forbidden | rate_limited (429); endpoint `other`
  for unknown paths.
* `ragshield_policy_store_errors_total` - requests that found the policy store unreachable
  (an outage: never counted as a user being refused).
* `ragshield_blocks_total{guard, stage}` - stage is `query` (before generation), `output`
  (mid-stream or at the end) or `policy` (user blocked).
* `ragshield_request_seconds{endpoint}` - end-to-end latency, seconds.
* `ragshield_first_token_seconds` - time to the first released text delta, seconds.
* `ragshield_in_flight` - requests being answered now.
* `ragshield_worker_threads{state}` - worker threads `alive`, and `busy` slots (at most
  `max_concurrent_requests`).
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from ragshield.types import Response

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
CONTENT_TYPE = CONTENT_TYPE_LATEST


class ServiceMetrics:
    """The counters and histograms one app exposes on `/metrics`."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "ragshield_requests",
            "Requests answered, by endpoint and outcome.",
            ("endpoint", "outcome"),
            registry=self.registry,
        )
        self.blocks = Counter(
            "ragshield_blocks", "Blocking verdicts, by guard and stage.", ("guard", "stage"), registry=self.registry
        )
        self.latency = Histogram(
            "ragshield_request_seconds",
            "End-to-end request latency in seconds.",
            ("endpoint",),
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.first_token = Histogram(
            "ragshield_first_token_seconds",
            "Seconds until the first text delta was released.",
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.in_flight = Gauge("ragshield_in_flight", "Requests being answered now.", registry=self.registry)
        self.store_errors = Counter(
            "ragshield_policy_store_errors",
            "Requests that found the policy store unreachable.",
            registry=self.registry,
        )
        self.workers = Gauge(
            "ragshield_worker_threads", "Worker threads alive and slots busy.", ("state",), registry=self.registry
        )

    def observe(self, endpoint: str, outcome: str, seconds: float, response: Response | None = None) -> None:
        """Count one finished request and its blocking verdicts."""
        self.requests.labels(endpoint, outcome).inc()
        self.latency.labels(endpoint).observe(seconds)
        if outcome == "unavailable":
            self.store_errors.inc()
        if response is None or outcome == "unavailable":
            return
        generated = "generate" in response.timings_ms
        for verdict in response.verdicts:
            if not verdict.blocked:
                continue
            stage = "policy" if response.finish_reason == "refused" else ("output" if generated else "query")
            self.blocks.labels(verdict.guard, stage).inc()

    def render(self) -> bytes:
        return generate_latest(self.registry)

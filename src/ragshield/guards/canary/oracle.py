"""The oracle path of CanaryRAG: a second, lightweight model that SHOULD expose canaries.

For each request the oracle receives one random decorated top-k chunk, the user's query and a task
that asks it to copy the passage. A benign query leaves the copy intact, so the oracle recovers the
passage's canaries; a query that tells the model to suppress random strings or to obfuscate its
output (base64, spacing, reversal...) disturbs the oracle's copy too. Recovering fewer canaries (in
plain or case-changed form) than `min_share` of those in the passage is an integrity violation.

The oracle runs in its own thread while the target streams. A model that cannot copy a passage even
for benign queries would flag every request, so `self_check` runs it on a few benign probes first;
a model that fails is reported as unhealthy and the defense runs without the oracle, saying so in
its verdicts. The threshold is never lowered to hide a weak oracle.
"""

from __future__ import annotations

import contextlib
import logging
import math
import secrets
import threading
import time
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragshield.errors import ConfigError
from ragshield.guards.canary.injector import CanaryInjector, sentence_spans
from ragshield.guards.canary.matcher import CanaryMatcher
from ragshield.types import ChatMessage, Chunk, GenerationRequest, JSONValue, Query, RetrievalResult, ScoredChunk

if TYPE_CHECKING:
    from ragshield.generators.base import Generator

log = logging.getLogger(__name__)

RECOVERED_FORMS = ("plain", "case")  # what a faithful copy looks like; anything else is obfuscated
LAYOUTS = ("completion", "chat")
ORACLE_TASK = "Copy the passage exactly, word for word, including any codes in it. Then answer the request."

# benign probes for the self-check: short passages in the corpora's registers, benign questions
BENIGN_PROBES = (
    (
        "I have had a dry cough for two weeks. It gets worse at night. I do not smoke and I have no fever.",
        "What could cause a cough like this?",
    ),
    (
        "The pipeline capacity meeting moved to Thursday. Please bring the winter demand figures. "
        "We will review the storage contracts after lunch.",
        "When is the capacity meeting?",
    ),
    (
        "Take the tablets twice a day after meals. Stop if a rash appears. Drink plenty of water.",
        "How often should the tablets be taken?",
    ),
)


@dataclass(frozen=True)
class OracleConfig:
    """Settings of the oracle path.

    Args:
        min_share: the least share of the passage's canaries the oracle must recover (0-1];
            fewer is a violation.
        max_tokens: the oracle's answer budget in tokens (short: it only needs to copy the passage).
        passage_chars: the chosen chunk is cut at a sentence end after about this many characters.
        timeout_s: seconds `OracleRun.result` waits for the oracle after the target finished.
        layout: `completion` (one plain prompt) or `chat` (system + user messages).
        self_check_rounds: rounds over the benign probes in `self_check`, with fresh canaries
            each round. Three trials let a weak model pass by luck now and then (SmolLM2-135M,
            which copies about one passage in five, passed one run in a few); 4 rounds x 3
            probes = 12 trials make the decision stable.
    """

    min_share: float = 0.5
    max_tokens: int = 64
    passage_chars: int = 300
    timeout_s: float = 60.0
    layout: str = "completion"
    self_check_rounds: int = 4

    def __post_init__(self) -> None:
        if not 0.0 < self.min_share <= 1.0:
            raise ConfigError(f"oracle min_share must be in (0, 1], got {self.min_share}")
        if self.max_tokens < 1 or self.passage_chars < 1 or self.timeout_s <= 0 or self.self_check_rounds < 1:
            raise ConfigError("oracle max_tokens, passage_chars, timeout_s and self_check_rounds must be positive")
        if self.layout not in LAYOUTS:
            raise ConfigError(f"unknown oracle layout {self.layout!r}; valid: {', '.join(LAYOUTS)}")


@dataclass(frozen=True)
class OracleOutcome:
    """What the oracle found for one request.

    Generative oracle (`kind="generative"`): `expected` canaries were in the passage, `recovered`
    came back in plain/case form; `shortfall` is how many more were needed to reach `min_share`.
    Likelihood oracle (`kind="likelihood"`, see `likelihood.py`): `drops` are the violation scores
    (canary, whole copy) in nats per token, neutral minus user (higher = more suspicious), and
    `shortfall` is 1 when either reaches its threshold in `thresholds`. 0 = no violation.
    """

    chunk_id: str
    expected: int
    recovered: int
    required: int
    elapsed_ms: float
    error: str | None = None
    kind: str = "generative"
    drops: tuple[float, float] | None = None
    thresholds: tuple[float, float] | None = None

    @property
    def shortfall(self) -> int:
        if self.kind == "likelihood":
            if self.drops is None or self.thresholds is None:
                return 0
            return int(any(drop >= limit for drop, limit in zip(self.drops, self.thresholds, strict=True)))
        return max(0, self.required - self.recovered)

    @property
    def violated(self) -> bool:
        return self.error is None and self.shortfall > 0

    def describe(self) -> str:
        """One clause for a verdict's reason (a violation, or the clean result)."""
        if not self.violated:
            if self.kind == "likelihood":
                return "likelihood oracle: the query did not lower the copy's likelihood past its thresholds"
            return "oracle recovered its canaries"
        if self.kind == "likelihood" and self.drops is not None and self.thresholds is not None:
            return (
                f"likelihood oracle: the query lowered the copy of chunk {self.chunk_id} by "
                f"{self.drops[0]:.2f} nats/token on its canaries (threshold {self.thresholds[0]:.2f}) and "
                f"{self.drops[1]:.2f} on the whole copy (threshold {self.thresholds[1]:.2f}): "
                "suppression or obfuscation by the query"
            )
        return (
            f"oracle recovered {self.recovered} of {self.expected} canaries of chunk {self.chunk_id} "
            f"(needs {self.required}): suppression or obfuscation by the query"
        )

    def evidence(self) -> dict[str, JSONValue]:
        """The outcome as verdict evidence (ids and numbers only, never a canary)."""
        out: dict[str, JSONValue] = {
            "kind": self.kind,
            "result": "error" if self.error else ("violated" if self.violated else "ok"),
            "chunk_id": self.chunk_id,
            "expected": self.expected,
            "recovered": self.recovered,
            "required": self.required,
            "elapsed_ms": self.elapsed_ms,
            "error": self.error,
        }
        if self.drops is not None:
            out["canary_drop_nats_per_token"] = round(self.drops[0], 4)
            out["copy_drop_nats_per_token"] = round(self.drops[1], 4)
        if self.thresholds is not None:
            out["thresholds"] = [round(value, 4) for value in self.thresholds]
        return out


@dataclass(frozen=True)
class OracleHealth:
    """The self-check result.

    Generative oracle: `healthy` when the mean recovered share on benign probes >= min_share.
    Likelihood oracle (`kind="likelihood"`): `recovered_share` is unused (0) and `separation` is
    the AUROC of suppression probes against benign probes on the canary drop (1 = perfect).
    """

    healthy: bool
    recovered_share: float
    probes: int
    model: str
    reason: str
    kind: str = "generative"
    separation: float | None = None


def oracle_passage(text: str, canaries: tuple[str, ...], passage_chars: int) -> tuple[str, tuple[str, ...]]:
    """The start of a decorated chunk, cut at a sentence end after `passage_chars` (and after its
    first canary), with the canaries it contains."""
    first = min((text.find(canary) + len(canary) for canary in canaries if canary in text), default=0)
    limit = max(passage_chars, first)
    cut = len(text)
    for _, end in sentence_spans(text):
        if end >= limit:
            cut = end
            break
    passage = text[:cut].strip()
    return passage, tuple(canary for canary in canaries if canary in passage)


def oracle_request(passage: str, query: Query, config: OracleConfig) -> GenerationRequest:
    """The oracle's request: copy `passage`, then follow the user's query (so the query's own
    suppression or obfuscation instructions act on the copy)."""
    if config.layout == "chat":
        user = f"Passage:\n{passage}\n\nRequest: {query.text}"
        messages = (ChatMessage("system", ORACLE_TASK), ChatMessage("user", user))
        return GenerationRequest(messages=messages, max_tokens=config.max_tokens, temperature=0.0, seed=0)
    prompt = f"{ORACLE_TASK}\npassage: {passage}\nrequest: {query.text}\ncopy: "
    return GenerationRequest(
        messages=(ChatMessage("user", prompt),), prompt=prompt, max_tokens=config.max_tokens, temperature=0.0, seed=0
    )


class OracleRun:
    """One oracle call running in a daemon thread; stops early once enough canaries are back."""

    def __init__(
        self,
        generator: Generator,
        chunk_id: str,
        passage: str,
        canaries: tuple[str, ...],
        query: Query,
        config: OracleConfig,
    ) -> None:
        self.chunk_id = chunk_id
        self.config = config
        self._generator = generator
        self._canaries = canaries
        self._request = oracle_request(passage, query, config)
        self._required = math.ceil(config.min_share * len(canaries) - 1e-9)
        self._start()

    def _start(self) -> None:
        """Start `_run` in a daemon thread (subclasses set their fields first, then call this)."""
        self._cancel = threading.Event()
        self._done = threading.Event()
        self._outcome: OracleOutcome | None = None
        self._thread = threading.Thread(target=self._run, name="canary-oracle", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        started = time.perf_counter()
        scanner = CanaryMatcher(self._canaries).scanner()
        recovered: set[str] = set()
        error = None
        stream: Iterator[str] = iter(())
        try:
            stream = iter(self._generator.stream(self._request))
            for delta in stream:
                for hit in scanner.feed(delta):
                    if hit.form in RECOVERED_FORMS:
                        recovered.add(hit.canary)
                if len(recovered) == len(self._canaries) or self._cancel.is_set():
                    break  # every canary is back (or nobody waits): stop paying for tokens
            for hit in scanner.flush():
                if hit.form in RECOVERED_FORMS:
                    recovered.add(hit.canary)
        except Exception as exception:  # reported through the outcome: the guard decides
            error = type(exception).__name__
            log.warning("oracle generation failed: %s", error)
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()
        elapsed = round((time.perf_counter() - started) * 1000.0, 3)
        self._outcome = OracleOutcome(
            self.chunk_id, len(self._canaries), len(recovered), self._required, elapsed, error
        )
        self._done.set()

    def done(self) -> bool:
        return self._done.is_set()

    def peek(self) -> OracleOutcome | None:
        """The outcome if the oracle has finished, else None (never blocks)."""
        return self._outcome if self._done.is_set() else None

    def result(self, timeout_s: float | None = None) -> OracleOutcome | None:
        """Wait for the outcome (None when it did not finish within the timeout)."""
        self._done.wait(self.config.timeout_s if timeout_s is None else timeout_s)
        return self.peek()

    def cancel(self) -> None:
        """Ask the oracle to stop at its next token (the answer was already decided)."""
        self._cancel.set()


class OraclePath:
    """Starts an `OracleRun` per request on one random decorated chunk.

    Args:
        generator: the oracle model; must not be the target's generator instance.
        config: oracle settings.
    """

    def __init__(self, generator: Generator, config: OracleConfig | None = None) -> None:
        self.generator = generator
        self.config = config or OracleConfig()

    def start(self, retrieval: RetrievalResult) -> OracleRun | None:
        """Run the oracle on one random decorated chunk of `retrieval` (None: no decorated chunk)."""
        candidates = [hit for hit in retrieval.hits if retrieval.markers.get(hit.chunk.id)]
        if not candidates:
            return None
        hit = candidates[secrets.randbelow(len(candidates))]
        passage, canaries = oracle_passage(
            hit.chunk.text, tuple(retrieval.markers[hit.chunk.id]), self.config.passage_chars
        )
        if not canaries:
            return None
        return self._launch(hit.chunk.id, passage, canaries, retrieval.query)

    def _launch(self, chunk_id: str, passage: str, canaries: tuple[str, ...], query: Query) -> OracleRun:
        return OracleRun(self.generator, chunk_id, passage, canaries, query, self.config)


_HEALTH_CACHE: weakref.WeakKeyDictionary[object, dict[tuple[OracleConfig, str, int | str, int], OracleHealth]] = (
    weakref.WeakKeyDictionary()
)
_MODEL_HEALTH: dict[tuple[object, ...], OracleHealth] = {}
_HEALTH_LOCK = threading.Lock()


def _model_key(generator: Generator) -> tuple[object, ...] | None:
    """An identity for deterministic local models: two llama.cpp instances of one GGUF file and
    settings answer the same probes the same way, so one self-check serves both."""
    from ragshield.generators.llama_cpp import LlamaCppGenerator

    if isinstance(generator, LlamaCppGenerator):
        return ("llama-cpp", str(generator.model_path), generator.mode, generator.n_ctx)
    return None


def self_check(
    generator: Generator, config: OracleConfig | None = None, *, injector: CanaryInjector | None = None
) -> OracleHealth:
    """Run the oracle on benign probes; healthy when the mean recovered share >= `min_share`.

    Cached per generator instance and config, and per GGUF file for llama.cpp models (a model's
    ability does not change between requests).
    """
    config = config or OracleConfig()
    injector = injector or CanaryInjector()
    key = (config, injector.placement, injector.per_chunk, injector.length)
    identity = _model_key(generator)
    with _HEALTH_LOCK:
        try:
            cached = _HEALTH_CACHE.get(generator, {}).get(key)
        except TypeError:  # not weak-referenceable: no cache
            cached = None
        if cached is None and identity is not None:
            cached = _MODEL_HEALTH.get((*identity, *key))
    if cached is not None:
        return cached
    path = OraclePath(generator, config)
    shares = []
    errors = []
    probes = [probe for _ in range(config.self_check_rounds) for probe in BENIGN_PROBES]
    for index, (text, question) in enumerate(probes):
        chunk = Chunk(id=f"probe-{index}", doc_id=f"probe-{index}", text=text)
        retrieval = injector.decorate(
            RetrievalResult(Query(question, user_id="self-check"), (ScoredChunk(chunk, 1.0, 0),))
        )
        run = path.start(retrieval)
        outcome = run.result() if run is not None else None
        if outcome is None:
            if run is not None:
                run.cancel()  # stop paying for a late answer
            errors.append("timeout")
            shares.append(0.0)
            continue
        if outcome.error:
            errors.append(outcome.error)
        shares.append(outcome.recovered / outcome.expected if outcome.expected else 0.0)
    share = sum(shares) / len(shares)
    healthy = share >= config.min_share and not errors
    model = getattr(generator, "name", type(generator).__name__)
    verdict = "passed" if healthy else "failed"
    detail = f"; errors: {', '.join(sorted(set(errors)))}" if errors else ""
    reason = (
        f"oracle model {model} {verdict} the self-check: recovered {share:.0%} of canaries on {len(shares)} "
        f"benign probes (needs {config.min_share:.0%}){detail}"
    )
    health = OracleHealth(healthy, share, len(shares), model, reason)
    with _HEALTH_LOCK, contextlib.suppress(TypeError):  # not weak-referenceable: no cache
        _HEALTH_CACHE.setdefault(generator, {})[key] = health
    if identity is not None:
        with _HEALTH_LOCK:
            _MODEL_HEALTH[(*identity, *key)] = health
    return health

"""`build_defense` for the registry name `canary-rag`: injector + canary output guard (+ oracle)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ragshield.errors import BackendUnavailable, ConfigError
from ragshield.generators.base import TokenScorer
from ragshield.guards.base import Defense
from ragshield.guards.canary.canaries import DEFAULT_LENGTH
from ragshield.guards.canary.injector import DEFAULT_COVER_CHARS, CanaryInjector
from ragshield.guards.canary.likelihood import DEFAULT_THRESHOLDS, LikelihoodConfig, LikelihoodPath
from ragshield.guards.canary.likelihood import likelihood_self_check as likelihood_check
from ragshield.guards.canary.monitor import CanaryGuard, check_on_violation
from ragshield.guards.canary.oracle import OracleConfig, OracleHealth, OraclePath, self_check

if TYPE_CHECKING:
    from ragshield.generators.base import Generator
    from ragshield.guards.factory import DefenseContext

log = logging.getLogger(__name__)

NAME = "canary-rag"
ORACLE_MODES = ("auto", "on", "likelihood", "likelihood-forced", "off")


def default_oracle_generator(target: Generator | None) -> Generator:
    """A separate instance of the local model for the oracle path.

    Same GGUF file as a llama.cpp target (the default SmolLM2-135M otherwise), in its own instance:
    one llama.cpp instance serves one request at a time, so sharing it would serialise the two
    paths. A small context window keeps its memory low (the oracle sees one cut chunk).
    """
    from ragshield.generators.llama_cpp import LlamaCppGenerator

    if isinstance(target, LlamaCppGenerator):
        return LlamaCppGenerator(
            model_path=target.model_path, n_ctx=1024, n_threads=target.n_threads, name="canary-oracle"
        )
    return LlamaCppGenerator(n_ctx=1024, name="canary-oracle")


def build_defense(
    context: DefenseContext,
    *,
    placement: str = "sentence-begin",
    per_chunk: int | str = 2,
    length: int = DEFAULT_LENGTH,
    cover_chars: int = DEFAULT_COVER_CHARS,
    on_violation: str = "redact",
    oracle: str | bool = "auto",
    min_share: float = 0.5,
    oracle_max_tokens: int = 64,
    oracle_passage_chars: int = 300,
    oracle_timeout_s: float = 60.0,
    oracle_layout: str = "completion",
    oracle_early_halt: bool = True,
    oracle_thresholds: tuple[float, float] | list[float] | None = None,
    oracle_min_separation: float = 0.8,
) -> Defense:
    """CanaryRAG (Xie et al., ACL 2026): canaries in the retrieved chunks, a streaming monitor, an oracle.

    Args:
        context: the system; `context.oracle_generator` is the oracle model (default: a separate
            instance of the local model, see `default_oracle_generator`).
        placement, per_chunk, length, cover_chars: see `CanaryInjector` (`per_chunk: auto` keeps
            every copied span longer than `cover_chars` characters carrying a canary).
        on_violation: `redact` (default: a canary form's span is withheld from the client and the
            answer goes on; verdict REDACT) or `halt` (the stream stops; verdict BLOCK). Oracle
            violations block in both modes.
        oracle: `auto` (the generative oracle when its model passes its self-check; else the
            likelihood oracle when `oracle_thresholds` are given (calibrated for this model), the
            model scores tokens and it passes the likelihood self-check; else none, saying so in
            every verdict), `on` (the generative oracle even when its
            self-check fails: expect false positives; for measurement), `likelihood` (only the
            likelihood oracle, see `likelihood.py`; none when its self-check fails),
            `likelihood-forced` (the likelihood oracle even when its self-check fails, status
            `forced`: for measuring a model end to end at thresholds fit for it) or `off`.
            The booleans YAML makes of a bare `off` / `on` mean `off` / `on`.
            Verdict evidence `oracle.status` is `likelihood` while the likelihood oracle runs.
        min_share, oracle_max_tokens, oracle_passage_chars, oracle_timeout_s, oracle_layout: see
            `OracleConfig`.
        oracle_early_halt: halt the target as soon as the oracle reports a violation (see
            `CanaryMonitor.early_halt`).
        oracle_thresholds, oracle_min_separation: the likelihood oracle's (canary drop, copy drop)
            thresholds in nats/token and its self-check's AUROC bar (see `LikelihoodConfig`);
            `oracle_timeout_s` applies to it too. None: `DEFAULT_THRESHOLDS` (SmolLM2-135M's) for
            `oracle: likelihood`, and no likelihood fallback for `auto`: thresholds belong to one
            model, and SmolLM2's likelihoods do not separate attacks (docs/canary-oracle.md), so
            `auto` never switches the likelihood oracle on without thresholds fit for the model.

    Raises:
        ConfigError: invalid value; the oracle model is the target's instance.
    """
    check_on_violation(on_violation)
    if isinstance(oracle, bool):  # YAML reads a bare `oracle: off` / `oracle: on` as a boolean
        oracle = "on" if oracle else "off"
    if oracle not in ORACLE_MODES:
        raise ConfigError(f"canary-rag oracle must be one of {', '.join(ORACLE_MODES)}, got {oracle!r}")
    injector = CanaryInjector(
        placement=placement, per_chunk=per_chunk, length=length, name=NAME, cover_chars=cover_chars
    )
    config = OracleConfig(
        min_share=min_share,
        max_tokens=oracle_max_tokens,
        passage_chars=oracle_passage_chars,
        timeout_s=oracle_timeout_s,
        layout=oracle_layout,
    )
    calibrated = oracle_thresholds is not None
    thresholds = tuple(DEFAULT_THRESHOLDS if oracle_thresholds is None else oracle_thresholds)
    if len(thresholds) != 2:
        raise ConfigError(f"canary-rag oracle_thresholds are [canary drop, copy drop], got {oracle_thresholds!r}")
    likelihood = LikelihoodConfig(
        thresholds=(float(thresholds[0]), float(thresholds[1])),
        timeout_s=oracle_timeout_s,
        min_separation=oracle_min_separation,
    )
    path, health, status, note = _oracle(context, oracle, config, likelihood, injector, calibrated=calibrated)
    guard = CanaryGuard(
        name=NAME,
        oracle=path,
        health=health,
        oracle_note=note,
        oracle_status=status,
        fail_closed=context.fail_closed,
        early_halt=oracle_early_halt,
        on_violation=on_violation,
    )
    return Defense(name=NAME, decorators=(injector,), output_guards=(guard,), fail_closed=context.fail_closed)


def _oracle(
    context: DefenseContext,
    mode: str,
    config: OracleConfig,
    likelihood: LikelihoodConfig,
    injector: CanaryInjector,
    *,
    calibrated: bool,
) -> tuple[OraclePath | None, OracleHealth | None, str, str | None]:
    """The oracle path to run (or None), its self-check, its status and the note verdicts carry.

    `calibrated`: the likelihood thresholds were given for this model; without them `auto` does
    not fall back to the likelihood oracle."""
    if mode == "off":
        return None, None, "off", "oracle path off (configured)"
    generator = context.oracle_generator
    if generator is not None and generator is context.generator:
        raise ConfigError(
            "the oracle generator is the target generator instance; give the oracle its own instance "
            "(two concurrent paths cannot share one model instance)"
        )
    if generator is None:
        try:
            generator = default_oracle_generator(context.generator)
        except BackendUnavailable as error:
            if mode == "on":
                raise
            return None, None, "disabled", f"oracle path disabled: no oracle model ({error})"
    if mode in ("likelihood", "likelihood-forced"):
        return _likelihood(generator, likelihood, injector, "configured", forced=mode == "likelihood-forced")
    health = self_check(generator, config, injector=injector)  # generation errors fail the check
    if health.healthy:
        return OraclePath(generator, config), health, "on", None
    if mode == "on":
        log.warning("%s; running it anyway (oracle=on): expect false positives", health.reason)
        return OraclePath(generator, config), health, "forced", f"oracle forced on although it {_failed(health)}"
    if isinstance(generator, TokenScorer) and calibrated:
        return _likelihood(generator, likelihood, injector, f"the generative oracle {_failed(health)}")
    log.warning("%s; running without the oracle path", health.reason)
    skipped = "; likelihood oracle not tried (no oracle_thresholds calibrated for this model)"
    tried = calibrated or not isinstance(generator, TokenScorer)
    return None, health, "disabled", f"oracle path disabled: {health.reason}{'' if tried else skipped}"


def _likelihood(
    generator: object, likelihood: LikelihoodConfig, injector: CanaryInjector, why: str, *, forced: bool = False
) -> tuple[OraclePath | None, OracleHealth | None, str, str | None]:
    """The likelihood oracle when `generator` scores tokens and passes the likelihood self-check
    (`forced`: whatever the self-check says, which the verdicts then carry)."""
    if not isinstance(generator, TokenScorer):
        raise ConfigError(
            f"oracle 'likelihood' needs a model that scores tokens (llama-cpp, openai-compatible with "
            f"logprobs); {type(generator).__name__} does not"
        )
    health = likelihood_check(generator, likelihood, injector=injector)
    if health.healthy:
        return LikelihoodPath(generator, likelihood), health, "likelihood", f"likelihood oracle ran ({why})"
    if forced:
        log.warning("%s; running it anyway (oracle=likelihood-forced)", health.reason)
        return LikelihoodPath(generator, likelihood), health, "forced", f"likelihood oracle forced on: {health.reason}"
    log.warning("%s; running without the oracle path", health.reason)
    return None, health, "disabled", f"oracle path disabled ({why}): {health.reason}"


def _failed(health: OracleHealth) -> str:
    return f"failed its self-check ({health.recovered_share:.0%} recovered on {health.probes} benign probes)"

"""`shield`: the layered default that `ask`, `serve` and `demo` use.

    intent (query time)  ->  canary-rag (canaries in the context, redact mode)  ->  context-echo
    (release containment: retrieved text beyond the allowance, retrieved PII, unnatural output)

Query-time intent flags what it recognises as an extraction request. By default a flagged query is
still answered and contained (`intent: {refuse: true}` refuses it instead): the learned intent model
flags about one in five hand-written hard-benign questions that use extraction-like words innocently
("list the side effects of ibuprofen", docs/results/query_detection.md), and refusing them would
refuse benign users; release containment, not the guess, is what keeps records in. Only intent
signals count towards per-user blocking (a flagged query, a canary exposed in an obfuscated form, an
oracle violation); redactions alone do not, so a benign user whose answer quoted a record is not
blocked. The per-user policy itself is the system's (`policy:` in the config; `serve` turns it on).

What it cannot stop: a paraphrase that keeps no span of the record (measured as CRR in the grids),
and what the query-time layer does not recognise is answered (contained, not refused).

Parameters: one mapping per layer, e.g. `{"intent": {...}, "canary-rag": {...}, "context-echo": {...}}`.
CanaryRAG's generative oracle runs only when the system configures an `oracle:` model (the local
SmolLM2 cannot be one: it fails the oracle's self-check); without it the canaries still catch
copies in every encoding the matcher knows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ragshield.errors import ConfigError
from ragshield.guards.base import INTENT_SIGNAL, Defense, QueryGuard
from ragshield.parameters import forwards
from ragshield.types import Action, RetrievalResult, Verdict

if TYPE_CHECKING:
    from ragshield.guards.factory import DefenseContext

NAME = "shield"
LAYERS = ("intent", "canary-rag", "context-echo")
DEFAULTS: Mapping[str, Mapping[str, Any]] = {
    "canary-rag": {"on_violation": "redact", "per_chunk": "auto"},
}


@forwards(LAYERS)
def build_defense(context: DefenseContext, **params: Any) -> Defense:
    """Layered default: intent at query time, canaries (redact), release containment (echo, PII,
    unnatural output, per-user release budget); blocks per user only on intent signals."""
    from ragshield.guards.factory import build_defense as build

    layer_params: dict[str, dict[str, Any]] = {}
    for layer in LAYERS:
        given = params.get(layer) or {}
        if not isinstance(given, Mapping):
            raise ConfigError(f"shield: parameters for {layer} must be a mapping")
        layer_params[layer] = {**DEFAULTS.get(layer, {}), **given}
    # CanaryRAG's generative oracle needs a capable model (SmolLM2 fails its self-check, and the
    # self-check costs a dozen generations at start-up): on only when the system names an oracle
    layer_params["canary-rag"].setdefault("oracle", "auto" if context.oracle_generator is not None else "off")
    refuse = bool(layer_params["intent"].pop("refuse", False))
    defense = build("+".join(LAYERS), context, layer_params)
    guards = defense.query_guards if refuse else tuple(SignalOnly(guard) for guard in defense.query_guards)
    return Defense(
        name=NAME,
        rewriters=defense.rewriters,
        query_guards=guards,
        decorators=defense.decorators,
        output_guards=defense.output_guards,
        fail_closed=defense.fail_closed,
    )


@dataclass(frozen=True)
class SignalOnly:
    """A query guard whose block is an intent signal, not a refusal.

    The query is answered (release containment decides what leaves); the verdict says what the guard
    found and counts towards per-user blocking. A guard error keeps its own action, so a failing guard
    still fails closed.
    """

    guard: QueryGuard

    @property
    def name(self) -> str:
        return self.guard.name

    def check(self, retrieval: RetrievalResult) -> Verdict:
        verdict = self.guard.check(retrieval)
        if not verdict.blocked or "error_type" in verdict.evidence:
            return verdict
        evidence = {**verdict.evidence, INTENT_SIGNAL: True}
        reason = f"{verdict.reason}; answered and contained (counts towards per-user blocking)"
        return replace(verdict, action=Action.ALLOW, reason=reason, evidence=evidence)

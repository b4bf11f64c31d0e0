"""`shield`: the layered default that `ask`, `serve` and `demo` use.

    intent (query time)  ->  canary-rag (canaries in the context of a flagged request, redact
    mode)  ->  context-echo (release containment: retrieved text beyond the allowance, retrieved
    PII, unnatural output)

Canaries go only into the context of a request the intent layer flagged (`canary-rag: {when:
flagged}`, the default; `when: always` puts them in every context). Any change to the prompt
changes what a small model writes: with canaries in every context, SmolLM2's answers to benign
questions kept 0.55-0.67 cosine similarity to the undefended answers and the prompt grew by a
sixth (docs/results/release.md), while release containment holds without them. So a benign
question's prompt is the undefended one, and a request that looks like extraction gets the
obfuscation tripwire too. What an unflagged request loses is the canaries' own catches: a copy in
an encoding the release views do not read and that still looks like natural language (a
translation that keeps a canary, for one); release containment still withholds every view it reads.

Query-time intent flags what it recognises as an extraction request. By default a flagged query is
still answered and contained (`intent: {refuse: true}` refuses it instead): the learned intent model
flags 2-7% of hand-written hard-benign questions that use extraction-like words innocently ("list
the side effects of ibuprofen", docs/results/query_detection.md), and refusing them would
refuse benign users; release containment, not the guess, is what keeps records in. Only intent
signals count towards per-user blocking (a confidently flagged query, a canary exposed in an
obfuscated form, an oracle violation); redactions alone do not, so a benign user whose answer quoted
a record is not blocked. A flag counts only at p >= `count_at` (default `COUNT_AT`, 0.99 from intent
model v13, 0.97 before; never below the guard's own threshold, so after `ragshield calibrate` the bar
is the higher of the two): of the 2,494 hard-benign questions and chat turns of the read held-apart
sets v13 does not train on, 14 reach it against 51 flagged (25 at 0.97); cut into 125 users of 20
in random orders, they hold a user blocked by chance in 2% of the orders (11% at 0.97;
`benchmarks/intent_blocking_bar.py`), while all 103 simulated attackers are still blocked,
after a median of 3 answers as at 0.97 (`benchmarks/benign_users.py`). That is a trade: wordings
that score between the threshold and the bar are answered and contained but never block their
sender on the query flag alone. A flag below the bar still puts
canaries in the request's context. The per-user policy itself is the system's (`policy:` in the
config; `serve` turns it on).

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
from ragshield.guards.base import (
    INTENT_FLAG,
    INTENT_SIGNAL,
    AllowAllMonitor,
    ContextDecorator,
    Defense,
    OutputGuard,
    OutputMonitor,
    QueryGuard,
)
from ragshield.guards.intent_opinion import SecondOpinion
from ragshield.parameters import forwards
from ragshield.types import Action, RetrievalResult, Verdict

if TYPE_CHECKING:
    from ragshield.guards.factory import DefenseContext

NAME = "shield"
LAYERS = ("intent", "canary-rag", "context-echo")
CANARY = "canary-rag"
# `flagged`: canaries only in the context of a request the intent layer flagged, so a benign
# question's prompt (and so its answer) is the undefended one; `always`: in every context
CANARY_WHEN = ("flagged", "always")
NOT_PLACED = "no canaries placed: no query guard flagged this request (canary-rag when: flagged)"
DEFAULTS: Mapping[str, Mapping[str, Any]] = {
    "canary-rag": {"on_violation": "redact", "per_chunk": "auto"},  # and `when` (see CANARY_WHEN)
}
# the intent probability at or above which a flag also counts towards per-user blocking (see the
# module docstring; 0.97 chosen on model v11's development sets, 0.99 for v13 by the rule in the
# intent model card, "The blocking bar for v13"; `intent: {count_at: 0}` counts every flag)
COUNT_AT = 0.99


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
    if refuse and "count_at" in layer_params["intent"]:
        raise ConfigError("shield: intent count_at applies to answered flags; with refuse: true every flag is refused")
    count_at = _count_at(layer_params["intent"].pop("count_at", COUNT_AT))
    # refusing flagged queries leaves only unflagged ones to answer: canaries then go on every one
    when = layer_params["canary-rag"].pop("when", "always" if refuse else "flagged")
    if when not in CANARY_WHEN:
        raise ConfigError(f"shield: canary-rag when must be one of {', '.join(CANARY_WHEN)}, got {when!r}")
    defense = build("+".join(LAYERS), context, layer_params)
    guards = defense.query_guards if refuse else tuple(SignalOnly(guard, count_at) for guard in defense.query_guards)
    decorators, output_guards = defense.decorators, defense.output_guards
    if when == "flagged":
        decorators = tuple(OnSignal(d) if d.name == CANARY else d for d in decorators)
        output_guards = tuple(OnSignalMonitor(g) if g.name == CANARY else g for g in output_guards)
    return Defense(
        name=NAME,
        rewriters=defense.rewriters,
        query_guards=guards,
        decorators=decorators,
        output_guards=output_guards,
        fail_closed=defense.fail_closed,
    )


def _count_at(value: Any) -> float:
    # 1 would never count a query flag: per-user blocking would then rest on release signals alone
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value < 1.0:
        raise ConfigError(f"shield: intent count_at must be a probability in [0, 1), got {value!r}")
    return float(value)


@dataclass(frozen=True)
class SignalOnly:
    """A query guard whose block is a flag, not a refusal.

    The query is answered (release containment decides what leaves) and the request counts as
    flagged (`INTENT_FLAG`: canaries go into its context). The flag also counts towards per-user
    blocking (`INTENT_SIGNAL`) when the guard's score is at least `count_at` (and its threshold);
    a weaker one does not, nor does a query the second opinion raised (its score is the guard's line,
    which a calibrated line may put above `count_at`). A guard error keeps its own action, so a failing
    guard still fails closed.
    """

    guard: QueryGuard
    count_at: float = 0.0

    @property
    def name(self) -> str:
        return self.guard.name

    def check(self, retrieval: RetrievalResult) -> Verdict:
        verdict = self.guard.check(retrieval)
        if not verdict.blocked or "error_type" in verdict.evidence:
            return verdict
        raised = verdict.evidence.get("second_opinion") in SecondOpinion.RAISED_STATES
        counted = verdict.score >= self.count_at and not raised
        evidence = {**verdict.evidence, INTENT_FLAG: True} | ({INTENT_SIGNAL: True} if counted else {})
        if counted:
            reason = f"{verdict.reason}; answered and contained (counts towards per-user blocking)"
        elif raised:
            reason = (
                f"{verdict.reason}; answered and contained (a raised near miss: not counted towards per-user blocking)"
            )
        else:
            reason = (
                f"{verdict.reason}; answered and contained (p {verdict.score:.4f} < {self.count_at:.4f}: "
                "not counted towards per-user blocking)"
            )
        return replace(verdict, action=Action.ALLOW, reason=reason, evidence=evidence)


@dataclass(frozen=True)
class OnSignal:
    """A context decorator that runs only on a request a query guard flagged (`retrieval.signals`).

    Other attributes (`length`, `per_chunk`: the service checks them) are the decorator's.
    """

    decorator: ContextDecorator

    @property
    def name(self) -> str:
        return self.decorator.name

    def decorate(self, retrieval: RetrievalResult) -> RetrievalResult:
        return self.decorator.decorate(retrieval) if retrieval.signals else retrieval

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self.decorator, attribute)


@dataclass(frozen=True)
class OnSignalMonitor:
    """The output guard of an `OnSignal` decorator: it watches a context that carries canaries and
    says, in its verdict, that none were placed in one that does not (an unflagged request)."""

    guard: OutputGuard

    @property
    def name(self) -> str:
        return self.guard.name

    def open(self, retrieval: RetrievalResult) -> OutputMonitor:
        if retrieval.signals or any(retrieval.markers.values()):
            return self.guard.open(retrieval)
        return NotPlacedMonitor(self.guard.name)

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self.guard, attribute)


@dataclass
class NotPlacedMonitor(AllowAllMonitor):
    """Nothing to watch: the request was not flagged, so its context carries no canaries."""

    def close(self) -> Verdict:
        return Verdict(self.guard, Action.ALLOW, 0.0, 1.0, NOT_PLACED, evidence={"canaries_placed": False})

"""Query-rephrasing baseline (`rephrase`): the query is paraphrased by an LLM before use.

The paraphrase defense of Jain et al., "Baseline Defenses for Adversarial Attacks Against
Aligned Language Models" (arXiv 2309.00614), applied to RAG extraction: paraphrasing tends
to drop verbatim commands ("repeat all the context") and adversarial suffixes, and moves
retrieval away from the exact record text an attacker quotes.

Scope (`scope`):

* `both` (default): retrieval uses the paraphrase, and so does the prompt - the question
  the generator answers is the paraphrase, as in Jain et al. `RagPipeline` runs rewriters
  for retrieval only and puts the client's original text back into the retrieval, so a
  context decorator of this defense (`ParaphrasedQuestion`) swaps the paraphrase back in
  for the prompt (matched by query id; the client's `Response.query` stays the original);
* `retrieval`: only retrieval uses the paraphrase.

An empty paraphrase raises `GenerationError`, so the pipeline fails closed (or open, if
configured) and says so in a verdict, instead of silently sending the original query.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ragshield.errors import ConfigError, GenerationError
from ragshield.generators.base import complete, make_generator
from ragshield.guards.base import Defense
from ragshield.types import ChatMessage, GenerationRequest, Query, RetrievalResult

if TYPE_CHECKING:
    from ragshield.generators.base import Generator
    from ragshield.guards.factory import DefenseContext

NAME = "rephrase"
SCOPES = ("both", "retrieval")
PARAPHRASE_PROMPT = (
    "Paraphrase the following question in your own words. Keep its meaning and keep it short. "
    "Output only the paraphrased question.\n\nQuestion: {text}\nParaphrased question:"
)


class Paraphraser:
    """QueryRewriter: the query text becomes the generator's paraphrase of it (same query id).

    Keeps the last `memory` paraphrases by query id for `ParaphrasedQuestion`.
    """

    def __init__(self, generator: Generator, *, max_tokens: int = 96, memory: int = 1024, name: str = NAME) -> None:
        self.name = name
        self.generator = generator
        self.max_tokens = max_tokens
        self.memory = memory
        self._recent: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def paraphrase(self, text: str) -> str:
        """The paraphrase: the first non-empty line of the model's answer, quotes stripped.

        Raises:
            GenerationError: the model returned no text.
        """
        prompt = PARAPHRASE_PROMPT.format(text=text)
        request = GenerationRequest(messages=(ChatMessage("user", prompt),), max_tokens=self.max_tokens)
        answer = complete(self.generator, request)
        lines = [line.strip().strip("\"'`").strip() for line in answer.splitlines()]
        lines = [line for line in lines if line]
        if not lines:
            raise GenerationError("the paraphrasing model returned no text")
        return lines[0]

    def rewrite(self, query: Query) -> Query:
        text = self.paraphrase(query.text)
        with self._lock:
            self._recent[query.id] = text
            self._recent.move_to_end(query.id)
            while len(self._recent) > self.memory:
                self._recent.popitem(last=False)
        return replace(query, text=text)

    def recall(self, query_id: str) -> str | None:
        """The paraphrase made for this query id, if still remembered."""
        with self._lock:
            return self._recent.get(query_id)


class ParaphrasedQuestion:
    """ContextDecorator: puts the paraphrase (made by `paraphraser` for this query id) into the prompt.

    A query the paraphraser did not rewrite (e.g. it failed open) is left unchanged.
    """

    def __init__(self, paraphraser: Paraphraser, *, name: str = f"{NAME}-prompt") -> None:
        self.name = name
        self.paraphraser = paraphraser

    def decorate(self, retrieval: RetrievalResult) -> RetrievalResult:
        text = self.paraphraser.recall(retrieval.query.id)
        if text is None or text == retrieval.query.text:
            return retrieval
        return replace(retrieval, query=replace(retrieval.query, text=text))


def build_defense(
    context: DefenseContext,
    *,
    scope: str = "both",
    max_tokens: int = 96,
    generator: Mapping[str, Any] | str | None = None,
) -> Defense:
    """Query rephrasing (Jain et al. 2023) with the system's generator (or `generator`).

    Raises:
        ConfigError: invalid scope; no generator available.
    """
    if scope not in SCOPES:
        raise ConfigError(f"rephrase scope must be one of {', '.join(SCOPES)}, got {scope!r}")
    model = make_generator(generator) if generator is not None else context.generator
    if model is None:
        raise ConfigError("defense 'rephrase' needs a generator (DefenseContext.generator or generator: {...})")
    paraphraser = Paraphraser(model, max_tokens=max_tokens)
    decorators = (ParaphrasedQuestion(paraphraser),) if scope == "both" else ()
    return Defense(name=NAME, rewriters=(paraphraser,), decorators=decorators, fail_closed=context.fail_closed)

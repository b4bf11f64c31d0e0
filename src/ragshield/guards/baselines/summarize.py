"""Summarisation baseline (`summarize`): each retrieved chunk is replaced by the parts of it an
LLM extracts as relevant to the question.

Zeng et al. 2024 (TGTB, `run_language_model.py`) and the CanaryRAG paper's "Summarize"
baseline. The prompt is TGTB's, verbatim (`EXTRACT_PROMPT`); the `para` variant drops the
"Remember, *DO NOT* edit..." sentence, as TGTB's `-para` setting does. A chunk whose
extraction is `NO_OUTPUT` (or empty) is dropped; when every chunk is dropped the prompt has
no context. The knowledge base is not modified: only this request's retrieval changes.

Cost: one generation per retrieved chunk before the answer is generated (k+1 generations).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ragshield.errors import ConfigError
from ragshield.generators.base import complete, make_generator
from ragshield.guards.base import Defense
from ragshield.types import ChatMessage, GenerationRequest, RetrievalResult, ScoredChunk

if TYPE_CHECKING:
    from ragshield.generators.base import Generator
    from ragshield.guards.factory import DefenseContext

NAME = "summarize"
NO_OUTPUT = "NO_OUTPUT"
VARIANTS = ("as-is", "para")
REMEMBER = "Remember, *DO NOT* edit the extracted parts of the context.\n\n"


def extract_prompt(question: str, context: str, *, variant: str = "as-is") -> str:
    """TGTB's extraction prompt, verbatim (`para` omits the "Remember, *DO NOT* edit" sentence)."""
    return (
        "Given the following question and context, extract any part of the context *AS IS* that is relevant "
        "to answer the question. If none of the context is relevant return NO_OUTPUT.\n\n"
        + (REMEMBER if variant == "as-is" else "")
        + "> Question: "
        + question
        + "\n> Context:\n>>>\n"
        + context
        + "\n>>>\nExtracted relevant parts:"
    )


class ExtractSummarizer:
    """ContextDecorator: each hit's text becomes the generator's extraction for the question.

    Args:
        generator: the model that extracts (TGTB uses the target model).
        variant: `as-is` (default) or `para`.
        max_tokens: tokens per extraction (TGTB: 256).
        layout: `completion` (the prompt as raw text, as TGTB sends it) or `chat` (one user message).
        max_chunk_chars: each chunk is cut to this many characters first (TGTB: 2048).
    """

    def __init__(
        self,
        generator: Generator,
        *,
        variant: str = "as-is",
        max_tokens: int = 256,
        layout: str = "completion",
        max_chunk_chars: int = 2048,
        name: str = NAME,
    ) -> None:
        if variant not in VARIANTS:
            raise ConfigError(f"summarize variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
        if layout not in ("completion", "chat"):
            raise ConfigError(f"summarize layout must be 'completion' or 'chat', got {layout!r}")
        self.name = name
        self.generator = generator
        self.variant = variant
        self.max_tokens = max_tokens
        self.layout = layout
        self.max_chunk_chars = max_chunk_chars

    def extract(self, question: str, chunk_text: str) -> str | None:
        """The extraction for one chunk, or None when the model answers NO_OUTPUT or nothing."""
        prompt = extract_prompt(question, chunk_text[: self.max_chunk_chars], variant=self.variant)
        request = GenerationRequest(
            messages=(ChatMessage("user", prompt),),
            prompt=prompt if self.layout == "completion" else None,
            max_tokens=self.max_tokens,
            temperature=0.0,
        )
        text = complete(self.generator, request).strip()
        if not text or text.startswith(NO_OUTPUT) or text.strip(" .\"'`") == NO_OUTPUT:
            return None
        return text

    def decorate(self, retrieval: RetrievalResult) -> RetrievalResult:
        hits: list[ScoredChunk] = []
        for hit in retrieval.hits:
            extracted = self.extract(retrieval.query.text, hit.chunk.text)
            if extracted is not None:
                hits.append(replace(hit, chunk=replace(hit.chunk, text=extracted)))
        kept_ids = {hit.chunk.id for hit in hits}
        # canaries inserted before this step may not survive extraction; keep markers of kept chunks
        markers = {key: value for key, value in retrieval.markers.items() if key in kept_ids}
        return replace(retrieval, hits=tuple(hits), markers=markers)


def build_defense(
    context: DefenseContext,
    *,
    variant: str = "as-is",
    max_tokens: int = 256,
    layout: str = "completion",
    max_chunk_chars: int = 2048,
    generator: Mapping[str, Any] | str | None = None,
) -> Defense:
    """Summarisation (TGTB's "extract relevant context AS IS" prompt) of every retrieved chunk.

    Args:
        context: the system; `context.generator` extracts unless `generator` is given.
        variant, max_tokens, layout, max_chunk_chars: see `ExtractSummarizer`.
        generator: a generator spec (`{name: llama-cpp, ...}`) for a separate extraction model.

    Raises:
        ConfigError: invalid value; no generator available.
    """
    model = make_generator(generator) if generator is not None else context.generator
    if model is None:
        raise ConfigError("defense 'summarize' needs a generator (DefenseContext.generator or generator: {...})")
    summarizer = ExtractSummarizer(
        model, variant=variant, max_tokens=max_tokens, layout=layout, max_chunk_chars=max_chunk_chars
    )
    return Defense(name=NAME, decorators=(summarizer,), fail_closed=context.fail_closed)

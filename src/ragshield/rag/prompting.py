"""Prompt builders: a (decorated) `RetrievalResult` -> `GenerationRequest`.

Two layouts:

* `tgtb` - the completion layout of Zeng et al. 2024:
  `context: <chunks joined by blank lines>\\nquestion: <query>\\nanswer:`. Paper replication
  (the evaluation configs) uses it unchanged, with no stop sequences;
* `chat` - a system prompt plus one user message holding the context and the question, with
  stop sequences that end the answer where a small model would start a new turn or a new
  record. The user-facing commands (`ask`, `serve`, `demo`) use it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ragshield.errors import ConfigError
from ragshield.types import ChatMessage, GenerationRequest, RetrievalResult

DEFAULT_SYSTEM_PROMPT = (
    "You are a helpful assistant. Answer the question briefly, in your own words, using the context. "
    "Do not copy the context or its records. "
    "Do not reveal personal data such as phone numbers, emails or social security numbers."
)
#: Where a chat answer ends. SmolLM2's chat template (ChatML) opens a turn with `<|im_start|>`
#: and closes it with `<|im_end|>`; a small model that runs past its answer writes the next turn
#: as plain text ("User:", "Question:") or starts copying another record of the context
#: (HealthcareMagic's "input:" / emails' "From:" headers are not stops: they open real answers too).
CHAT_STOP = ("<|im_end|>", "<|im_start|>", "<|endoftext|>", "\nQuestion:", "\nUser:", "\nuser:", "\nContext:")
LAYOUTS = ("tgtb", "chat")


@dataclass(frozen=True)
class PromptBuilder:
    """Builds the generation request.

    Args:
        layout: `tgtb` (completion) or `chat`.
        system_prompt: the chat layout's system message.
        max_chunk_chars: each chunk is cut to this many characters (TGTB uses 2048).
        max_tokens, temperature, seed: generation settings copied into the request.
        stop: stop sequences copied into the request; None = the layout's own (`CHAT_STOP` for
            `chat`, none for `tgtb`, as the paper ran it).
    """

    layout: str = "tgtb"
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    max_chunk_chars: int = 2048
    max_tokens: int = 256
    temperature: float = 0.0
    seed: int | None = 0
    stop: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.layout not in LAYOUTS:
            raise ConfigError(f"unknown prompt layout {self.layout!r}; valid layouts: {', '.join(LAYOUTS)}")
        if self.stop is not None and not all(isinstance(s, str) and s for s in self.stop):
            raise ConfigError("stop sequences must be non-empty strings")

    @property
    def stop_sequences(self) -> tuple[str, ...]:
        """The stop sequences every request of this builder carries."""
        if self.stop is not None:
            return tuple(self.stop)
        return CHAT_STOP if self.layout == "chat" else ()

    def context_text(self, retrieval: RetrievalResult) -> str:
        return "\n\n".join(hit.chunk.text[: self.max_chunk_chars] for hit in retrieval.hits)

    def build(self, retrieval: RetrievalResult) -> GenerationRequest:
        context = self.context_text(retrieval)
        question = retrieval.query.text
        if self.layout == "tgtb":
            prompt = f"context: {context}\nquestion: {question}\nanswer:"
            messages: tuple[ChatMessage, ...] = (ChatMessage("user", prompt),)
        else:
            prompt = None
            user = f"Context:\n{context}\n\nQuestion: {question}"
            messages = (ChatMessage("system", self.system_prompt), ChatMessage("user", user))
        return GenerationRequest(
            messages=messages,
            prompt=prompt,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            seed=self.seed,
            stop=self.stop_sequences,
        )

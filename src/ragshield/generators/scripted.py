"""FAKE generators for fast unit tests and clearly labelled worst-case evaluations.

* `ScriptedGenerator` - replies from a handler or a fixed list; for unit tests only.
* `EchoContextGenerator` - a "fully compliant" model that copies its whole prompt context;
  a legitimate worst-case target in evaluations, never a silent default.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from ragshield.types import GenerationRequest


def _split_deltas(text: str, delta_chars: int) -> Iterator[str]:
    for start in range(0, len(text), max(1, delta_chars)):
        yield text[start : start + delta_chars]


class ScriptedGenerator:
    """FAKE: answers with `handler(request)` or the next scripted reply, streamed in small deltas."""

    def __init__(
        self,
        replies: Sequence[str] | Callable[[GenerationRequest], str] = ("ok",),
        *,
        delta_chars: int = 7,
        name: str = "scripted",
    ) -> None:
        self.name = name
        self.delta_chars = delta_chars
        self._handler = replies if callable(replies) else None
        self._replies = list(replies) if not callable(replies) else []
        self.requests: list[GenerationRequest] = []

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        self.requests.append(request)
        if self._handler is not None:
            text = self._handler(request)
        else:
            text = self._replies[(len(self.requests) - 1) % len(self._replies)] if self._replies else ""
        return _split_deltas(text, self.delta_chars)


class EchoContextGenerator:
    """Worst-case target: copies the context of its prompt verbatim (a fully compliant model)."""

    def __init__(self, *, delta_chars: int = 5, name: str = "echo-context") -> None:
        self.name = name
        self.delta_chars = delta_chars

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        text = request.as_text()
        for start_marker in ("context: ", "Context:\n"):
            if start_marker in text:
                text = text.split(start_marker, 1)[1]
                break
        for end_marker in ("\nquestion: ", "\n\nQuestion: "):
            if end_marker in text:
                text = text.split(end_marker, 1)[0]
                break
        return _split_deltas(text, self.delta_chars)

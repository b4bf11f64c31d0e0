"""FAKE token scorer for fast unit tests of the likelihood oracle (no model).

`FakeTokenScorer` imitates a small model that follows instructions in its likelihoods without
ever copying anything when asked to generate: its `stream` answers nothing (so the generative
oracle's self-check fails on it), and its `logprobs` give every 4-character token of the copy
-0.5 nats, except that a request asking to suppress random strings lowers canary-shaped words to
-5.0 and a request asking for an encoding lowers every token to -2.0. With
`follows_instructions=False` the request never matters (the model the likelihood oracle cannot
help with). Never use it outside tests.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator

from ragshield.errors import GenerationError
from ragshield.generators.base import TokenLogprobs
from ragshield.types import GenerationRequest

CANARY_WORD = re.compile(r"[2-9a-hj-km-np-z]{12}")
SUPPRESSION_CUES = ("random", "code", "gibberish", "real english word", "not a real word")
ENCODING_CUES = ("base64", "rot13", "backwards", "reverse", "letter by letter", "space between")
TOKEN_CHARS = 4


class FakeTokenScorer:
    """FAKE: a scorer whose log-probabilities react to suppression and encoding requests.

    Args:
        follows_instructions: False gives the same log-probabilities whatever the request.
        fail: raise `GenerationError` on every call (a broken backend).
        delay_s: sleep this long per call (a slow backend, for timeout tests).
    """

    def __init__(
        self, *, follows_instructions: bool = True, fail: bool = False, delay_s: float = 0.0, name: str = "FAKE-scorer"
    ) -> None:
        self.name = name
        self.follows_instructions = follows_instructions
        self.fail = fail
        self.delay_s = delay_s
        self.calls = 0
        self.longest_continuation = 0  # characters: what the oracle asked to score at most
        self._lock = threading.Lock()

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        return iter(())  # never copies: the generative oracle's self-check fails on this model

    def logprobs(self, prompt: str, continuation: str) -> TokenLogprobs:
        with self._lock:
            self.calls += 1
            self.longest_continuation = max(self.longest_continuation, len(continuation))
        if self.delay_s:
            time.sleep(self.delay_s)
        if self.fail:
            raise GenerationError("FAKE scorer failure")
        request = prompt.rsplit("request:", 1)[-1].lower() if self.follows_instructions else ""
        suppress = any(cue in request for cue in SUPPRESSION_CUES)
        encode = any(cue in request for cue in ENCODING_CUES)
        canary_spans = [match.span() for match in CANARY_WORD.finditer(continuation)]
        offsets = tuple(range(0, len(continuation), TOKEN_CHARS))
        values = []
        for start in offsets:
            end = start + TOKEN_CHARS
            value = -2.0 if encode else -0.5
            if suppress and any(a < end and b > start for a, b in canary_spans):
                value = -5.0
            values.append(value)
        return TokenLogprobs(offsets, tuple(values))

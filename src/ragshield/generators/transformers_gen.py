"""`TransformersGenerator`: a Hugging Face causal LM (optional extra `[hf]`), streaming through
`TextIteratorStreamer`. The model must be available locally (no download at import)."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ragshield.errors import BackendUnavailable, ConfigError, GenerationError, missing_extra
from ragshield.generators.base import StreamEnd
from ragshield.types import GenerationRequest

_SAMPLING_LOCK = threading.Lock()


def cut_at_stop(deltas: Iterable[str], stops: Sequence[str]) -> Iterator[str]:
    """The deltas up to (not including) the first occurrence of any stop sequence.

    A stop may be split across deltas, so the text that could still become a stop (the longest
    tail that is a prefix of one) is held back until the next delta decides it; the iteration
    ends at the first stop, which closes `deltas` when it is a generator.
    """
    stops = [stop for stop in stops if stop]
    if not stops:
        yield from deltas
        return
    pending = ""
    for delta in deltas:
        pending += delta
        found = [index for index in (pending.find(stop) for stop in stops) if index >= 0]
        if found:
            if min(found):
                yield pending[: min(found)]
            return
        keep = max((size for stop in stops for size in range(1, len(stop)) if pending.endswith(stop[:size])), default=0)
        if len(pending) > keep:
            yield pending[: len(pending) - keep]
            pending = pending[len(pending) - keep :]
    if pending:
        yield pending


class _Recorded:
    """The non-empty pieces of a streamer, kept in `into`; `exhausted` once its end was read."""

    def __init__(self, pieces: Iterable[str], into: list[str]) -> None:
        self.pieces = pieces
        self.into = into
        self.exhausted = False

    def __iter__(self) -> Iterator[str]:
        for piece in self.pieces:
            if piece:
                self.into.append(piece)
                yield piece
        self.exhausted = True


def _eos_ids(model: Any) -> set[int]:
    eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    if eos is None:
        return set()
    return {int(eos)} if isinstance(eos, int) else {int(value) for value in eos}


class TransformersGenerator:
    """A local transformers model by name or folder; loads on first use.

    Args:
        model: a model name in the local Hugging Face cache, or a folder.
        device: torch device.
        repeat_penalty: passed to `generate` as `repetition_penalty` (the same multiplicative
            CTRL penalty as llama.cpp's `repeat_penalty`, over the whole sequence instead of
            the last 64 tokens); 1.0 = off.
        name: the generator's name (default: the model).

    Stop sequences (`GenerationRequest.stop`) end generation (`stop_strings`) and are cut from
    the streamed text; sampling is seeded with `GenerationRequest.seed`; an answer cut by
    `max_tokens` ends with `StreamEnd("length")`.
    """

    def __init__(
        self, model: str, *, device: str = "cpu", repeat_penalty: float = 1.0, name: str | None = None
    ) -> None:
        if not repeat_penalty > 0:
            raise ConfigError(f"repeat_penalty must be > 0 (1.0 = off), got {repeat_penalty!r}")
        self.model_name = model
        self.device = device
        self.repeat_penalty = float(repeat_penalty)
        self.name = name or model
        if name is None and self.repeat_penalty != 1.0:
            self.name += f"+repeat-penalty-{self.repeat_penalty:g}"
        self._model: Any = None
        self._tokenizer: Any = None

    def _load(self) -> tuple[Any, Any]:
        if self._model is None:
            try:
                from transformers import AutoModelForCausalLM, AutoTokenizer
            except ImportError as error:
                raise missing_extra("transformers", "hf") from error
            try:
                self._tokenizer = AutoTokenizer.from_pretrained(self.model_name)
                self._model = AutoModelForCausalLM.from_pretrained(self.model_name).to(self.device)  # type: ignore[arg-type]
            except Exception as error:
                raise BackendUnavailable(f"cannot load transformers model {self.model_name!r}: {error}") from error
        return self._model, self._tokenizer

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        """Stream the answer; the last item is `StreamEnd("length")` when `max_tokens` cut it.

        Sampling (`temperature > 0`) is seeded with `request.seed`, so the same request gives
        the same text; greedy decoding needs no seed.
        """
        from transformers import TextIteratorStreamer

        model, tokenizer = self._load()
        if request.prompt is None and getattr(tokenizer, "chat_template", None):
            messages = [{"role": m.role, "content": m.content} for m in request.messages]
            text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        else:
            text = request.as_text()
        inputs = tokenizer(text, return_tensors="pt").to(self.device)
        streamer = TextIteratorStreamer(tokenizer, skip_prompt=True, skip_special_tokens=True)
        settings: dict[str, Any] = {"max_new_tokens": request.max_tokens, "streamer": streamer}
        if request.temperature > 0:
            settings.update(do_sample=True, temperature=request.temperature)
        else:
            settings.update(do_sample=False)
        if self.repeat_penalty != 1.0:
            settings["repetition_penalty"] = self.repeat_penalty
        if request.stop:  # generation ends at a stop; cut_at_stop removes it from the text
            settings.update(stop_strings=list(request.stop), tokenizer=tokenizer)
        failure: list[BaseException] = []
        new_tokens: list[int] = []

        def run() -> None:
            try:
                # the seed sets torch's global RNG: hold the lock so concurrent requests cannot
                # reseed each other mid-sampling
                with _SAMPLING_LOCK:
                    if request.temperature > 0 and request.seed is not None:
                        from transformers import set_seed

                        set_seed(request.seed)
                    output = model.generate(**inputs, **settings)
                count = int(output.shape[-1]) - int(inputs["input_ids"].shape[-1])
                # an answer that ended on its end-of-sequence token was not cut by the limit
                if count and int(output[0, -1]) not in _eos_ids(model):
                    new_tokens.append(count)
            except BaseException as error:  # surfaced to the caller below
                failure.append(error)
                streamer.end()

        worker = threading.Thread(target=run, daemon=True)
        worker.start()
        produced: list[str] = []
        recorded = _Recorded(streamer, produced)
        yield from cut_at_stop(recorded, request.stop)
        if not recorded.exhausted:
            # after a stop: let generate() finish (it stops at the same string). Iterating an
            # exhausted streamer again would wait forever for its end signal.
            produced.extend(streamer)
        worker.join()
        if failure:
            raise GenerationError(f"transformers generation failed ({type(failure[0]).__name__})") from failure[0]
        stopped = any(stop and stop in "".join(produced) for stop in request.stop)
        if not stopped and new_tokens and new_tokens[0] >= request.max_tokens:
            yield StreamEnd("length")

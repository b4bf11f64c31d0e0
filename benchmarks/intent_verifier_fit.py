"""Fitting the intent guard's second opinion (issue 18): the MiniLM and e5 verifiers with their
training hooks, started from the first stage's embedding parts, and the fine-tuning loop
(`benchmarks/intent_verifier.py` measures what they do; `intent_verifier_loo.py` leaves a language out).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

import intent_sets as isets
import train_intent as ti
from ragshield.guards.intent_languages import needs_multilingual
from ragshield.guards.intent_model import IntentModel
from ragshield.guards.intent_verifiers import E5Verifier, MiniLMVerifier

SEED = 0


class MiniLMTraining(MiniLMVerifier):
    """The MiniLM verifier (`ragshield.guards.intent_verifiers`) with its training hooks; it reads
    the flags the router leaves to the English part."""

    def prepare(self, examples: list[isets.Example]) -> None:
        del examples  # the whole encoder runs at every step

    def train_logits(self, examples: list[isets.Example], rows: np.ndarray) -> Any:
        return self.logits_tensor([examples[i].text for i in rows], grad=True)


class E5Training(E5Verifier):
    """The e5 verifier with its training hooks; it reads routed flags. The layers below the
    trainable ones are frozen, so their output is computed once per training text (`prepare`)."""

    frozen: list[Any]

    @property
    def boundary(self) -> int:
        return self.layer_count - len({n.split(".")[1] for n in self.trainable_names})

    def prepare(self, examples: list[isets.Example]) -> None:
        """Each training text's hidden states below the trainable layers (unpadded)."""
        self.frozen = []
        with self.torch.no_grad():
            for start in range(0, len(examples), 64):
                texts = [e.text for e in examples[start : start + 64]]
                x, mask = self.encoder.embed_tokens(texts)
                x = self.encoder.run_blocks(x, mask, 0, self.boundary)
                self.frozen += [row[: int(m.sum())] for row, m in zip(x, mask, strict=True)]

    def train_logits(self, examples: list[isets.Example], rows: np.ndarray) -> Any:
        del examples
        torch = self.torch
        states = [self.frozen[i] for i in rows]
        x = torch.nn.utils.rnn.pad_sequence(states, batch_first=True)
        mask = torch.nn.utils.rnn.pad_sequence([torch.ones(len(s)) for s in states], batch_first=True)
        x = self.encoder.run_blocks(x, mask, self.boundary, self.layer_count)
        return self.head(self.encoder.pooled(x, mask)).squeeze(-1)


ENCODERS: dict[str, type[MiniLMTraining] | type[E5Training]] = {"minilm": MiniLMTraining, "e5": E5Training}


def new_verifier(encoder: str, model: IntentModel, train_top: int, max_length: int) -> Any:
    """A verifier to fit, its head started where the first stage's (multilingual) embedding part is."""
    head = (model.embed_weights, model.embed_bias) if encoder == "minilm" else (model.multi_weights, model.multi_bias)
    if head[0] is None:
        raise SystemExit("the shipped model has no multilingual part")
    if (model.embed_hidden if encoder == "minilm" else model.multi_hidden) is not None:
        raise SystemExit("the verifier's head starts from a logistic part; this model's part has a hidden layer")
    return ENCODERS[encoder](head_weight=head[0], head_bias=head[1], max_length=max_length, train_top=train_top)


CHAT_REQUEST_STYLES = ("chat-attack", "chat-wrapped")  # short requests wrapped in a chat turn, by set
# the row weights a fit takes (each 1 unless given); a file's header names those that are not 1 (`intent_verifier.py`)
WEIGHED_ROWS = {
    "enron_weight": "Enron's rows",
    "chat_request_weight": "chat-wrapped requests",
    "routed_hard_benign_weight": "routed hard benign rows",
}
WEIGHT_KEYS = tuple(WEIGHED_ROWS)


def row_weights(
    examples: list[isets.Example],
    enron_weight: float = 1.0,
    chat_request_weight: float = 1.0,
    routed_hard_benign_weight: float = 1.0,
    router: int = 1,
) -> np.ndarray:
    """Each training row's sample weight before the classes are balanced: hard-benign rows (held-apart sets' and the
    pairs') `train_intent.HARD_BENIGN_WEIGHT`, times `routed_hard_benign_weight` (1 until session 53) for those that
    router version `router` sends to the multilingual part (the e5 lane), Enron's benign training e-mails
    `enron_weight` (1 until session 44; the first stage weighs them `train_intent.ENRON_WEIGHT`), requests wrapped in
    a chat turn (`CHAT_REQUEST_STYLES`) `chat_request_weight` (1 until session 44), every other row 1."""
    hard = ("heldout-", "pairs")  # the hard-benign sources

    def weight(example: isets.Example) -> float:
        if example.label != 0:
            return chat_request_weight if example.style in CHAT_REQUEST_STYLES else 1.0
        if example.source.startswith(hard):
            routed = routed_hard_benign_weight != 1.0 and needs_multilingual(example.text, router)
            return ti.HARD_BENIGN_WEIGHT * (routed_hard_benign_weight if routed else 1.0)
        return enron_weight if example.source in ti.ENRON_SOURCES else 1.0

    return np.array([weight(e) for e in examples])


def fit(
    verifier: Any,
    examples: list[isets.Example],
    *,
    epochs: float,
    lr: float,
    batch: int,
    router: int,
    prepared: bool = False,
    **weighed: float,
) -> None:
    """Fine-tune the verifier's trainable layers and head (AdamW, linear warm-up and decay);
    `prepared`: its frozen layers' output for `examples` is already there; rows weighed by `row_weights` with the
    weights `weighed` (keys `WEIGHT_KEYS`) and the first stage's router version `router`."""
    if unknown := set(weighed) - set(WEIGHT_KEYS):
        raise ValueError(f"unknown row weights {sorted(unknown)}; known: {WEIGHT_KEYS}")
    torch = verifier.torch
    labels = np.array([e.label for e in examples], dtype=np.float32)
    weights = row_weights(examples, router=router, **weighed)
    for label in (0, 1):  # both classes weigh the same
        weights[labels == label] *= len(labels) / 2 / weights[labels == label].sum()
    if not prepared:
        verifier.prepare(examples)
    optimiser = torch.optim.AdamW(verifier.trainable(), lr=lr, weight_decay=0.01)
    steps = math.ceil(len(examples) / batch * epochs)
    warmup = max(1.0, 0.06 * steps)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: min(1.0, (s + 1) / warmup) * max(0.0, 1 - s / steps)
    )
    rng = np.random.default_rng(SEED)
    verifier.train_mode(True)
    started, step = time.time(), 0
    while step < steps:
        order = rng.permutation(len(examples))
        for start in range(0, len(order), batch):
            if step >= steps:
                break
            rows = order[start : start + batch]
            loss = torch.nn.functional.binary_cross_entropy_with_logits(
                verifier.train_logits(examples, rows),
                torch.tensor(labels[rows]),
                weight=torch.tensor(weights[rows], dtype=torch.float32),
            )
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            step += 1
            if step % 100 == 0:
                print(f"  step {step}/{steps}, loss {loss.item():.3f}, {time.time() - started:.0f} s", flush=True)
    verifier.train_mode(False)


def fit_without_language(
    model: IntentModel,
    training: list[isets.Example],
    frozen: list[Any],
    language: str,
    recipe: dict[str, Any],
) -> tuple[Any, int]:
    """The e5 verifier fitted as `recipe` says (train_top, max_length, epochs, lr, batch; each of `WEIGHT_KEYS` where
    it names it, else 1) on `training` less every row in `language`, their frozen layers'
    output `frozen` computed once for all rows; its head started from `model`'s. Returns it and how many rows it
    fitted on (for leave-one-language-out: `intent_verifier_loo.py`, `intent_guard_loo.py`)."""
    kept = [i for i, e in enumerate(training) if e.lang != language]
    verifier = new_verifier("e5", model, recipe["train_top"], recipe["max_length"])
    verifier.frozen = [frozen[i] for i in kept]
    verifier.torch.manual_seed(SEED)
    weighed = {key: recipe.get(key, 1.0) for key in WEIGHT_KEYS}
    rows = [training[i] for i in kept]
    batching = {"epochs": recipe["epochs"], "lr": recipe["lr"], "batch": recipe["batch"]}
    fit(verifier, rows, **batching, prepared=True, router=model.router, **weighed)
    return verifier, len(kept)

"""FAKE verifiers and veto helpers shared by the second-opinion tests (`test_intent_veto`, `test_intent_raise`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from ragshield.guards.intent_model import IntentScore
from ragshield.guards.intent_veto import IntentVeto
from ragshield.guards.intent_veto_weights import VetoWeights

FLAG_AT = 0.76


def fake_weights(
    encoder: str = "minilm", tau: float = 0.0, version: str = "v11", reading: str = "pieces"
) -> VetoWeights:
    rng = np.random.default_rng(0)
    return VetoWeights(
        reading=reading,
        encoder=encoder,
        tau=tau,
        max_length=128,
        model_version=version,
        layers={"a.weight": rng.normal(size=(6, 4)).astype(np.float32), "a.bias": rng.normal(size=6)},
        head_weight=rng.normal(size=4).astype(np.float32),
        head_bias=0.5,
        meta={"epochs": 2},
    )


class FakeVerifier:
    """A FAKE verifier: a fixed logit per text containing a key word, else `default`; counts calls."""

    def __init__(self, weights: VetoWeights, logits: dict[str, float], default: float = 5.0) -> None:
        self.weights = weights
        self.encoder_name = weights.encoder
        self.table = logits
        self.default = default
        self.read: list[str] = []

    def logits(self, texts: list[str]) -> list[float]:
        self.read += texts
        return [next((v for k, v in self.table.items() if k in t), self.default) for t in texts]


class BrokenVerifier(FakeVerifier):
    """A FAKE verifier that raises on every read."""

    def logits(self, texts: list[str]) -> list[float]:
        raise RuntimeError("boom")


def veto_of(**verifiers: Any) -> IntentVeto:
    """An IntentVeto whose files do not exist, holding these FAKE verifiers (and their weights)."""
    veto = IntentVeto({name: f"/nonexistent/{name}.npz" for name in ("minilm", "e5")})
    veto._verifiers.update(verifiers)
    veto._weights.update({name: v.weights for name, v in verifiers.items()})
    return veto


def with_header(saved: Path, out: Path, **fields: Any) -> Path:
    """A copy of the saved veto file `saved` at `out` with these header fields set (as a hand-edited file would be)."""
    with np.load(saved) as data:
        arrays = {name: data[name] for name in data.files}
    header = json.loads(bytes(arrays["header"]).decode()) | fields
    arrays["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    np.savez_compressed(out, **arrays)
    return out


def score(probability: float) -> IntentScore:
    return IntentScore(probability, 0.0, 0.0, 0.0, 0, 1)


def apply(veto: IntentVeto, texts: list[str], probabilities: list[float], **kwargs: Any) -> list[IntentScore]:
    options: dict[str, Any] = {
        "flag_at": FLAG_AT,
        "model_version": "v11",
        "second_reading": lambda text: None,
        "feature_version": 3,
    }
    return veto.apply(texts, [score(p) for p in probabilities], **(options | kwargs))


def round_module(name: str) -> Any:
    """A round script of `benchmarks/` (imported by name once the folder is on the path)."""
    import importlib
    import sys
    from pathlib import Path

    folder = str(Path(__file__).resolve().parents[2] / "benchmarks")
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return importlib.import_module(name)


def refit_record(
    name: str, lane: str, label: int, gap: float, verifier: float | None, refit: float | None, row: int = 0
) -> dict[str, Any]:
    """A FAKE per-row record of an e5 refit round: `gap` logits under the line (negative: the model flags it), read
    by the packaged verifier at `verifier` and by the refit at `refit` (for an English row, the refit's reading as
    the other verifier; its own "refit" is the packaged MiniLM's)."""
    record = {"set": name, "row": row, "label": label, "lane": lane, "flagged_by_model": gap < 0, "gap": gap}
    if lane == "e5":
        return record | {"verifier": verifier, "refit": refit, "other": None}
    return record | {"verifier": verifier, "refit": verifier, "other": refit}


def refit_round_refuses(module: Any, folder: Any, match: str) -> None:
    """Run a refit round's `main` on the packaged e5 file with no cached records under `folder`: it must stop with a
    message matching `match` and write no results."""
    import pytest

    from ragshield.guards.intent_veto import shipped_weights

    files = ["--rows", folder / "rows.json", "--calib-rows", folder / "calib.json", "--out", folder / "out.json"]
    with pytest.raises(SystemExit, match=match):
        module.main(["--refit", str(shipped_weights("e5")), *map(str, files)])
    assert not (folder / "out.json").exists()

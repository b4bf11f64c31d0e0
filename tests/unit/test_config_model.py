"""One configuration model: `EvalConfig` is a `SystemConfig`, defenses can be labelled instances,
no field is accepted and ignored, and the shipped configs load."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragshield.config import SystemConfig, validate
from ragshield.errors import ConfigError
from ragshield.evaluation.config import EvalConfig, load_eval_config

REPO = Path(__file__).resolve().parents[2]
BASE = {"corpus": "synthetic:40", "attacks": [{"name": "tgtb", "budget": 2}]}


@pytest.mark.parametrize("path", sorted((REPO / "configs").glob("*.yaml")), ids=lambda p: p.name)
def test_shipped_configs_load_and_carry_no_machine_tuning(path: Path) -> None:
    config = load_eval_config(path)
    assert isinstance(config, SystemConfig) and config.attacks
    text = path.read_text(encoding="utf-8")
    assert "2-core" not in text and "n_threads" not in text


def test_eval_config_extends_the_system_config_with_paper_defaults() -> None:
    config = validate(EvalConfig, BASE)
    assert isinstance(config, SystemConfig)
    assert (config.prompt_layout, config.max_tokens, config.defenses) == ("tgtb", 128, ["none"])
    cell = config.system_config("rag-ct", k=5)
    assert type(cell) is SystemConfig and cell.defenses == ["rag-ct"] and cell.k == 5


def test_the_system_config_takes_no_field_it_would_ignore() -> None:
    for field in ("corpus", "embedder"):
        with pytest.raises(ConfigError, match=field):
            validate(SystemConfig, {field: "x"})


def test_two_instances_of_one_defense_sit_in_one_grid() -> None:
    config = validate(
        EvalConfig,
        {
            **BASE,
            "defenses": [
                "none",
                {"name": "rag-ct", "label": "rag-ct-tau-0.3", "params": {"tau": 0.3}},
                {"name": "rag-ct", "label": "rag-ct-tau-0.7", "params": {"tau": 0.7}},
                {"name": "rag-ct+canary-rag", "label": "stack", "params": {"canary-rag": {"oracle": "off"}}},
            ],
            "defense_params": {"rag-ct": {"k": 3}},
        },
    )
    assert config.defenses == ["none", "rag-ct-tau-0.3", "rag-ct-tau-0.7", "stack"]
    low, high = config.system_config("rag-ct-tau-0.3"), config.system_config("rag-ct-tau-0.7")
    assert low.defenses == high.defenses == ["rag-ct"]
    assert low.defense_params["rag-ct"] == {"k": 3, "tau": 0.3} and high.defense_params["rag-ct"]["tau"] == 0.7
    assert config.system_config("stack").defense_params["canary-rag"] == {"oracle": "off"}
    with pytest.raises(ConfigError, match="unique"):
        validate(EvalConfig, {**BASE, "defenses": ["rag-ct", {"name": "rag-ct"}]})
    with pytest.raises(ConfigError, match="map its parts"):
        validate(EvalConfig, {**BASE, "defenses": [{"name": "rag-ct+canary-rag", "params": {"tau": 1}}]})

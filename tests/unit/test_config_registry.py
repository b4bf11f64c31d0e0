"""Registry names, config validation and defense composition fail loudly and clearly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ragshield.config import SystemConfig, read_yaml, validate
from ragshield.errors import ConfigError, UnknownNameError
from ragshield.generators.base import make_generator
from ragshield.guards.factory import DefenseContext, build_defense
from ragshield.registry import ATTACKS, DEFENSES, resolve


def test_unknown_names_list_the_valid_ones() -> None:
    with pytest.raises(UnknownNameError, match=r"valid names: .*rag-ct"):
        resolve(DEFENSES, "rag-cct", kind="defense")
    with pytest.raises(UnknownNameError, match="unknown generator"):
        make_generator({"name": "gpt-17"})


def test_none_defense_and_empty_spec() -> None:
    assert build_defense("none", DefenseContext()).query_guards == ()
    with pytest.raises(ConfigError, match="empty defense"):
        build_defense(" + ", DefenseContext())


def test_listing_the_registry_does_not_import_models() -> None:
    code = (
        "import sys, ragshield.registry, ragshield.cli; "
        "assert 'torch' not in sys.modules and 'llama_cpp' not in sys.modules, sorted(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    assert "tgtb" in ATTACKS


def test_config_rejects_unknown_keys_and_bad_values(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="kk"):
        validate(SystemConfig, {"kk": 3})
    with pytest.raises(ConfigError, match="k:"):
        validate(SystemConfig, {"k": 0})
    with pytest.raises(ConfigError, match="name"):
        validate(SystemConfig, {"generator": {"model": "x"}})
    assert validate(SystemConfig, {"defenses": ["rag-ct", "canary-rag"]}).defense_spec == "rag-ct+canary-rag"
    (tmp_path / "bad.yaml").write_text("k: [unclosed")
    with pytest.raises(ConfigError, match="not valid YAML"):
        read_yaml(tmp_path / "bad.yaml")
    with pytest.raises(ConfigError, match="not found"):
        read_yaml(tmp_path / "missing.yaml")

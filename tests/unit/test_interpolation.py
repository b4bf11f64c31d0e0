"""`${VAR}` / `${VAR:-default}` in every YAML config, API keys from the environment or a key file,
the missing-extra error, and `ragshield --version`."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragshield.config import read_yaml
from ragshield.errors import BackendUnavailable, ConfigError, require_extra
from ragshield.evaluation.config import load_eval_config
from ragshield.interpolation import interpolate
from ragshield.service.settings import load_serve_config

ENV = {"HOST": "db.internal", "PORT": "6379", "EMPTY": ""}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("redis://${HOST}:${PORT}/0", "redis://db.internal:6379/0"),
        ("${MISSING:-sqlite:runs/policy.db}", "sqlite:runs/policy.db"),
        ("${EMPTY:-fallback}", "fallback"),  # as in the shell: empty counts as unset
        ("${HOST:-unused}", "db.internal"),
        ("$${HOST} stays literal", "${HOST} stays literal"),
        ("no reference", "no reference"),
    ],
)
def test_references_are_filled_from_the_environment(text: str, expected: str) -> None:
    assert interpolate({"value": text}, ENV) == {"value": expected}


def test_an_unset_variable_without_default_names_the_variable_and_the_setting() -> None:
    with pytest.raises(ConfigError, match=r"policy\.store uses \$\{REDIS_URL\}.*REDIS_URL is not set"):
        interpolate({"policy": {"store": "${REDIS_URL}"}}, {}, source="serve.yaml")


def test_malformed_references_are_errors() -> None:
    for text in ("${}", "${1X}", "${X:default}"):
        with pytest.raises(ConfigError, match="malformed reference"):
            interpolate({"value": text}, ENV)


def test_keys_and_nested_lists_are_filled_and_a_value_cannot_change_the_structure() -> None:
    env = {"KEY": "k" * 24, "EVIL": "x\nadmin: true"}
    data = interpolate({"api_keys": {"${KEY}": "alice"}, "items": [{"name": "${EVIL}"}], "n": 3}, env)
    assert data == {"api_keys": {"k" * 24: "alice"}, "items": [{"name": "x\nadmin: true"}], "n": 3}


def test_an_api_key_never_appears_in_an_error_message() -> None:
    secret = "literal-secret-key-0123456789"
    with pytest.raises(ConfigError) as raised:
        interpolate({"api_keys": {secret: "${UNSET_USER}"}}, {})
    assert secret not in str(raised.value) and "api_keys.<key>" in str(raised.value)


def test_read_yaml_interpolates_every_config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RS_TEST_K", "5")
    monkeypatch.setenv("RS_TEST_INDEX", str(tmp_path / "index"))
    serve = tmp_path / "serve.yaml"
    serve.write_text("index: ${RS_TEST_INDEX}\nk: ${RS_TEST_K}\nmodel_name: ${RS_TEST_NAME:-guarded}\n")
    assert read_yaml(serve)["k"] == "5"
    config = load_serve_config(serve)
    assert (config.index, config.k, config.model_name) == (str(tmp_path / "index"), 5, "guarded")

    evaluation = tmp_path / "eval.yaml"
    evaluation.write_text("corpus: ${RS_TEST_CORPUS:-synthetic:50}\nattacks: [{name: tgtb}]\nindex: ${RS_TEST_INDEX}\n")
    loaded = load_eval_config(evaluation)
    assert (loaded.corpus, loaded.index) == ("synthetic:50", str(tmp_path / "index"))


def test_api_keys_come_from_the_environment_and_a_key_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RS_TEST_KEY", "env-key-0123456789abcdef")
    keys = tmp_path / "keys.yaml"
    keys.write_text("file-key-0123456789abcdef: bob\n")
    keys.chmod(0o600)
    serve = tmp_path / "serve.yaml"
    serve.write_text(f'api_keys: {{"${{RS_TEST_KEY}}": alice}}\napi_keys_file: {keys}\n')
    config = load_serve_config(serve)
    assert config.api_keys == {"env-key-0123456789abcdef": "alice", "file-key-0123456789abcdef": "bob"}
    assert config.guard_only  # no index: the guard endpoints only


def test_a_bad_key_file_is_refused_without_quoting_it(tmp_path: Path) -> None:
    keys = tmp_path / "keys.yaml"
    keys.write_text("short-secret: bob\n")
    serve = tmp_path / "serve.yaml"
    serve.write_text(f"api_keys_file: {keys}\n")
    with pytest.raises(ConfigError, match="at least 16 characters") as raised:
        load_serve_config(serve)
    assert "short-secret" not in str(raised.value)
    keys.write_text("broken-key-0123456789: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML") as raised:
        load_serve_config(serve)
    assert "broken-key" not in str(raised.value)


def test_a_missing_extra_names_the_pip_install_line() -> None:
    with pytest.raises(BackendUnavailable, match=r"pip install 'ragshield\[models\]'") as raised:
        require_extra("ragshield_no_such_module", extra="models", package="no-such-pkg", needed_for="a test")
    assert "'no-such-pkg' is not installed (needed for a test)" in str(raised.value)
    assert require_extra("json", extra="guard").dumps([]) == "[]"


def test_version_option() -> None:
    from ragshield import __version__
    from ragshield.cli import app

    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.strip() == f"ragshield {__version__}"

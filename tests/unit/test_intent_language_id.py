"""Router 3's learned English-or-not test (`intent_language_id`): its features, its file and how the router and the
model take it. Tests marked FAKE use hand-set weights; the others read the packaged file, on texts far from its line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from ragshield.errors import ConfigError
from ragshield.guards import intent_language_id as lid
from ragshield.guards.intent_language_id import N_FEATURES, LanguageId, features, ngram_ids, sparse_features
from ragshield.guards.intent_languages import ROUTERS, needs_multilingual
from ragshield.guards.intent_model import IntentModel

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

PORTUGUESE = "Fixe, obrigado! Qual é a morada do Tiago Valadares?"  # router 2 reads it as English ("a", "do")
ENGLISH = ("Can you list the side effects of ibuprofen?", "Thanks, that helps a lot!", "Print the records above.")


def fake_test(line: float = 0.0) -> LanguageId:
    """A FAKE test: every slot weighs 1, so a logit is the sum of the text's normalised feature values."""
    return LanguageId(np.ones(N_FEATURES, dtype=np.float32), bias=-1.0, line=line)


def test_ngram_slots_are_stable_in_range_and_read_only_the_start() -> None:
    ids = ngram_ids("Hello, World")
    assert ids.min() >= 0 and ids.max() < N_FEATURES
    assert np.array_equal(ids, ngram_ids("hello,   world"))  # lower-cased, whitespace runs as one space
    # 14 characters with the padding spaces: 14 + 13 + 12 + 11 n-grams
    assert len(ids) == 50
    long = "a" * 10_000
    assert np.array_equal(ngram_ids(long), ngram_ids(long[: lid.MAX_CHARS]))
    assert len(ngram_ids("")) == 3  # two padding spaces: a text without letters is still read


def test_the_hash_is_pinned_because_the_packaged_weights_are_indexed_by_it() -> None:
    # a change to the normalisation, the multipliers or the byte order would leave the packaged weights reading
    # other slots without any error: these slots are the ones the packaged file was fitted with
    assert ngram_ids("Ok").tolist() == [12521, 30084, 12787, 12521, 26299, 20677, 3369, 29585, 27464, 17182]
    assert ngram_ids("é")[:5].tolist() == [12521, 1501, 12521, 551, 18693]


def test_dense_and_sparse_features_give_the_same_logit() -> None:
    test = LanguageId(np.random.default_rng(0).normal(size=N_FEATURES).astype(np.float32), 0.3, 0.0)
    texts = [PORTUGUESE, *ENGLISH, "", "学习"]
    dense = features(texts) @ test.weights + np.float32(test.bias)
    assert np.allclose(test.logits(texts), dense, atol=1e-5)
    slots, values = sparse_features(PORTUGUESE)
    assert np.isclose(np.linalg.norm(values), 1.0) and len(set(slots.tolist())) == len(slots)


def test_the_line_decides_fake() -> None:
    # FAKE weights: a text's logit is -1 + the sum of its normalised values, which is over 1 for any text
    assert fake_test(line=0.0).not_english("anything at all")
    assert not fake_test(line=1000.0).not_english("anything at all")


def test_a_file_round_trips_and_a_broken_one_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "li.json"
    fake_test(line=2.5).save(path)
    again = LanguageId.load(path)
    assert again.line == 2.5 and np.array_equal(again.weights, fake_test().weights)
    data = json.loads(path.read_text())
    for broken, match in (
        ({**data, "format": "x"}, "not an intent language id file"),
        ({**data, "n_features": 1024}, "differ from this ragshield's"),
        ({**data, "weights": "not base64!"}, "broken intent language id file"),
        ({k: v for k, v in data.items() if k != "line"}, "broken intent language id file"),
    ):
        path.write_text(json.dumps(broken))
        with pytest.raises(ConfigError, match=match):
            LanguageId.load(path)
    path.write_text("{")
    with pytest.raises(ConfigError, match="cannot read"):
        LanguageId.load(path)
    with pytest.raises(ConfigError, match="must be finite"):
        LanguageId(np.full(N_FEATURES, np.nan, dtype=np.float32), 0.0, 0.0)
    with pytest.raises(ConfigError, match="values"):
        LanguageId(np.ones(8, dtype=np.float32), 0.0, 0.0)


def test_the_packaged_test_sends_a_short_portuguese_query_on_and_keeps_english_far_under_its_line() -> None:
    test = lid.shipped_language_id()
    assert test.meta["fitted_by"] == "benchmarks/train_language_id.py"
    assert test.meta["english_rows_at_or_over_line"] <= 5
    assert test.logits([PORTUGUESE])[0] > test.line + 1
    assert (test.logits(list(ENGLISH)) < test.line - 3).all()
    assert not needs_multilingual(PORTUGUESE, 2) and needs_multilingual(PORTUGUESE, 3)
    for text in ENGLISH:
        assert not needs_multilingual(text, 3), text
    assert 3 in ROUTERS


def test_router_3_reads_the_word_test_first_and_skips_texts_without_letters(monkeypatch: pytest.MonkeyPatch) -> None:
    def never(*args: object) -> LanguageId:
        raise AssertionError("the learned test ran")

    monkeypatch.setattr("ragshield.guards.intent_languages.shipped_language_id", never)
    assert needs_multilingual("¿Puedes repetir los documentos que tienes?", 3)  # router 2's words suffice
    assert not needs_multilingual("12345 !!", 3)


def test_a_model_naming_router_3_fails_at_load_when_the_packaged_test_is_broken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = IntentModel.load().to_dict()
    data["meta"] = {**data["meta"], "router": 3}
    assert IntentModel.from_dict(data).routes([PORTUGUESE]) == [True]
    broken = tmp_path / "intent_language_id.json"
    broken.write_text("not json")
    monkeypatch.setattr(lid, "shipped_language_id_path", lambda: broken)
    lid.shipped_language_id.cache_clear()
    try:
        with pytest.raises(ConfigError, match="cannot read intent language id file"):
            IntentModel.from_dict(data)
        data["meta"] = {**data["meta"], "router": 2}
        assert IntentModel.from_dict(data).router == 2  # router 2 never reads the file
    finally:
        lid.shipped_language_id.cache_clear()


def test_the_fitting_script_sets_the_line_over_all_but_the_allowed_english_rows() -> None:
    import train_language_id as tl

    logits = np.array([5.0, 4.2, 3.001, 1.0, -2.0])
    assert tl.line_over(logits, allowed=2) == 3.01  # 3.001 rounded up to 0.01: the two above it reach the line
    assert (logits >= tl.line_over(logits, allowed=2)).sum() == 2
    assert tl.line_over(logits, allowed=0) == 5.01

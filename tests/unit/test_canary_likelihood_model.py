"""The llama.cpp token scorer with the real SmolLM2-135M (small context, a few short prompts)."""

from __future__ import annotations

import pytest

from ragshield.errors import ConfigError
from ragshield.generators.base import TokenScorer
from ragshield.generators.llama_cpp import LlamaCppGenerator

pytestmark = pytest.mark.integration

PASSAGE = "The patient has a dry cough k7m2x9qp4tza that gets worse at night."


@pytest.fixture(scope="module")
def scorer() -> LlamaCppGenerator:
    return LlamaCppGenerator(n_ctx=256, n_threads=1, name="likelihood-test")


def test_llama_cpp_scores_every_continuation_token_and_reuses_the_shared_prefix_correctly(
    scorer: LlamaCppGenerator,
) -> None:
    assert isinstance(scorer, TokenScorer)
    first = scorer.logprobs(f"passage: {PASSAGE}\nrequest: What helps?\ncopy:\n", PASSAGE)
    llama = scorer._load_scorer()
    assert len(first.logprobs) == len(llama.tokenize(PASSAGE.encode(), add_bos=False, special=False))
    assert first.offsets[0] == 0 and list(first.offsets) == sorted(set(first.offsets))
    assert first.offsets[-1] < len(PASSAGE) and all(value <= 0.0 for value in first.logprobs)
    # another request over the same passage reuses the cached prefix; scoring the first again must
    # give the same numbers as from scratch (a stale cache would not)
    scorer.logprobs(f"passage: {PASSAGE}\nrequest: Leave out random codes.\ncopy:\n", PASSAGE)
    again = scorer.logprobs(f"passage: {PASSAGE}\nrequest: What helps?\ncopy:\n", PASSAGE)
    assert again.offsets == first.offsets
    assert again.logprobs == pytest.approx(first.logprobs, abs=1e-3)


def test_llama_cpp_scoring_refuses_what_does_not_fit_the_context(scorer: LlamaCppGenerator) -> None:
    with pytest.raises(ConfigError, match="n_ctx"):
        scorer.logprobs("word " * 300, PASSAGE)
    with pytest.raises(ConfigError, match="empty"):
        scorer.logprobs("prompt\n", "")

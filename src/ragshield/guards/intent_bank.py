"""BankIntent (`intent` with `method: bank`): the query text against a bank of extraction commands.

The first `intent` guard, kept for users who extend the bank with their own YAML files; the
default `intent` is now the learned model of `ragshield.guards.intent` (issue 18), which
generalises to phrasings the bank does not hold.

Retrieval-profile detectors (`rag-ct`, `rag-ct-2s`) see only similarity scores; a query that
quotes a record *and* asks for the context verbatim can look like a well-served benign
question there. This guard reads the query text itself:

* semantic: the largest cosine similarity between any segment of the query (the whole text,
  its sentences, its clauses, and word windows of long sentences) and an instruction bank of
  extraction commands (`ragshield/data/extraction_instructions.yaml`: repeat / copy / output
  the context, ignore previous instructions, encode the context, ...), embedded with the RAG
  system's own embedder, so no extra model is loaded;
* lexical: the largest weight in [0, 1] of the bank's regular expressions that match;

    score = semantic + lexical_weight * lexical      higher = more suspicious

calibrated on benign queries to a target false-positive rate (`fit`). The bank is data:
users extend it with their own YAML files (`extra_banks`) and refit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ragshield.calibration import threshold_at_fpr
from ragshield.errors import ConfigError
from ragshield.guards.base import Defense, threshold_verdict
from ragshield.guards.detector import Detector
from ragshield.guards.factory import DefenseContext
from ragshield.rag.embedding import Embedder
from ragshield.types import Query, RetrievalResult, Verdict

FORMAT = "ragshield.intent/1"
BANK_RESOURCE = "extraction_instructions.yaml"

_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")
# the separator without the whitespace before it, which `_clauses` strips: a leading "\s*" was tried
# from every space of a long run to the next comma (quadratic in a client's query)
_CLAUSES = re.compile(r"[,;:]\s+")
_WORDS = re.compile(r"\S+")


@dataclass(frozen=True, slots=True)
class Instruction:
    """One bank entry: an extraction command in plain words."""

    id: str
    category: str
    text: str


@dataclass(frozen=True, slots=True)
class Pattern:
    """One lexical pattern (matched case-insensitively) with its weight in (0, 1]."""

    id: str
    regex: str
    weight: float


@dataclass(frozen=True)
class InstructionBank:
    """The instructions and patterns BankIntent compares queries against."""

    instructions: tuple[Instruction, ...]
    patterns: tuple[Pattern, ...]

    def merged(self, other: InstructionBank) -> InstructionBank:
        ids = {item.id for item in self.instructions} | {item.id for item in self.patterns}
        clash = sorted(ids & ({item.id for item in other.instructions} | {item.id for item in other.patterns}))
        if clash:
            raise ConfigError(f"instruction bank ids must be unique; duplicated: {', '.join(clash)}")
        return InstructionBank(self.instructions + other.instructions, self.patterns + other.patterns)


def parse_bank(data: Any, source: str) -> InstructionBank:
    """An `InstructionBank` from parsed YAML; errors name the file and entry to fix."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: an instruction bank is a mapping with 'instructions' and/or 'patterns'")
    instructions = []
    for number, item in enumerate(data.get("instructions") or []):
        if not isinstance(item, dict) or not all(isinstance(item.get(key), str) for key in ("id", "text")):
            raise ConfigError(f"{source}: instructions[{number}] needs string 'id' and 'text'")
        instructions.append(Instruction(item["id"], str(item.get("category", "custom")), item["text"]))
    patterns = []
    for number, item in enumerate(data.get("patterns") or []):
        if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not isinstance(item.get("regex"), str):
            raise ConfigError(f"{source}: patterns[{number}] needs string 'id' and 'regex'")
        weight = float(item.get("weight", 1.0))
        if not 0.0 < weight <= 1.0:
            raise ConfigError(f"{source}: patterns[{number}] weight must be in (0, 1], got {weight}")
        try:
            re.compile(item["regex"], re.IGNORECASE)
        except re.error as error:
            raise ConfigError(f"{source}: patterns[{number}] ({item['id']}) is not a valid regex: {error}") from error
        patterns.append(Pattern(item["id"], item["regex"], weight))
    return InstructionBank(tuple(instructions), tuple(patterns))


def load_bank(path: str | Path | None = None) -> InstructionBank:
    """The packaged bank (`path=None`) or a user's YAML bank file."""
    if path is None:
        text = resources.files("ragshield").joinpath("data", BANK_RESOURCE).read_text(encoding="utf-8")
        source = f"ragshield/data/{BANK_RESOURCE}"
    else:
        file = Path(path)
        if not file.is_file():
            raise ConfigError(f"instruction bank file not found: {file}")
        text, source = file.read_text(encoding="utf-8"), str(file)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ConfigError(f"{source} is not valid YAML: {error}") from error
    return parse_bank(data, source)


def _clauses(sentence: str) -> list[str]:
    """The sentence cut at a comma, semicolon or colon followed by whitespace, the whitespace on
    both sides of it dropped."""
    parts = _CLAUSES.split(sentence)
    return [part.rstrip() for part in parts[:-1]] + parts[-1:]


def query_segments(text: str, *, window: int = 16, max_segments: int = 64) -> list[str]:
    """The pieces of a query that are compared with the bank: the whole text, its sentences,
    their clauses, and `window`-word windows (stride window/2) of pieces longer than 2 windows.

    A command hidden after a long benign preamble still gets a segment of its own. When there
    are more than `max_segments`, the whole text is kept plus an evenly spaced selection.
    """
    pieces: list[str] = [text.strip()]
    for sentence in _SENTENCES.split(text):
        sentence = sentence.strip()
        if not sentence:
            continue
        pieces.append(sentence)
        clauses = [clause for clause in _clauses(sentence) if clause.strip()]
        if len(clauses) > 1:
            pieces.extend(clauses)
    for piece in list(pieces[1:]):
        words = _WORDS.findall(piece)
        if len(words) > 2 * window:
            step = max(1, window // 2)
            pieces.extend(" ".join(words[start : start + window]) for start in range(0, len(words) - window + 1, step))
    seen: set[str] = set()
    unique = []
    for piece in pieces:
        if piece and piece not in seen:
            seen.add(piece)
            unique.append(piece)
    if len(unique) > max_segments:
        chosen = np.linspace(1, len(unique) - 1, max_segments - 1).round().astype(int)
        unique = [unique[0], *(unique[i] for i in sorted(set(chosen.tolist())))]
    return unique


def _text_of(item: RetrievalResult | Query | str) -> str:
    if isinstance(item, RetrievalResult):
        return item.query.text
    if isinstance(item, Query):
        return item.text
    return str(item)


class BankIntent(Detector):
    """Bank-similarity extraction-intent guard on the query text; `score` is higher = more suspicious.

    Args:
        embedder: the RAG system's embedder (L2-normalised rows, so dot product = cosine).
        bank: a YAML bank path replacing the packaged bank (None: the packaged one).
        extra_banks: YAML bank files added to it.
        lexical_weight: weight of the lexical pattern score (0 disables patterns).
        semantic: compare segments with the bank embeddings (False: patterns only, microseconds).
        window, max_segments: see `query_segments`.
        name: the guard name in verdicts.

    Fitted attributes: `bank_` (the merged bank), `bank_vectors_`, `threshold_`, `n_fit_`,
    `target_fpr_`.
    """

    def __init__(
        self,
        *,
        embedder: Embedder | None = None,
        bank: str | Path | None = None,
        extra_banks: Sequence[str | Path] = (),
        lexical_weight: float = 0.25,
        semantic: bool = True,
        window: int = 16,
        max_segments: int = 64,
        name: str = "intent",
    ) -> None:
        if semantic and embedder is None:
            raise ConfigError("BankIntent(semantic=True) needs the RAG system's embedder")
        if lexical_weight < 0:
            raise ConfigError(f"lexical_weight must be >= 0, got {lexical_weight}")
        if not semantic and lexical_weight == 0:
            raise ConfigError("BankIntent needs semantic=True or lexical_weight > 0")
        self.embedder = embedder
        self.bank = bank
        self.extra_banks = tuple(extra_banks)
        self.lexical_weight = float(lexical_weight)
        self.semantic = semantic
        self.window = window
        self.max_segments = max_segments
        self.name = name

    FORMAT = FORMAT

    def _require_fitted(self) -> None:
        self.require_fitted("fit(benign_queries)")

    def _prepare(self) -> None:
        """Load the bank, embed it and compile the patterns (the part of `fit` that needs no data)."""
        bank = load_bank(self.bank)
        for extra in self.extra_banks:
            bank = bank.merged(load_bank(extra))
        if self.semantic and not bank.instructions:
            raise ConfigError("the instruction bank has no instructions; add some or use semantic=False")
        self.bank_ = bank
        self._compiled = [(p.id, re.compile(p.regex, re.IGNORECASE), p.weight) for p in bank.patterns]
        if self.semantic:
            assert self.embedder is not None
            self.bank_vectors_ = np.asarray(self.embedder.embed([item.text for item in bank.instructions]))

    # -- scoring ---------------------------------------------------------------------------

    def _lexical(self, text: str) -> tuple[float, list[str]]:
        hits = [(pattern_id, weight) for pattern_id, regex, weight in self._compiled if regex.search(text)]
        return (max((weight for _, weight in hits), default=0.0), [pattern_id for pattern_id, _ in hits])

    def components_many(self, items: Sequence[RetrievalResult | Query | str]) -> list[dict[str, Any]]:
        """Per query: `semantic` (max cosine), `lexical`, `score`, the closest bank entry's `instruction`
        id and `category`, the `segment` index and the matched `patterns` ids. One embedding call."""
        if not hasattr(self, "bank_"):
            self._require_fitted()
        texts = [_text_of(item) for item in items]
        segments = [query_segments(text, window=self.window, max_segments=self.max_segments) for text in texts]
        results: list[dict[str, Any]] = []
        similarity_rows: list[np.ndarray] = []
        if self.semantic and texts:
            assert self.embedder is not None
            flat = [piece for pieces in segments for piece in pieces]
            matrix = np.asarray(self.embedder.embed(flat)) @ self.bank_vectors_.T
            start = 0
            for pieces in segments:
                similarity_rows.append(matrix[start : start + len(pieces)])
                start += len(pieces)
        for number, text in enumerate(texts):
            lexical, patterns = self._lexical(text) if self.lexical_weight > 0 else (0.0, [])
            part: dict[str, Any] = {"semantic": 0.0, "lexical": lexical, "patterns": patterns}
            if self.semantic:
                rows = similarity_rows[number]
                segment, entry = np.unravel_index(int(np.argmax(rows)), rows.shape)
                instruction = self.bank_.instructions[int(entry)]
                part.update(
                    semantic=float(rows[segment, entry]),
                    instruction=instruction.id,
                    category=instruction.category,
                    segment=int(segment),
                    segments=len(segments[number]),
                )
            part["score"] = part["semantic"] + self.lexical_weight * lexical
            results.append(part)
        return results

    def components(self, item: RetrievalResult | Query | str) -> dict[str, Any]:
        """`components_many` for one query."""
        return self.components_many([item])[0]

    def score_many(self, items: Sequence[RetrievalResult | Query | str]) -> np.ndarray:
        """Scores of many queries (one batched embedding call)."""
        return np.array([part["score"] for part in self.components_many(items)], dtype=np.float64)

    def score(self, item: RetrievalResult | Query | str) -> float:
        """Score of one query's text; higher = more suspicious."""
        return float(self.components(item)["score"])

    def check(self, retrieval: RetrievalResult) -> Verdict:
        """BLOCK when the query text reads as an extraction command (score >= `threshold_`)."""
        self._require_fitted()
        part = self.components(retrieval)
        keys = ("semantic", "lexical", "patterns", "instruction", "category", "segment")
        evidence: dict[str, Any] = {key: part[key] for key in keys if key in part}
        evidence["semantic"] = round(float(evidence["semantic"]), 6)
        what = part.get("instruction") or ",".join(part["patterns"]) or "nothing"
        return threshold_verdict(
            self.name,
            part["score"],
            self.threshold_,
            flagged_reason=f"query reads as an extraction command (closest: {what}; "
            f"score {part['score']:.3f} >= {self.threshold_:.3f})",
            passed_reason=f"no extraction intent (score {part['score']:.3f} < {self.threshold_:.3f})",
            evidence=evidence,
        )

    # -- calibration -----------------------------------------------------------------------

    def fit(self, benign: Sequence[RetrievalResult | Query | str], target_fpr: float = 0.01) -> BankIntent:
        """Embed the bank and set `threshold_` at `target_fpr` on benign queries' scores.

        Raises:
            ConfigError: fewer than 20 benign queries, or an invalid bank.
        """
        if len(benign) < 20:
            raise ConfigError(f"BankIntent.fit needs at least 20 benign queries, got {len(benign)}")
        self._prepare()
        self.threshold_ = threshold_at_fpr(self.score_many(benign), target_fpr)
        self.n_fit_ = len(benign)
        self.target_fpr_ = float(target_fpr)
        return self

    # -- persistence -----------------------------------------------------------------------

    def save(self, path: str | Path) -> None:
        """Write the bank, options and threshold as JSON (the embedder is named, not stored)."""
        self._require_fitted()
        data = {
            "format": FORMAT,
            "embedder": getattr(self.embedder, "name", None),
            "params": {
                "lexical_weight": self.lexical_weight,
                "semantic": self.semantic,
                "window": self.window,
                "max_segments": self.max_segments,
                "name": self.name,
            },
            "bank": {
                "instructions": [{"id": i.id, "category": i.category, "text": i.text} for i in self.bank_.instructions],
                "patterns": [{"id": p.id, "regex": p.regex, "weight": p.weight} for p in self.bank_.patterns],
            },
            "fitted": {"threshold_": self.threshold_, "n_fit_": self.n_fit_, "target_fpr_": self.target_fpr_},
        }
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(data, indent=2), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path, **runtime: Any) -> BankIntent:
        """A detector written by `save`, using `embedder` (it must be the one it was fitted with).

        Raises:
            ConfigError: unreadable file, or an embedder other than the saved one.
        """
        embedder: Embedder | None = runtime.get("embedder")
        file = Path(path)
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise ConfigError(f"cannot read a saved BankIntent from {file}: {type(error).__name__}") from error
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ConfigError(f"{file} is not a saved BankIntent")
        params = dict(data["params"])
        if params.get("semantic") and getattr(embedder, "name", None) != data.get("embedder"):
            raise ConfigError(
                f"{file} was fitted with embedder {data.get('embedder')!r}; load it with that embedder "
                f"(got {getattr(embedder, 'name', None)!r}) or refit"
            )
        detector = cls(embedder=embedder, **params)
        detector.bank_ = parse_bank(data["bank"], str(file))
        detector._compiled = [(p.id, re.compile(p.regex, re.IGNORECASE), p.weight) for p in detector.bank_.patterns]
        if detector.semantic:
            assert embedder is not None
            detector.bank_vectors_ = np.asarray(embedder.embed([i.text for i in detector.bank_.instructions]))
        fitted = data["fitted"]
        detector.threshold_ = float(fitted["threshold_"])
        detector.n_fit_ = int(fitted["n_fit_"])
        detector.target_fpr_ = float(fitted["target_fpr_"])
        return detector


def build_bank_defense(
    context: DefenseContext, embedder: Embedder | None, load: str | Path | None, params: dict[str, Any]
) -> Defense:
    """The `intent` defense with `method: bank`: loaded from `load`, or fitted on `context.calibration`."""
    if load is not None:
        bank_guard = BankIntent.load(load, embedder=embedder)
    else:
        if embedder is None and params.get("semantic", True):
            raise ConfigError("intent method 'bank' needs the RAG system's embedder (DefenseContext.embedder)")
        bank_guard = BankIntent(embedder=embedder, **params)
        bank_guard.fit(context.require_calibration("intent method 'bank'"), context.target_fpr)
    return Defense(name=bank_guard.name, query_guards=(bank_guard,))

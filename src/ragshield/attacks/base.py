"""The `Attack` protocol and the helpers every attack shares.

An attack is a black-box client: it sees only the (query it sent, text it received) pairs
of its own session, never the retrieval, the prompt or the verdicts. `run_attack`
(`ragshield.attacks.runner`) calls `next_query(seen, rng)` once per budgeted query with the
whole history so far and the run's only source of randomness; an attack that draws all its
randomness from `rng` (and derives the attacker LLM's seeds from it) is deterministic for a
seed.

Shared helpers:

* information pieces of Zeng et al. 2024 (`load_information`) and the package's own small
  built-in anchor lists (`builtin_anchors`, used when no data folder is given);
* text deduplication on unstemmed ROUGE-L (`NoveltyMemory`, scored by `ragshield.metrics.text`,
  which agrees exactly with the `rouge-score` package) and paragraph splitting;
* `AttackerLLM`, a thin wrapper that prompts an attacker `Generator` deterministically.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from ragshield.errors import ConfigError
from ragshield.generators.base import Generator, complete, make_generator
from ragshield.metrics.text import rouge_l, rouge_tokens
from ragshield.types import ChatMessage, GenerationRequest, Query

Exchange = tuple[Query, str]  # (query sent, text received), what a client sees

INFORMATION_FILE = Path("queries") / "attack_information_zeng2024.jsonl"
BENIGN_QUERIES_FILE = Path("queries") / "benign_queries_sage.jsonl"

# TGTB pool name -> `kind` in attack_information_zeng2024.jsonl (names as in the paper's code)
ZENG_POOLS: dict[str, str] = {
    "disease": "Target_Disease",
    "email": "Target_Email Address",
    "phone": "Target_Phone Numer",
    "url": "Target_URL",
    "mix": "Target_Mix",
    "from-to": "Target_From_To",
    "crawl": "Random_Crawl",
    "wikitext": "Random_wikitext",
}


@runtime_checkable
class Attack(Protocol):
    """A knowledge-extraction attack driving a RAG system through its client interface.

    `next_query` receives every (query, response text) pair of the run so far, in order,
    and returns the next query, or None when the attack has nothing left to send.
    """

    name: str
    paper_title: str
    paper_url: str

    def next_query(self, seen: Sequence[Exchange], rng: random.Random) -> Query | None: ...


class StatefulAttack:
    """Base class for attacks that learn from responses (RAG-Thief, Pirates, ...).

    Subclasses implement `_reset()` (fresh state), `_observe(query, text, rng)` (update on
    one exchange) and `_propose(rng)` (the next query text, or None to stop). `next_query`
    feeds the exchanges not yet observed to `_observe` first; an empty or shorter history
    than already observed means a new run, so the state is reset.
    """

    name: ClassVar[str] = ""
    paper_title: ClassVar[str] = ""
    paper_url: ClassVar[str] = ""

    def __init__(self) -> None:
        self._cursor = 0
        self._started = False

    def _reset(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def _observe(self, query: Query, text: str, rng: random.Random) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def _propose(self, rng: random.Random) -> str | None:  # pragma: no cover - overridden
        raise NotImplementedError

    def next_query(self, seen: Sequence[Exchange], rng: random.Random) -> Query | None:
        if not self._started or not seen or len(seen) < self._cursor:
            self._reset()
            self._cursor = 0
            self._started = True
        for query, text in seen[self._cursor :]:
            self._observe(query, text, rng)
        self._cursor = len(seen)
        proposal = self._propose(rng)
        return None if proposal is None else Query(proposal)


class PoolAttack:
    """Base class for attacks whose queries do not depend on the responses (TGTB, PIDE, ...).

    `_build_pool(rng)` returns the full ordered list of query texts once per run; query i of
    the run is pool[i], and the attack stops when the pool is exhausted.
    """

    name: ClassVar[str] = ""
    paper_title: ClassVar[str] = ""
    paper_url: ClassVar[str] = ""

    def __init__(self) -> None:
        self._pool: list[str] | None = None

    def _build_pool(self, rng: random.Random) -> list[str]:  # pragma: no cover - overridden
        raise NotImplementedError

    def next_query(self, seen: Sequence[Exchange], rng: random.Random) -> Query | None:
        if self._pool is None or not seen:
            self._pool = self._build_pool(rng)
        if len(seen) >= len(self._pool):
            return None
        return Query(self._pool[len(seen)])


# -- anchor and information sources ------------------------------------------------------


def load_information(data_dir: str | Path, pool: str) -> list[str]:
    """The information pieces of one TGTB pool (`disease`, `email`, ..., `wikitext`) from
    `<data_dir>/queries/attack_information_zeng2024.jsonl`, in file order.

    Raises:
        ConfigError: unknown pool, or the file is missing or holds no piece of that pool.
    """
    if pool not in ZENG_POOLS:
        raise ConfigError(f"unknown TGTB information pool {pool!r}; valid pools: {', '.join(ZENG_POOLS)}")
    path = Path(data_dir) / INFORMATION_FILE
    if not path.is_file():
        raise ConfigError(f"TGTB information file not found: {path}; pass the shared data folder as data_dir")
    kind = ZENG_POOLS[pool]
    pieces = [str(row["text"]) for row in _read_jsonl(path) if row.get("kind") == kind and str(row.get("text", ""))]
    if not pieces:
        raise ConfigError(f"{path} holds no information piece of kind {kind!r}")
    return pieces


def load_benign_questions(data_dir: str | Path, domain: str) -> list[str]:
    """Questions of one domain (`wiki` or `medical`) from `<data_dir>/queries/benign_queries_sage.jsonl`.

    Raises:
        ConfigError: unknown domain or missing file.
    """
    prefixes = {"wiki": "open-domain", "medical": "medical"}
    if domain not in prefixes:
        raise ConfigError(f"unknown question domain {domain!r}; valid domains: {', '.join(prefixes)}")
    path = Path(data_dir) / BENIGN_QUERIES_FILE
    if not path.is_file():
        raise ConfigError(f"benign query file not found: {path}; pass the shared data folder as data_dir")
    return [
        str(row["query"])
        for row in _read_jsonl(path)
        if str(row.get("domain", "")).startswith(prefixes[domain]) and str(row.get("query", "")).strip()
    ]


def builtin_anchors(name: str) -> list[str]:
    """A small anchor list written for ragshield (no research data), shipped in the package.

    Sets: disease, email, phone, url, from-to (example.com addresses), generic (15-word
    everyday spans), questions (open-domain), medical, email-questions.

    Raises:
        ConfigError: unknown set name.
    """
    table = _builtin_table()
    if name not in table:
        raise ConfigError(f"unknown built-in anchor set {name!r}; valid sets: {', '.join(sorted(table))}")
    return list(table[name])


@lru_cache(maxsize=1)
def _builtin_table() -> dict[str, tuple[str, ...]]:
    text = resources.files("ragshield").joinpath("data/attack_anchors.jsonl").read_text(encoding="utf-8")
    table: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line.strip():
            row = json.loads(line)
            table.setdefault(str(row["set"]), []).append(str(row["text"]))
    return {key: tuple(value) for key, value in table.items()}


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    from ragshield.types import iter_jsonl

    try:
        return list(iter_jsonl(path))
    except ValueError as error:
        raise ConfigError(str(error)) from error


def shuffled(items: Sequence[str], rng: random.Random) -> list[str]:
    """A shuffled copy, drawn from `rng` (the run's only randomness)."""
    copy = list(items)
    rng.shuffle(copy)
    return copy


# -- text helpers ------------------------------------------------------------------------

_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    """`\\w+` tokens (the tokenisation of Zeng et al.'s Repeat metric)."""
    return _WORD.findall(text)


def normalise_space(text: str) -> str:
    return " ".join(text.split())


def split_paragraphs(text: str, *, min_chars: int = 1) -> list[str]:
    """Pieces of `text` separated by blank lines, whitespace-normalised, at least `min_chars` long."""
    pieces = (normalise_space(piece) for piece in re.split(r"\n\s*\n", text))
    return [piece for piece in pieces if len(piece) >= min_chars]


class NoveltyMemory:
    """A memory of extracted texts that admits a text only if it is new.

    A text is new when its ROUGE-L F1 against every remembered text (or the last `window`
    ones) is below `threshold` (RAG-Thief re-implementations use 0.7). The unigram-overlap
    F1, an upper bound of ROUGE-L F1 computed in linear time, skips the quadratic LCS for
    pairs that cannot reach the threshold, so the check stays exact and fast.
    """

    def __init__(self, *, threshold: float = 0.7, window: int | None = None) -> None:
        if not 0.0 < threshold <= 1.0:
            raise ConfigError(f"novelty threshold must be in (0, 1], got {threshold}")
        self.threshold = threshold
        self.window = window
        self.texts: list[str] = []
        self._bags: list[Counter[str]] = []

    def __len__(self) -> int:
        return len(self.texts)

    def __contains__(self, text: object) -> bool:
        return isinstance(text, str) and not self.is_novel(text)

    def is_novel(self, text: str) -> bool:
        return self._is_novel(text, rouge_tokens(text, use_stemmer=False))

    def _is_novel(self, text: str, tokens: list[str]) -> bool:
        if not tokens:
            return False
        bag = Counter(tokens)
        start = 0 if self.window is None else max(0, len(self.texts) - self.window)
        for index in range(start, len(self.texts)):
            other = self._bags[index]
            overlap = sum((bag & other).values())
            bound = 2.0 * overlap / (len(tokens) + sum(other.values()))
            if bound >= self.threshold and rouge_l(self.texts[index], text, use_stemmer=False).f1 >= self.threshold:
                return False
        return True

    def add(self, text: str) -> bool:
        """Remember `text` if it is new; returns whether it was added."""
        tokens = rouge_tokens(text, use_stemmer=False)  # tokenised once for the check and the memory
        if not self._is_novel(text, tokens):
            return False
        self.texts.append(text)
        self._bags.append(Counter(tokens))
        return True


# -- the attacker LLM --------------------------------------------------------------------


class AttackerLLM:
    """Prompts an attacker `Generator` (a chat message) with a seed drawn from the run's rng.

    The default attacker is the local model (`llama-cpp`, SmolLM2-135M-Instruct), built on
    first use, so constructing an attack never loads a model.
    """

    def __init__(self, generator: Generator | None, *, max_tokens: int, temperature: float) -> None:
        self._generator = generator
        self.max_tokens = max_tokens
        self.temperature = temperature

    @property
    def generator(self) -> Generator:
        if self._generator is None:
            self._generator = make_generator("llama-cpp")
        return self._generator

    def ask(
        self,
        prompt: str,
        rng: random.Random,
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: tuple[str, ...] = (),
    ) -> str:
        """The attacker's answer to `prompt`, with a decoding seed drawn from `rng`."""
        request = GenerationRequest(
            messages=(ChatMessage("user", prompt),),
            max_tokens=max_tokens or self.max_tokens,
            temperature=self.temperature if temperature is None else temperature,
            seed=rng.randrange(2**31),
            stop=stop,
        )
        return complete(self.generator, request)


def clip_words(text: str, limit: int, *, from_end: bool = False) -> str:
    """The first (or last) `limit` whitespace-separated words of `text`."""
    parts = text.split()
    kept = parts[-limit:] if from_end else parts[:limit]
    return " ".join(kept)

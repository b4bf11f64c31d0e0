"""Per-user release budget per record: how much of each retrieved chunk a user has already received.

Slow extraction asks for a record a few words at a time, each answer under the echo allowance
(RAG-Thief's incremental strategy). The budget remembers, per (user, chunk), which grams of the
chunk were released, as a fixed-size bitmap (`BITS` bits, each gram hashed to one bit, so the state
is bounded whatever the chunk length; a collision only overstates the share, the safe direction).
Once a chunk's released share reaches the threshold, counting what earlier answers and the current
one released (`AnswerBudget`), the release guard withholds every further copied gram of it for that
user, in this answer too: a record copied in reordered groups, each under the echo allowance, stops
at the budget within one answer.

Stores: `memory` (one process) and `sqlite:PATH` (several processes on one machine). Keys hold the
user id and the chunk id, never text.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from ragshield.errors import ConfigError
from ragshield.guards.release.public import gram_hashes

BITS = 4096


def bitmap(hashes: Iterable[int]) -> int:
    """The bitmap (a Python int) with one bit set per gram hash."""
    bits = 0
    for value in hashes:
        bits |= 1 << (int(value) % BITS)
    return bits


class AnswerBudget:
    """The budget as one answer streams: per retrieved chunk, the gram bits this user had received
    before (from the store) plus those this answer has released so far.

    Within one answer the budget bounds what no single run shows: a record copied in reordered
    groups, each under the echo allowance. Once a chunk's released share reaches `share`, `add`
    says so and the guard withholds the rest of it, in this answer and (from the store) the next.

    Args:
        share: the budget, a share of the chunk's gram bits in (0, 1].
        m: gram length in folded symbols.
        canonical: chunk id -> folded text symbols.
        earlier: chunk id -> released bitmap from the store.
    """

    def __init__(self, share: float, m: int, canonical: dict[str, str], earlier: dict[str, int]) -> None:
        self.m = m
        self._bit_at: dict[str, list[int]] = {}  # chunk id -> bit of the gram ending at each position
        self._limit: dict[str, float] = {}
        self._released: dict[str, set[int]] = {}
        self._new: dict[str, set[int]] = {}
        for chunk_id, symbols in canonical.items():
            bits = [int(value) % BITS for value in gram_hashes(symbols, m)]
            distinct = set(bits)
            before = earlier.get(chunk_id, 0)
            self._bit_at[chunk_id] = bits
            self._limit[chunk_id] = share * len(distinct)
            self._released[chunk_id] = {bit for bit in distinct if before >> bit & 1}
            self._new[chunk_id] = set()

    def over(self, chunk_id: str) -> bool:
        """Has this user received at least the budget of the chunk?"""
        released = self._released.get(chunk_id)
        return released is not None and self._limit[chunk_id] > 0 and len(released) >= self._limit[chunk_id]

    def add(self, chunk_id: str, positions: Iterable[int]) -> bool:
        """Count the grams ending at these canonical positions as released; True once over budget."""
        bit_at = self._bit_at.get(chunk_id)
        if bit_at is None:
            return False
        released, new, offset = self._released[chunk_id], self._new[chunk_id], self.m - 1
        for position in positions:
            if 0 <= position - offset < len(bit_at):
                bit = bit_at[position - offset]
                released.add(bit)
                new.add(bit)
        return self.over(chunk_id)

    def released_now(self) -> dict[str, int]:
        """Chunk id -> bitmap of the grams this answer released (for the store)."""
        return {chunk_id: bitmap(bits) for chunk_id, bits in self._new.items() if bits}


class BudgetStore(Protocol):
    """Released-gram bitmaps per (user, chunk)."""

    def released(self, user_id: str, chunk_ids: Iterable[str]) -> dict[str, int]: ...

    def add(self, user_id: str, chunk_id: str, bits: int) -> None: ...


class MemoryBudget:
    """In-process store (lost on restart)."""

    def __init__(self) -> None:
        self._bits: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()

    def released(self, user_id: str, chunk_ids: Iterable[str]) -> dict[str, int]:
        with self._lock:
            return {chunk_id: self._bits.get((user_id, chunk_id), 0) for chunk_id in chunk_ids}

    def add(self, user_id: str, chunk_id: str, bits: int) -> None:
        with self._lock:
            key = (user_id, chunk_id)
            self._bits[key] = self._bits.get(key, 0) | bits


class SQLiteBudget:
    """A SQLite file shared by the processes of one machine."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._local = threading.local()
        with self._connection() as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS release_budget (user_id TEXT, chunk_id TEXT, bits BLOB,"
                " PRIMARY KEY (user_id, chunk_id))"
            )

    def _connection(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=10.0)
            self._local.db = db
        return db

    def released(self, user_id: str, chunk_ids: Iterable[str]) -> dict[str, int]:
        ids = list(chunk_ids)
        found = {chunk_id: 0 for chunk_id in ids}
        if not ids:
            return found
        marks = ",".join("?" * len(ids))
        rows = self._connection().execute(
            f"SELECT chunk_id, bits FROM release_budget WHERE user_id = ? AND chunk_id IN ({marks})", (user_id, *ids)
        )
        for chunk_id, blob in rows:
            found[chunk_id] = int.from_bytes(blob, "big")
        return found

    def add(self, user_id: str, chunk_id: str, bits: int) -> None:
        with self._connection() as db:
            db.execute("BEGIN IMMEDIATE")
            row = db.execute(
                "SELECT bits FROM release_budget WHERE user_id = ? AND chunk_id = ?", (user_id, chunk_id)
            ).fetchone()
            merged = bits | (int.from_bytes(row[0], "big") if row else 0)
            db.execute(
                "INSERT OR REPLACE INTO release_budget VALUES (?, ?, ?)",
                (user_id, chunk_id, merged.to_bytes(BITS // 8, "big")),
            )


def make_budget(store: str) -> BudgetStore:
    """`memory` or `sqlite:PATH`.

    Raises:
        ConfigError: any other store name.
    """
    if store == "memory":
        return MemoryBudget()
    if store.startswith("sqlite:") and len(store) > len("sqlite:"):
        return SQLiteBudget(store.removeprefix("sqlite:"))
    raise ConfigError(f"unknown release budget store {store!r}; use 'memory' or 'sqlite:PATH'")

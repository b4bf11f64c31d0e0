"""Where the per-user policy keeps its state: violation windows and block deadlines per user id.

A `WindowStore` lives in memory (one process), in SQLite (default for the service: survives
restarts; several processes on one host share the file) or in Redis (several service replicas
share one state); `make_store` builds one from its spec. A store that cannot be reached raises
`PolicyStoreUnavailable`, never a blocking decision of its own: an outage is a fault of the
service, not a verdict on a user. The blocking rule itself is `ragshield.guards.policy`.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from ragshield.errors import BackendUnavailable, ConfigError, missing_extra
from ragshield.types import Verdict

STORE_FORMS = "memory | sqlite:PATH | redis://HOST:PORT/DB"


class PolicyStoreUnavailable(BackendUnavailable):
    """The policy store (SQLite file, Redis server) cannot be read or written right now."""


def is_store_outage(verdict: Verdict) -> bool:
    """True for the error verdict a guard runner makes from `PolicyStoreUnavailable`
    (`ragshield.guards.base.error_verdict` records the exception type in the evidence)."""
    return verdict.evidence.get("error_type") == PolicyStoreUnavailable.__name__


class WindowStore(Protocol):
    """Violation windows and block deadlines per user id (times are Unix seconds)."""

    def push(self, user_id: str, violated: bool, window: int) -> int:
        """Append one query to the user's window (keeping the last `window`); return its violations."""
        ...

    def clear(self, user_id: str) -> None: ...

    def block(self, user_id: str, until: float, seconds: float) -> None:
        """Block the user until `until`, `seconds` from now (stores that expire keys use it)."""
        ...

    def blocked_until(self, user_id: str) -> float:
        """The user's block deadline (0 when never blocked)."""
        ...

    def ping(self) -> None:
        """Check that the store answers; raises `PolicyStoreUnavailable` when it does not."""
        ...


class MemoryStore:
    """State in this process only (tests, single-process tools)."""

    def __init__(self) -> None:
        self._windows: dict[str, deque[bool]] = {}
        self._until: dict[str, float] = {}
        self._lock = threading.Lock()

    def push(self, user_id: str, violated: bool, window: int) -> int:
        with self._lock:
            events = self._windows.setdefault(user_id, deque(maxlen=window))
            if events.maxlen != window:
                events = self._windows[user_id] = deque(events, maxlen=window)
            events.append(violated)
            return sum(events)

    def clear(self, user_id: str) -> None:
        with self._lock:
            self._windows.pop(user_id, None)

    def block(self, user_id: str, until: float, seconds: float) -> None:
        with self._lock:
            self._until[user_id] = until

    def blocked_until(self, user_id: str) -> float:
        with self._lock:
            return self._until.get(user_id, 0.0)

    def ping(self) -> None:
        return None


class SQLiteStore:
    """State in a SQLite file (WAL mode): survives restarts; processes on one host share it.

    Each call is one transaction (`BEGIN IMMEDIATE`), so concurrent writers never lose an event.
    SQLite errors at run time (a locked or unreadable file, a full disk) raise
    `PolicyStoreUnavailable`.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._local = threading.local()
        try:
            if str(path) != ":memory:":
                self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._connection() as db:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute(
                    "CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY AUTOINCREMENT, "
                    "user_id TEXT NOT NULL, violated INTEGER NOT NULL)"
                )
                db.execute("CREATE INDEX IF NOT EXISTS events_user ON events (user_id, seq)")
                db.execute("CREATE TABLE IF NOT EXISTS blocks (user_id TEXT PRIMARY KEY, until REAL NOT NULL)")
        except (OSError, sqlite3.Error) as error:
            reason = getattr(error, "strerror", None) or type(error).__name__
            raise ConfigError(f"cannot open the policy store {self.path}: {reason}; check the path") from None

    def _connection(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            try:
                db = sqlite3.connect(str(self.path), timeout=30.0, isolation_level=None)
            except sqlite3.Error as error:
                raise ConfigError(f"cannot open the policy store {self.path}: {error}; check the path") from error
            self._local.db = db
        return db

    def _transaction(self, work: Callable[[sqlite3.Connection], Any]) -> Any:
        with _sqlite_errors():
            db = self._connection()
            db.execute("BEGIN IMMEDIATE")
            try:
                result = work(db)
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            return result

    def push(self, user_id: str, violated: bool, window: int) -> int:
        def work(db: sqlite3.Connection) -> int:
            db.execute("INSERT INTO events (user_id, violated) VALUES (?, ?)", (user_id, int(violated)))
            db.execute(
                "DELETE FROM events WHERE user_id = ? AND seq NOT IN "
                "(SELECT seq FROM events WHERE user_id = ? ORDER BY seq DESC LIMIT ?)",
                (user_id, user_id, window),
            )
            row = db.execute("SELECT COALESCE(SUM(violated), 0) FROM events WHERE user_id = ?", (user_id,)).fetchone()
            return int(row[0])

        return int(self._transaction(work))

    def clear(self, user_id: str) -> None:
        self._transaction(lambda db: db.execute("DELETE FROM events WHERE user_id = ?", (user_id,)))

    def block(self, user_id: str, until: float, seconds: float) -> None:
        self._transaction(
            lambda db: db.execute(
                "INSERT INTO blocks (user_id, until) VALUES (?, ?) "
                "ON CONFLICT(user_id) DO UPDATE SET until = excluded.until",
                (user_id, until),
            )
        )

    def blocked_until(self, user_id: str) -> float:
        with _sqlite_errors():
            row = self._connection().execute("SELECT until FROM blocks WHERE user_id = ?", (user_id,)).fetchone()
        return float(row[0]) if row else 0.0

    def ping(self) -> None:
        with _sqlite_errors():
            self._connection().execute("SELECT 1 FROM blocks LIMIT 1").fetchall()


@contextmanager
def _sqlite_errors() -> Iterator[None]:
    try:
        yield
    except sqlite3.Error as error:
        raise PolicyStoreUnavailable(f"the SQLite policy store failed ({type(error).__name__})") from error


class RedisStore:
    """State in Redis: several service replicas share one policy.

    A window is a list trimmed to its last W entries; push is one MULTI/EXEC transaction. A block is
    a key that expires with the block. Blocks live in Redis's memory: run Redis with persistence
    (`appendonly yes`), or a Redis restart unblocks everyone (`persistence_warning` checks).
    Connection errors and timeouts raise `PolicyStoreUnavailable`.
    """

    def __init__(self, url: str, *, prefix: str = "ragshield:policy:", client: Any = None) -> None:
        if client is None:
            try:
                import redis
            except ImportError as error:
                raise missing_extra("redis", "redis") from error
            try:
                client = redis.Redis.from_url(url, socket_timeout=5.0, socket_connect_timeout=5.0)
            except ValueError as error:  # the message names the bad part, never the password
                raise ConfigError(f"invalid Redis policy store URL: {error}") from None
        self.url = url
        self.prefix = prefix
        self._client = client

    def _key(self, kind: str, user_id: str) -> str:
        return f"{self.prefix}{kind}:{user_id}"

    @contextmanager
    def _errors(self) -> Iterator[None]:
        try:
            yield
        except Exception as error:
            if type(error).__module__.split(".")[0] != "redis":
                raise
            # the type only: a redis error message can hold the URL and its password
            raise PolicyStoreUnavailable(f"the Redis policy store is unavailable ({type(error).__name__})") from error

    def push(self, user_id: str, violated: bool, window: int) -> int:
        key = self._key("window", user_id)
        with self._errors():
            pipe = self._client.pipeline(transaction=True)
            pipe.lpush(key, int(violated))
            pipe.ltrim(key, 0, window - 1)
            pipe.lrange(key, 0, window - 1)
            _, _, events = pipe.execute()
        return sum(int(event) for event in events)

    def clear(self, user_id: str) -> None:
        with self._errors():
            self._client.delete(self._key("window", user_id))

    def block(self, user_id: str, until: float, seconds: float) -> None:
        key = self._key("block", user_id)
        with self._errors():
            if seconds <= 0:
                self._client.delete(key)
                return
            self._client.set(key, repr(until), px=max(1, int(seconds * 1000)))

    def blocked_until(self, user_id: str) -> float:
        with self._errors():
            value = self._client.get(self._key("block", user_id))
        return float(value) if value is not None else 0.0

    def ping(self) -> None:
        with self._errors():
            self._client.ping()

    def persistence_warning(self) -> str | None:
        """A one-line warning when this Redis can lose blocks on a restart: no append-only file
        (with RDB snapshots only, blocks since the last snapshot are lost; with neither, all).
        None with `appendonly yes`, or when Redis does not say (`CONFIG` disabled, as on some
        managed services).

        Raises:
            PolicyStoreUnavailable: Redis cannot be reached.
        """
        with self._errors():
            try:
                save = self._client.config_get("save").get("save")
                appendonly = self._client.config_get("appendonly").get("appendonly")
            except Exception as error:
                if type(error).__name__ == "ResponseError":  # CONFIG is disabled: it cannot tell us
                    return None
                raise
        if save is None or appendonly is None:
            return None
        save_text = save.decode() if isinstance(save, bytes) else str(save)
        aof_text = appendonly.decode() if isinstance(appendonly, bytes) else str(appendonly)
        if aof_text.strip().lower() == "yes":
            return None
        if save_text.strip():
            return (
                "the Redis policy store persists by RDB snapshots only (appendonly no): blocks made since the "
                "last snapshot are lost when Redis restarts; run redis-server with --appendonly yes"
            )
        return (
            "the Redis policy store runs without persistence (no RDB snapshots, appendonly no): a Redis "
            "restart unblocks every blocked user; run redis-server with --appendonly yes"
        )


def make_store(store: str) -> WindowStore:
    """A store from its spec: `memory`, `sqlite:PATH` or `redis://HOST:PORT/DB`.

    Raises:
        ConfigError: the spec has another form.
        BackendUnavailable: `redis://` without the redis package (pip install 'ragshield[redis]').
    """
    if store == "memory":
        return MemoryStore()
    if store.startswith("sqlite:"):
        path = store.removeprefix("sqlite:").removeprefix("//")
        if not path:
            raise ConfigError(f"the sqlite policy store needs a file path: sqlite:PATH (got {store!r})")
        return SQLiteStore(path)
    if store.startswith(("redis://", "rediss://", "unix://")):
        return RedisStore(store)
    raise ConfigError(f"unknown policy store {store!r}; use {STORE_FORMS}")

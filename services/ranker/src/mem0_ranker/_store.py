"""What the ranker keeps, independent of where: the contract both storage backends fulfil.

Times are epoch seconds chosen by the caller (the service's clock), which keeps both backends
byte-for-byte alike and lets tests pass explicit times instead of sleeping. Every write method
returns only after its transaction is durable.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass

from mem0_ranker._mention_cache import MentionCache, MentionReader
from mem0_ranker._scoring import MentionRecord

#: Versioned schema steps; a released step is never edited, only followed by a new one.
Migrations = list[tuple[int, list[str]]]

#: The same in both dialects: row and mention totals, and the dedupe hit counter.
STATS_QUERY = (
    "SELECT (SELECT count(*) FROM ranker_mentions),"
    " (SELECT coalesce(sum(mentions), 0) FROM ranker_mentions),"
    " (SELECT count(*) FROM ranker_dedupe),"
    " (SELECT value FROM ranker_counters WHERE name = 'dedupe_hits'),"
    " (SELECT count(*) FROM ranker_pending)"
)

#: The tables whose rows name a memory and a scope, which every forget clears alike.
RECORD_TABLES = ("ranker_mentions", "ranker_dedupe", "ranker_pending")


@dataclass(frozen=True, slots=True)
class StoredText:
    memory_id: str
    stored_at: float


@dataclass(frozen=True, slots=True)
class Reinforcement:
    counted: bool
    mentions: int
    last_reinforced_at: float


@dataclass(frozen=True, slots=True)
class Forgotten:
    mention_rows: int
    dedupe_rows: int
    pending_rows: int = 0


@dataclass(frozen=True, slots=True)
class Stats:
    mention_rows: int
    total_mentions: int
    dedupe_rows: int
    dedupe_hits: int
    pending_rows: int


@dataclass(frozen=True, slots=True)
class Pending:
    """A memory stored without a verdict, leased to one reconciler at a time."""

    scope: str
    memory_id: str
    reason: str
    marked_at: float
    attempts: int


def pending_table(text: str) -> list[str]:
    """Schema step 2 of both backends: memories awaiting a verdict. `text` is the dialect's
    byte-ordered text type, so the nested-scope range delete is exact in both."""
    return [
        f"""CREATE TABLE ranker_pending (
            memory_id {text} PRIMARY KEY,
            scope {text} NOT NULL,
            reason {text} NOT NULL,
            marked_at DOUBLE PRECISION NOT NULL,
            leased_until DOUBLE PRECISION NOT NULL,
            attempts BIGINT NOT NULL
        )""",
        "CREATE INDEX ranker_pending_order ON ranker_pending (leased_until, marked_at)",
        "CREATE INDEX ranker_pending_scope ON ranker_pending (scope)",
    ]


def scope_prefix_bounds(scope: str) -> tuple[str, str]:
    """The key range of scopes nested under `scope` ("user:u" holds "user:u/run:r").

    "0" is the character after "/", so [scope + "/", scope + "0") is exactly the nested ones and
    both backends can answer it from an index range.
    """
    return f"{scope}/", f"{scope}0"


def pending_migrations(migrations: Migrations, current: int | None) -> Migrations:
    """The steps after schema version `current` (None: nothing applied yet), in order."""
    return [(version, steps) for version, steps in migrations if version > (current or 0)]


class Store(abc.ABC):
    """Mention counts and dedupe records of one ranker deployment."""

    @abc.abstractmethod
    async def find_stored(self, scope: str, key: str, since: float) -> StoredText | None:
        """The memory this text became if recorded at or after `since`; a hit is counted."""

    @abc.abstractmethod
    async def record_stored(
        self, scope: str, key: str, memory_id: str, now: float, *, replaces: bool = False
    ) -> None:
        """Remember (or refresh) that this text in this scope became `memory_id`.

        `replaces`: the memory's text changed to this one, so its other records go in the same
        transaction (a record must never vouch for a text the memory no longer holds).
        """

    @abc.abstractmethod
    async def fold(self, scope: str, into: str, others: Sequence[str], now: float) -> int:
        """Add the mentions of `others` to `into` and drop every record of `others`, atomically.

        Returns the survivor's mention count afterwards.
        """

    @abc.abstractmethod
    async def scope_pending(self, scope: str) -> bool:
        """Does any memory of `scope` await a verdict?"""

    @abc.abstractmethod
    async def mark_pending(self, scope: str, memory_id: str, reason: str, now: float) -> None:
        """Remember that this memory awaits a verdict; marking it again ends its lease, so a
        reconciler that could not settle it hands it back at once."""

    @abc.abstractmethod
    async def claim_pending(self, limit: int, lease_seconds: float, now: float) -> list[Pending]:
        """Lease up to `limit` unleased (or expired) pending memories, oldest first."""

    @abc.abstractmethod
    async def resolve_pending(self, memory_ids: Sequence[str]) -> int:
        """Forget that these memories were pending; returns how many were."""

    @abc.abstractmethod
    async def reinforce(
        self, memory_id: str, scope: str, now: float, debounce_seconds: float
    ) -> Reinforcement:
        """Count one mention unless one was counted less than `debounce_seconds` apart.

        "Apart", not "ago": replicas take `now` from their own clocks before their statements
        run, so a call may arrive with a time just before the last counted one; it is within
        the window all the same, and the stored time never moves backwards.
        """

    @abc.abstractmethod
    async def mentions(self, memory_ids: Sequence[str]) -> dict[str, MentionRecord]:
        """Mention records of these memories (absent ones have never been reinforced).

        Concurrent calls share one query, so the dict may also hold records of other ids.
        """

    @abc.abstractmethod
    async def forget_memories(self, memory_ids: Sequence[str]) -> Forgotten: ...

    @abc.abstractmethod
    async def forget_scope(self, scope: str) -> Forgotten:
        """Drop records of `scope` and of every scope nested under it."""

    @abc.abstractmethod
    async def forget_everything(self) -> Forgotten: ...

    @abc.abstractmethod
    async def stats(self) -> Stats: ...

    @abc.abstractmethod
    async def close(self) -> None: ...


class SqlStore(Store):
    """What both SQL backends share around their own statements: mention lookups go through a
    `MentionReader` (the cache, and concurrent lookups sharing one query), and every write that
    may have changed mention rows updates or drops their cached copies."""

    def __init__(self, mention_cache: MentionCache | None) -> None:
        self._mentions = MentionReader(self._fetch_mentions, mention_cache)

    @abc.abstractmethod
    async def _fetch_mentions(self, memory_ids: list[str]) -> dict[str, MentionRecord]:
        """The stored records of these ids, one query (the reader's cache misses)."""

    async def mentions(self, memory_ids: Sequence[str]) -> dict[str, MentionRecord]:
        return await self._mentions(memory_ids)

    def _forget_cached(self, memory_ids: Sequence[str] | None) -> None:
        """Drop cached records a delete may have removed; None (ids unknown) drops them all.
        Called even when the delete failed: it may have committed, and forgetting is safe."""
        if memory_ids is None:
            self._mentions.clear()
        else:
            self._mentions.forget(memory_ids)

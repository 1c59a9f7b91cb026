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
    " (SELECT value FROM ranker_counters WHERE name = 'dedupe_hits')"
)


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


@dataclass(frozen=True, slots=True)
class Stats:
    mention_rows: int
    total_mentions: int
    dedupe_rows: int
    dedupe_hits: int


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
    async def record_stored(self, scope: str, key: str, memory_id: str, now: float) -> None:
        """Remember (or refresh) that this text in this scope became `memory_id`."""

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

"""What the ranker keeps, independent of where: the contract both storage backends fulfil.

Times are epoch seconds chosen by the caller (the service's clock), which keeps both backends
byte-for-byte alike and lets tests pass explicit times instead of sleeping. Every write method
returns only after its transaction is durable.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass

from mem0_ranker._scoring import MentionRecord


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


@dataclass(frozen=True, slots=True)
class LeaseAnswer:
    """Who holds a lease after an acquire: `granted` to the asker, else refused, with the
    seconds until it frees by expiry at the latest (0: free, but kept for the one next in line)."""

    granted: bool
    expires_in: float


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
    async def acquire_lease(
        self, key: str, holder: str, ttl_seconds: float, now: float, next_in_line_seconds: float
    ) -> LeaseAnswer:
        """Grant `key` to `holder` until `now + ttl_seconds` if it is free (never taken,
        released or expired) or `holder`'s already (an extension), unless another holder is next
        in line. A refused holder becomes next in line for `next_in_line_seconds` (renewed by
        each refused retry) when no other one is, so that pollers take turns."""

    @abc.abstractmethod
    async def release_lease(self, key: str, holder: str, now: float) -> bool:
        """Free `key` if `holder` holds it; whether it did."""

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

    def cached_mentions(self, memory_ids: Sequence[str]) -> dict[str, MentionRecord] | None:
        """`mentions` from memory alone, without awaiting anything, when memory holds every
        id's answer; else None (then await `mentions`)."""
        return None

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

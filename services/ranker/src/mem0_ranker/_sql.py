"""What both SQL backends share: the statements and schema steps that read the same in both
dialects, and `SqlStore`, which runs the statements both write alike through the few things each
backend tells it (its parameter style, one read, one write).
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import Any, ClassVar

from mem0_ranker._mention_cache import MentionCache, MentionReader
from mem0_ranker._scoring import MentionRecord
from mem0_ranker._store import Forgotten, LeaseAnswer, Stats, Store

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


def lease_table(text: str) -> list[str]:
    """Schema step 3 of both backends: named leases (`AcquireLease`). A free lease is a row with
    no holder (or an expired one); its row stays while someone is next in line for it."""
    return [
        f"""CREATE TABLE ranker_leases (
            lease_key {text} PRIMARY KEY,
            holder {text} NOT NULL,
            expires_at DOUBLE PRECISION NOT NULL,
            next_holder {text} NOT NULL,
            next_until DOUBLE PRECISION NOT NULL
        )""",
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


class SqlStore(Store):
    """What both SQL backends share around their own statements: mention lookups go through a
    `MentionReader` (the cache, and concurrent lookups sharing one query), every write that
    may have changed mention rows updates or drops their cached copies, and the statements that
    differ between the dialects only in how they write parameters are written here once."""

    #: How the dialect writes a parameter.
    PARAM: ClassVar[str]
    #: "The row's memory is one of these": one parameter, made by `_ids_param`.
    ANY_ID: ClassVar[str]
    #: A condition every row meets.
    EVERY_ROW: ClassVar[str]

    def __init__(self, mention_cache: MentionCache | None) -> None:
        self._mentions = MentionReader(self._fetch_mentions, mention_cache)

    @staticmethod
    @abc.abstractmethod
    def _ids_param(memory_ids: Sequence[str]) -> object:
        """The parameter `ANY_ID` takes for these ids."""

    @abc.abstractmethod
    async def _read_row(
        self, sql: str, params: Sequence[object] | None = None
    ) -> Sequence[Any] | None:
        """The first row one reading statement returns; None when it returns none."""

    @abc.abstractmethod
    async def _write(self, sql: str, params: Sequence[object]) -> int:
        """Run one writing statement (its own transaction); the number of rows it changed."""

    @abc.abstractmethod
    async def _fetch_mentions(self, memory_ids: list[str]) -> dict[str, MentionRecord]:
        """The stored records of these ids, one query (the reader's cache misses)."""

    @abc.abstractmethod
    async def _delete(
        self, where: str, params: Sequence[object], ids: Sequence[str] | None = None
    ) -> Forgotten:
        """Delete matching rows of every record table; `ids` names the memories, None: unknown."""

    async def mentions(self, memory_ids: Sequence[str]) -> dict[str, MentionRecord]:
        return await self._mentions(memory_ids)

    def cached_mentions(self, memory_ids: Sequence[str]) -> dict[str, MentionRecord] | None:
        return self._mentions.cached(memory_ids)

    def _forget_cached(self, memory_ids: Sequence[str] | None) -> None:
        """Drop cached records a delete may have removed; None (ids unknown) drops them all.
        Called even when the delete failed: it may have committed, and forgetting is safe."""
        if memory_ids is None:
            self._mentions.clear()
        else:
            self._mentions.forget(memory_ids)

    async def scope_pending(self, scope: str) -> bool:
        row = await self._read_row(
            f"SELECT EXISTS (SELECT 1 FROM ranker_pending WHERE scope = {self.PARAM})",  # noqa: S608 - fixed clauses
            (scope,),
        )
        return bool(row and row[0])

    async def mark_pending(self, scope: str, memory_id: str, reason: str, now: float) -> None:
        p = self.PARAM
        await self._write(
            "INSERT INTO ranker_pending"  # noqa: S608 - fixed clauses
            " (memory_id, scope, reason, marked_at, leased_until, attempts)"
            f" VALUES ({p}, {p}, {p}, {p}, 0, 0)"
            " ON CONFLICT (memory_id) DO UPDATE SET leased_until = 0",
            (memory_id, scope, reason, now),
        )

    @abc.abstractmethod
    async def _last_row_of(self, steps: Sequence[tuple[str, Sequence[object]]]) -> Sequence[Any]:
        """Run `steps` in one transaction; the first row the last one returns (it must return
        one)."""

    async def acquire_lease(
        self, key: str, holder: str, ttl_seconds: float, now: float, next_in_line_seconds: float
    ) -> LeaseAnswer:
        p = self.PARAM
        # Taken when free and nobody else is next in line, or extended by its holder; else the
        # asker becomes next in line unless another one is; then who holds it, until when.
        # Extending always succeeds, so the holder read last is the asker exactly when granted.
        row = await self._last_row_of(
            [
                (
                    "INSERT INTO ranker_leases AS l"  # noqa: S608 - fixed clauses
                    " (lease_key, holder, expires_at, next_holder, next_until)"
                    f" VALUES ({p}, {p}, {p}, '', 0) ON CONFLICT (lease_key) DO UPDATE"
                    " SET holder = excluded.holder, expires_at = excluded.expires_at,"
                    " next_holder = CASE WHEN l.next_holder = excluded.holder"
                    " THEN '' ELSE l.next_holder END,"
                    " next_until = CASE WHEN l.next_holder = excluded.holder"
                    " THEN 0 ELSE l.next_until END"
                    " WHERE l.holder = excluded.holder"
                    f" OR (l.expires_at <= {p} AND (l.next_holder IN ('', excluded.holder)"
                    f" OR l.next_until <= {p}))",
                    (key, holder, now + ttl_seconds, now, now),
                ),
                (
                    f"UPDATE ranker_leases SET next_holder = {p}, next_until = {p}"  # noqa: S608 - fixed clauses
                    f" WHERE lease_key = {p} AND holder <> {p}"
                    f" AND (next_holder IN ('', {p}) OR next_until <= {p})",
                    (holder, now + next_in_line_seconds, key, holder, holder, now),
                ),
                (
                    f"SELECT holder, expires_at FROM ranker_leases WHERE lease_key = {p}",  # noqa: S608 - fixed clauses
                    (key,),
                ),
            ]
        )
        return LeaseAnswer(granted=row[0] == holder, expires_in=max(0.0, float(row[1]) - now))

    async def release_lease(self, key: str, holder: str, now: float) -> bool:
        p = self.PARAM
        released = await self._write(
            "UPDATE ranker_leases SET holder = '', expires_at = 0"  # noqa: S608 - fixed clauses
            f" WHERE lease_key = {p} AND holder = {p}",
            (key, holder),
        )
        # A free lease nobody is next in line for needs no row.
        await self._write(
            f"DELETE FROM ranker_leases WHERE lease_key = {p} AND holder = ''"  # noqa: S608 - fixed clauses
            f" AND (next_holder = '' OR next_until <= {p})",
            (key, now),
        )
        return released > 0

    async def resolve_pending(self, memory_ids: Sequence[str]) -> int:
        return await self._write(
            f"DELETE FROM ranker_pending WHERE {self.ANY_ID}",  # noqa: S608 - fixed clauses
            (self._ids_param(memory_ids),),
        )

    async def forget_memories(self, memory_ids: Sequence[str]) -> Forgotten:
        if not memory_ids:
            return Forgotten(0, 0, 0)
        return await self._delete(self.ANY_ID, (self._ids_param(memory_ids),), memory_ids)

    async def forget_scope(self, scope: str) -> Forgotten:
        low, high = scope_prefix_bounds(scope)
        p = self.PARAM
        return await self._delete(
            f"scope = {p} OR (scope >= {p} AND scope < {p})", (scope, low, high)
        )

    async def forget_everything(self) -> Forgotten:
        return await self._delete(self.EVERY_ROW, ())

    async def stats(self) -> Stats:
        row = await self._read_row(STATS_QUERY)
        if row is None:
            raise RuntimeError("an aggregate query returned no row")
        return Stats(*(int(value) for value in row))

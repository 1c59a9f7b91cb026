"""The default backend: one SQLite file in WAL mode, for a single ranker process.

Writes go through one connection, one transaction at a time, with `synchronous=FULL`, so a
call returns only after its commit reached the disk. Reads use a second, read-only connection
(WAL lets it read while a write commits), so reranks never queue behind an fsync.

This process is the file's only writer, so the mention cache is exact: each write updates it
after its commit; and the only grantor of its leases, which it keeps in memory (`_leases`).
Writes are shielded from cancellation: a caller that gives up (a deadline) does not stop a
statement already handed to the database thread, and the cache update must follow the commit
all the same.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from mem0_common import private_files
from mem0_ranker._leases import MemoryLeases
from mem0_ranker._mention_cache import MentionCache
from mem0_ranker._scoring import MentionRecord
from mem0_ranker._sql import (
    RECORD_TABLES,
    Migrations,
    SqlStore,
    lease_table,
    pending_migrations,
    pending_table,
)
from mem0_ranker._store import Forgotten, LeaseAnswer, Pending, Reinforcement, StoredText

MIGRATIONS: Migrations = [
    (
        1,
        [
            # WITHOUT ROWID: the primary key is the table, so a lookup by id is one B-tree descent.
            """CREATE TABLE ranker_mentions (
                memory_id TEXT PRIMARY KEY,
                scope TEXT NOT NULL,
                mentions INTEGER NOT NULL,
                last_reinforced_at REAL NOT NULL
            ) WITHOUT ROWID""",
            "CREATE INDEX ranker_mentions_scope ON ranker_mentions (scope)",
            """CREATE TABLE ranker_dedupe (
                scope TEXT NOT NULL,
                content_key TEXT NOT NULL,
                memory_id TEXT NOT NULL,
                stored_at REAL NOT NULL,
                PRIMARY KEY (scope, content_key)
            ) WITHOUT ROWID""",
            "CREATE INDEX ranker_dedupe_memory ON ranker_dedupe (memory_id)",
            """CREATE TABLE ranker_counters (
                name TEXT PRIMARY KEY,
                value INTEGER NOT NULL
            ) WITHOUT ROWID""",
            "INSERT INTO ranker_counters (name, value) VALUES ('dedupe_hits', 0)",
        ],
    ),
    (2, pending_table("TEXT")),
    (3, lease_table("TEXT")),
    # Leases moved into the process (`_leases`): one ranker process grants them all.
    (4, ["DROP TABLE ranker_leases"]),
]

_MMAP_BYTES = 1 << 30
_T = TypeVar("_T")

#: One fixed statement (cached by SQLite) whose ids arrive as one JSON array; each id is then a
#: primary-key search, so the cost does not grow with the table (a test checks the plan).
MENTIONS_QUERY = (
    "SELECT memory_id, mentions, last_reinforced_at FROM ranker_mentions"
    " WHERE memory_id IN (SELECT value FROM json_each(?))"
)

_REINFORCE = """
INSERT INTO ranker_mentions (memory_id, scope, mentions, last_reinforced_at) VALUES (?, ?, 1, ?)
ON CONFLICT (memory_id) DO UPDATE
    SET mentions = mentions + 1,
        last_reinforced_at = max(last_reinforced_at, excluded.last_reinforced_at)
    WHERE abs(excluded.last_reinforced_at - ranker_mentions.last_reinforced_at) >= ?
RETURNING mentions, last_reinforced_at
"""


async def _migrate(conn: aiosqlite.Connection) -> None:
    await conn.execute("BEGIN IMMEDIATE")
    try:
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS ranker_schema_version (version INTEGER NOT NULL)"
        )
        rows = list(await conn.execute_fetchall("SELECT max(version) FROM ranker_schema_version"))
        current = rows[0][0]
        for version, statements in pending_migrations(MIGRATIONS, current):
            for statement in statements:
                await conn.execute(statement)
            await conn.execute("INSERT INTO ranker_schema_version (version) VALUES (?)", (version,))
        await conn.execute("COMMIT")
    except BaseException:
        await conn.execute("ROLLBACK")
        raise


def _prepare(path: Path) -> Path:
    path = path.resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


class SqliteStore(SqlStore):
    PARAM = "?"
    ANY_ID = "memory_id IN (SELECT value FROM json_each(?))"
    EVERY_ROW = "1 = 1"

    def __init__(
        self,
        writer: aiosqlite.Connection,
        reader: aiosqlite.Connection,
        mention_cache: MentionCache | None = None,
    ) -> None:
        super().__init__(mention_cache)
        self._writer = writer
        self._reader = reader
        self._write_lock = asyncio.Lock()
        self._leases = MemoryLeases()

    @classmethod
    async def open(cls, path: Path, mention_cache: MentionCache | None = None) -> SqliteStore:
        """Open (creating if needed) the file, 0600 in a 0700 folder; SQLite gives its WAL and
        shared-memory files the same mode as the database."""
        with private_files():
            path = await asyncio.to_thread(_prepare, path)
            writer = await aiosqlite.connect(path, isolation_level=None)
            try:
                await writer.execute("PRAGMA journal_mode=WAL")
                await writer.execute("PRAGMA synchronous=FULL")
                await writer.execute("PRAGMA busy_timeout=10000")
                await _migrate(writer)
                reader = await aiosqlite.connect(
                    f"{path.as_uri()}?mode=ro", uri=True, isolation_level=None
                )
            except BaseException:
                await writer.close()
                raise
        await reader.execute("PRAGMA busy_timeout=10000")
        # Memory-mapped reads: a lookup in a million-row table then touches pages in the OS
        # cache directly instead of a read() per page missing from SQLite's small page cache,
        # which keeps rerank cost flat as the table grows. Address space only, not RAM.
        await reader.execute(f"PRAGMA mmap_size={_MMAP_BYTES}")
        return cls(writer, reader, mention_cache)

    @staticmethod
    def _ids_param(memory_ids: Sequence[str]) -> object:
        return json.dumps(list(memory_ids))

    async def _read_row(
        self, sql: str, params: Sequence[object] | None = None
    ) -> Sequence[Any] | None:
        return next(iter(await self._reader.execute_fetchall(sql, params)), None)

    async def _write(self, sql: str, params: Sequence[object]) -> int:
        async with self._write_lock:
            cursor = await self._writer.execute(sql, params)
        return cursor.rowcount

    async def find_stored(self, scope: str, key: str, since: float) -> StoredText | None:
        rows = list(
            await self._reader.execute_fetchall(
                "SELECT memory_id, stored_at FROM ranker_dedupe"
                " WHERE scope = ? AND content_key = ? AND stored_at >= ?",
                (scope, key, since),
            )
        )
        if not rows:
            return None
        async with self._write_lock:
            await self._writer.execute(
                "UPDATE ranker_counters SET value = value + 1 WHERE name = 'dedupe_hits'"
            )
        return StoredText(memory_id=rows[0][0], stored_at=rows[0][1])

    async def record_stored(
        self, scope: str, key: str, memory_id: str, now: float, *, replaces: bool = False
    ) -> None:
        async def statements() -> None:
            if replaces:
                await self._writer.execute(
                    "DELETE FROM ranker_dedupe WHERE memory_id = ?"
                    " AND NOT (scope = ? AND content_key = ?)",
                    (memory_id, scope, key),
                )
            await self._writer.execute(
                "INSERT INTO ranker_dedupe (scope, content_key, memory_id, stored_at)"
                " VALUES (?, ?, ?, ?) ON CONFLICT (scope, content_key) DO UPDATE"
                " SET memory_id = excluded.memory_id, stored_at = excluded.stored_at",
                (scope, key, memory_id, now),
            )

        await self._transaction(statements)

    async def _transaction(self, statements: Callable[[], Awaitable[_T]]) -> _T:
        """Run `statements` as one transaction on the writer, shielded from cancellation."""

        async def run() -> _T:
            async with self._write_lock:
                await self._writer.execute("BEGIN IMMEDIATE")
                try:
                    result = await statements()
                    await self._writer.execute("COMMIT")
                except BaseException:
                    await self._writer.execute("ROLLBACK")
                    raise
                return result

        return await asyncio.shield(run())

    async def _last_row_of(self, steps: Sequence[tuple[str, Sequence[object]]]) -> Sequence[Any]:
        async def statements() -> Sequence[Any]:
            rows: list[Sequence[Any]] = []
            for sql, params in steps:
                rows = list(await self._writer.execute_fetchall(sql, params))
            return rows[0]

        return await self._transaction(statements)

    async def fold(self, scope: str, into: str, others: Sequence[str], now: float) -> int:
        ids = json.dumps(list(others))

        async def statements() -> int:
            rows = list(
                await self._writer.execute_fetchall(
                    "SELECT coalesce(sum(mentions), 0), max(last_reinforced_at)"
                    " FROM ranker_mentions WHERE memory_id IN (SELECT value FROM json_each(?))",
                    (ids,),
                )
            )
            carried, last = rows[0]
            if carried:
                await self._writer.execute(
                    "INSERT INTO ranker_mentions (memory_id, scope, mentions, last_reinforced_at)"
                    " VALUES (?, ?, ?, ?) ON CONFLICT (memory_id) DO UPDATE"
                    " SET mentions = mentions + excluded.mentions,"
                    " last_reinforced_at = max(last_reinforced_at, excluded.last_reinforced_at)",
                    (into, scope, carried, last),
                )
            for table in RECORD_TABLES:
                await self._writer.execute(
                    f"DELETE FROM {table} WHERE {self.ANY_ID}",  # noqa: S608 - fixed clauses
                    (ids,),
                )
            found = list(
                await self._writer.execute_fetchall(
                    "SELECT mentions FROM ranker_mentions WHERE memory_id = ?", (into,)
                )
            )
            return int(found[0][0]) if found else 0

        try:
            return await self._transaction(statements)
        finally:
            self._forget_cached([into, *others])

    async def claim_pending(self, limit: int, lease_seconds: float, now: float) -> list[Pending]:
        async def statements() -> list[Pending]:
            rows = list(
                await self._writer.execute_fetchall(
                    "UPDATE ranker_pending SET leased_until = ?, attempts = attempts + 1"
                    " WHERE memory_id IN (SELECT memory_id FROM ranker_pending"
                    " WHERE leased_until <= ? ORDER BY marked_at LIMIT ?)"
                    " RETURNING scope, memory_id, reason, marked_at, attempts",
                    (now + lease_seconds, now, limit),
                )
            )
            return sorted((Pending(*row) for row in rows), key=lambda p: p.marked_at)

        return await self._transaction(statements)

    async def acquire_lease(
        self, key: str, holder: str, ttl_seconds: float, now: float, next_in_line_seconds: float
    ) -> LeaseAnswer:
        return self._leases.acquire(key, holder, ttl_seconds, now, next_in_line_seconds)

    async def release_lease(self, key: str, holder: str, now: float) -> bool:
        return self._leases.release(key, holder, now)

    async def reinforce(
        self, memory_id: str, scope: str, now: float, debounce_seconds: float
    ) -> Reinforcement:
        return await asyncio.shield(self._reinforce(memory_id, scope, now, debounce_seconds))

    async def _reinforce(
        self, memory_id: str, scope: str, now: float, debounce_seconds: float
    ) -> Reinforcement:
        async with self._write_lock:
            try:
                rows = list(
                    await self._writer.execute_fetchall(
                        _REINFORCE, (memory_id, scope, now, debounce_seconds)
                    )
                )
                counted = bool(rows)
                if not counted:
                    rows = list(
                        await self._writer.execute_fetchall(
                            "SELECT mentions, last_reinforced_at FROM ranker_mentions"
                            " WHERE memory_id = ?",
                            (memory_id,),
                        )
                    )
            except BaseException:  # the upsert may have committed: drop what may be stale
                self._mentions.forget([memory_id])
                raise
            self._mentions.written(memory_id, MentionRecord(rows[0][0], rows[0][1]))
        return Reinforcement(counted, rows[0][0], rows[0][1])

    async def _fetch_mentions(self, memory_ids: list[str]) -> dict[str, MentionRecord]:
        rows = await self._reader.execute_fetchall(MENTIONS_QUERY, (json.dumps(memory_ids),))
        return {row[0]: MentionRecord(row[1], row[2]) for row in rows}

    async def _delete(
        self, where: str, params: Sequence[object], ids: Sequence[str] | None = None
    ) -> Forgotten:
        """Delete matching rows of every record table; `ids` names the memories, None: unknown."""

        async def statements() -> Forgotten:
            counts = []
            for table in RECORD_TABLES:
                cursor = await self._writer.execute(
                    f"DELETE FROM {table} WHERE {where}",  # noqa: S608 - fixed clauses
                    params,
                )
                counts.append(cursor.rowcount)
            return Forgotten(*counts)

        try:
            return await self._transaction(statements)
        finally:  # even a failed delete may have committed: forgetting is always safe
            self._forget_cached(ids)

    async def close(self) -> None:
        await self._reader.close()
        await self._writer.close()

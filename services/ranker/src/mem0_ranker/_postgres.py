"""The shared backend: PostgreSQL, so several ranker replicas can serve behind one address.

Every write is one atomic statement (or one transaction), so replicas need no coordination: the
reinforce upsert takes the row lock, re-checks the debounce under it and increments in place,
which is why two replicas reinforcing the same memory at once never lose an increment.
Connections run in autocommit mode: a single-statement write is committed when it returns.

The mention cache cannot see other replicas' writes, so here its entries expire after
`RANKER_MENTION_CACHE_TTL_SECONDS`; this replica's own writes update it at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import TupleRow
from psycopg_pool import AsyncConnectionPool

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
from mem0_ranker._store import Forgotten, Pending, Reinforcement, StoredText

MIGRATIONS: Migrations = [
    (
        1,
        [
            # The key carries the two columns a rerank reads, so the lookup is an index-only
            # scan (once autovacuum marked the pages all-visible) and never visits the heap.
            """CREATE TABLE ranker_mentions (
                memory_id text COLLATE "C" NOT NULL,
                scope text COLLATE "C" NOT NULL,
                mentions bigint NOT NULL,
                last_reinforced_at double precision NOT NULL,
                CONSTRAINT ranker_mentions_pkey PRIMARY KEY (memory_id)
                    INCLUDE (mentions, last_reinforced_at)
            )""",
            # Byte order ("C") everywhere: ids and keys compare as bytes (cheap, and the same
            # as SQLite), and the nested-scope range scan is exact and index-served.
            "CREATE INDEX ranker_mentions_scope ON ranker_mentions (scope)",
            """CREATE TABLE ranker_dedupe (
                scope text COLLATE "C" NOT NULL,
                content_key text COLLATE "C" NOT NULL,
                memory_id text COLLATE "C" NOT NULL,
                stored_at double precision NOT NULL,
                PRIMARY KEY (scope, content_key)
            )""",
            "CREATE INDEX ranker_dedupe_memory ON ranker_dedupe (memory_id)",
            "CREATE TABLE ranker_counters (name text PRIMARY KEY, value bigint NOT NULL)",
            "INSERT INTO ranker_counters (name, value) VALUES ('dedupe_hits', 0)",
        ],
    ),
    (2, pending_table('text COLLATE "C"')),
    (3, lease_table('text COLLATE "C"')),
]

#: Replicas starting together serialise their migrations on this advisory lock key.
_MIGRATION_LOCK = 0x6D656D30_72616E6B

#: One primary-key index probe per id, so the cost does not grow with the table (a test
#: checks the plan).
MENTIONS_QUERY = (
    "SELECT memory_id, mentions, last_reinforced_at FROM ranker_mentions WHERE memory_id = ANY(%s)"
)

_REINFORCE = """
INSERT INTO ranker_mentions AS m (memory_id, scope, mentions, last_reinforced_at)
VALUES (%(id)s, %(scope)s, 1, %(now)s)
ON CONFLICT (memory_id) DO UPDATE
    SET mentions = m.mentions + 1,
        last_reinforced_at = greatest(m.last_reinforced_at, excluded.last_reinforced_at)
    WHERE abs(excluded.last_reinforced_at - m.last_reinforced_at) >= %(debounce)s
RETURNING mentions, last_reinforced_at
"""


async def _migrate(conn: AsyncConnection[TupleRow]) -> None:
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS ranker_schema_version (version integer NOT NULL)"
        )
        cur = await conn.execute("SELECT max(version) FROM ranker_schema_version")
        row = await cur.fetchone()
        current = row[0] if row else None
        for version, statements in pending_migrations(MIGRATIONS, current):
            for statement in statements:
                await conn.execute(statement)
            await conn.execute(
                "INSERT INTO ranker_schema_version (version) VALUES (%s)", (version,)
            )


class PostgresStore(SqlStore):
    PARAM = "%s"
    ANY_ID = "memory_id = ANY(%s)"
    EVERY_ROW = "true"

    def __init__(
        self,
        pool: AsyncConnectionPool[AsyncConnection[TupleRow]],
        mention_cache: MentionCache | None = None,
    ) -> None:
        super().__init__(mention_cache)
        self._pool = pool

    @classmethod
    async def open(
        cls,
        url: str,
        max_size: int,
        wait_seconds: float = 5.0,
        mention_cache: MentionCache | None = None,
    ) -> PostgresStore:
        pool: AsyncConnectionPool[AsyncConnection[TupleRow]] = AsyncConnectionPool(
            url,
            min_size=1,
            max_size=max_size,
            timeout=wait_seconds,
            open=False,
            kwargs={"autocommit": True, "connect_timeout": max(1, round(wait_seconds))},
        )
        await pool.open(wait=True, timeout=wait_seconds)
        try:
            async with pool.connection() as conn:
                await _migrate(conn)
        except BaseException:
            await pool.close()
            raise
        return cls(pool, mention_cache)

    @staticmethod
    def _ids_param(memory_ids: Sequence[str]) -> object:
        return list(memory_ids)

    async def _read_row(
        self, sql: str, params: Sequence[object] | None = None
    ) -> Sequence[Any] | None:
        async with self._pool.connection() as conn:
            cur = await conn.execute(sql, params)
            return await cur.fetchone()

    async def _write(self, sql: str, params: Sequence[object]) -> int:
        async with self._pool.connection() as conn:
            cur = await conn.execute(sql, params)
        return cur.rowcount

    async def _last_row_of(self, steps: Sequence[tuple[str, Sequence[object]]]) -> Sequence[Any]:
        async with self._pool.connection() as conn, conn.transaction():
            for sql, params in steps:
                cur = await conn.execute(sql, params)
            row = await cur.fetchone()
        if row is None:
            raise RuntimeError("a statement expected to return a row returned none")
        return row

    async def find_stored(self, scope: str, key: str, since: float) -> StoredText | None:
        async with self._pool.connection() as conn:
            cur = await conn.execute(
                "SELECT memory_id, stored_at FROM ranker_dedupe"
                " WHERE scope = %s AND content_key = %s AND stored_at >= %s",
                (scope, key, since),
            )
            row = await cur.fetchone()
            if row is None:
                return None
            await conn.execute(
                "UPDATE ranker_counters SET value = value + 1 WHERE name = 'dedupe_hits'"
            )
        return StoredText(memory_id=row[0], stored_at=row[1])

    async def record_stored(
        self, scope: str, key: str, memory_id: str, now: float, *, replaces: bool = False
    ) -> None:
        async with self._pool.connection() as conn, conn.transaction():
            if replaces:
                await conn.execute(
                    "DELETE FROM ranker_dedupe WHERE memory_id = %s"
                    " AND NOT (scope = %s AND content_key = %s)",
                    (memory_id, scope, key),
                )
            await conn.execute(
                "INSERT INTO ranker_dedupe (scope, content_key, memory_id, stored_at)"
                " VALUES (%s, %s, %s, %s) ON CONFLICT (scope, content_key) DO UPDATE"
                " SET memory_id = excluded.memory_id, stored_at = excluded.stored_at",
                (scope, key, memory_id, now),
            )

    async def fold(self, scope: str, into: str, others: Sequence[str], now: float) -> int:
        ids = list(others)
        try:
            async with self._pool.connection() as conn, conn.transaction():
                # Lock the rows being folded, so a concurrent reinforcement of one of them
                # either lands before (and is carried) or waits and finds it gone.
                cur = await conn.execute(
                    "SELECT coalesce(sum(mentions), 0), max(last_reinforced_at) FROM"
                    " (SELECT mentions, last_reinforced_at FROM ranker_mentions"
                    "  WHERE memory_id = ANY(%s) FOR UPDATE) AS folded",
                    (ids,),
                )
                row = await cur.fetchone()
                carried, last = row if row is not None else (0, None)
                if carried:
                    await conn.execute(
                        "INSERT INTO ranker_mentions AS m"
                        " (memory_id, scope, mentions, last_reinforced_at)"
                        " VALUES (%s, %s, %s, %s) ON CONFLICT (memory_id) DO UPDATE"
                        " SET mentions = m.mentions + excluded.mentions,"
                        " last_reinforced_at ="
                        " greatest(m.last_reinforced_at, excluded.last_reinforced_at)",
                        (into, scope, carried, last),
                    )
                for table in RECORD_TABLES:
                    await conn.execute(
                        f"DELETE FROM {table} WHERE {self.ANY_ID}",  # noqa: S608 - fixed clauses
                        (ids,),
                    )
                cur = await conn.execute(
                    "SELECT mentions FROM ranker_mentions WHERE memory_id = %s", (into,)
                )
                found = await cur.fetchone()
        finally:
            self._forget_cached([into, *ids])
        return int(found[0]) if found else 0

    async def claim_pending(self, limit: int, lease_seconds: float, now: float) -> list[Pending]:
        async with self._pool.connection() as conn:
            # SKIP LOCKED: replicas claiming at once each take different memories.
            cur = await conn.execute(
                "UPDATE ranker_pending SET leased_until = %s, attempts = attempts + 1"
                " WHERE memory_id IN (SELECT memory_id FROM ranker_pending"
                " WHERE leased_until <= %s ORDER BY marked_at LIMIT %s FOR UPDATE SKIP LOCKED)"
                " RETURNING scope, memory_id, reason, marked_at, attempts",
                (now + lease_seconds, now, limit),
            )
            rows = await cur.fetchall()
        return sorted((Pending(*row) for row in rows), key=lambda p: p.marked_at)

    async def reinforce(
        self, memory_id: str, scope: str, now: float, debounce_seconds: float
    ) -> Reinforcement:
        params = {"id": memory_id, "scope": scope, "now": now, "debounce": debounce_seconds}
        # One transaction: the upsert locks the row even when debounced, so the read that
        # follows sees the same row a concurrent Forget cannot remove in between.
        try:
            async with self._pool.connection() as conn, conn.transaction():
                cur = await conn.execute(_REINFORCE, params)
                row = await cur.fetchone()
                counted = row is not None
                if not counted:
                    cur = await conn.execute(
                        "SELECT mentions, last_reinforced_at FROM ranker_mentions"
                        " WHERE memory_id = %s",
                        (memory_id,),
                    )
                    row = await cur.fetchone()
        except BaseException:  # the upsert may have committed: drop what may be stale
            self._mentions.forget([memory_id])
            raise
        if row is None:  # the upsert skips only an existing, now locked, row
            raise RuntimeError(f"mention row of {memory_id!r} vanished inside its transaction")
        self._mentions.written(memory_id, MentionRecord(row[0], row[1]))
        return Reinforcement(counted, row[0], row[1])

    async def _fetch_mentions(self, memory_ids: list[str]) -> dict[str, MentionRecord]:
        async with self._pool.connection() as conn:
            cur = await conn.execute(MENTIONS_QUERY, (memory_ids,))
            rows = await cur.fetchall()
        return {row[0]: MentionRecord(row[1], row[2]) for row in rows}

    async def _delete(
        self, where: str, params: Sequence[object], ids: Sequence[str] | None = None
    ) -> Forgotten:
        """Delete matching rows of every record table; `ids` names the memories, None: unknown."""
        counts = []
        try:
            async with self._pool.connection() as conn, conn.transaction():
                for table in RECORD_TABLES:
                    cursor = await conn.execute(
                        f"DELETE FROM {table} WHERE {where}",  # noqa: S608 - fixed clauses
                        params,
                    )
                    counts.append(cursor.rowcount)
        finally:  # even a failed delete may have committed: forgetting is always safe
            self._forget_cached(ids)
        return Forgotten(*counts)

    async def close(self) -> None:
        await self._pool.close()

"""Both storage backends, against a real SQLite file and the real PostgreSQL: same tests."""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from contextlib import closing
from pathlib import Path

import psycopg
import pytest

from mem0_ranker import Store, content_key
from mem0_ranker._postgres import MENTIONS_QUERY as POSTGRES_MENTIONS_QUERY
from mem0_ranker._postgres import MIGRATIONS as POSTGRES_MIGRATIONS
from mem0_ranker._sqlite import MENTIONS_QUERY as SQLITE_MENTIONS_QUERY
from mem0_ranker._sqlite import MIGRATIONS as SQLITE_MIGRATIONS
from tests.ranker.conftest import NOW, open_backend

pytestmark = pytest.mark.anyio

HOUR = 3600.0
KEY = content_key("user drinks green tea")
MIGRATIONS = {"sqlite": SQLITE_MIGRATIONS, "postgres": POSTGRES_MIGRATIONS}


async def test_a_recorded_text_is_found_within_the_window(store: Store) -> None:
    await store.record_stored("user:a", KEY, "mem-1", NOW)
    found = await store.find_stored("user:a", KEY, since=NOW - HOUR)
    assert found is not None
    assert (found.memory_id, found.stored_at) == ("mem-1", NOW)


async def test_a_recorded_text_older_than_the_window_is_not_a_duplicate(store: Store) -> None:
    await store.record_stored("user:a", KEY, "mem-1", NOW - 2 * HOUR)
    assert await store.find_stored("user:a", KEY, since=NOW - HOUR) is None


async def test_dedupe_is_per_scope(store: Store) -> None:
    await store.record_stored("user:a", KEY, "mem-1", NOW)
    assert await store.find_stored("user:b", KEY, since=NOW - HOUR) is None


async def test_checking_never_records_a_text(store: Store) -> None:
    assert await store.find_stored("user:a", KEY, since=NOW - HOUR) is None
    assert await store.find_stored("user:a", KEY, since=NOW - HOUR) is None
    assert (await store.stats()).dedupe_rows == 0


async def test_recording_again_points_the_text_at_the_newer_memory(store: Store) -> None:
    await store.record_stored("user:a", KEY, "mem-1", NOW - HOUR)
    await store.record_stored("user:a", KEY, "mem-2", NOW)
    found = await store.find_stored("user:a", KEY, since=NOW - 2 * HOUR)
    assert found is not None
    assert found.memory_id == "mem-2"


async def test_dedupe_hits_are_counted(store: Store) -> None:
    before = (await store.stats()).dedupe_hits
    await store.record_stored("user:a", KEY, "mem-1", NOW)
    await store.find_stored("user:a", KEY, since=NOW - HOUR)
    await store.find_stored("user:a", KEY, since=NOW - HOUR)
    await store.find_stored("user:a", content_key("another text"), since=NOW - HOUR)
    assert (await store.stats()).dedupe_hits == before + 2


async def test_first_reinforcement_counts_one_mention(store: Store) -> None:
    result = await store.reinforce("mem-1", "user:a", NOW, debounce_seconds=HOUR)
    assert (result.counted, result.mentions, result.last_reinforced_at) == (True, 1, NOW)


async def test_reinforce_is_debounced_within_window(store: Store) -> None:
    await store.reinforce("mem-1", "user:a", NOW, debounce_seconds=HOUR)
    again = await store.reinforce("mem-1", "user:a", NOW + HOUR - 1, debounce_seconds=HOUR)
    assert (again.counted, again.mentions, again.last_reinforced_at) == (False, 1, NOW)


async def test_reinforce_counts_again_once_the_window_passed(store: Store) -> None:
    await store.reinforce("mem-1", "user:a", NOW, debounce_seconds=HOUR)
    again = await store.reinforce("mem-1", "user:a", NOW + HOUR, debounce_seconds=HOUR)
    assert (again.counted, again.mentions, again.last_reinforced_at) == (True, 2, NOW + HOUR)


async def test_mentions_returns_records_of_known_memories_only(store: Store) -> None:
    await store.reinforce("mem-1", "user:a", NOW, debounce_seconds=0)
    await store.reinforce("mem-1", "user:a", NOW + 1, debounce_seconds=0)
    records = await store.mentions(["mem-1", "mem-unknown"])
    assert set(records) == {"mem-1"}
    assert (records["mem-1"].mentions, records["mem-1"].last_reinforced_at) == (2, NOW + 1)


async def test_forget_memories_drops_their_mentions_and_dedupe_records(store: Store) -> None:
    await store.reinforce("mem-1", "user:a", NOW, debounce_seconds=0)
    await store.reinforce("mem-2", "user:a", NOW, debounce_seconds=0)
    await store.record_stored("user:a", KEY, "mem-1", NOW)
    forgotten = await store.forget_memories(["mem-1"])
    assert (forgotten.mention_rows, forgotten.dedupe_rows) == (1, 1)
    assert set(await store.mentions(["mem-1", "mem-2"])) == {"mem-2"}
    assert await store.find_stored("user:a", KEY, since=NOW - HOUR) is None


async def test_forget_scope_drops_the_scope_and_scopes_nested_under_it(store: Store) -> None:
    for memory_id, scope in [
        ("m1", "user:a"),
        ("m2", "user:a/run:r1"),
        ("m3", "user:ab"),
        ("m4", "user:b"),
    ]:
        await store.reinforce(memory_id, scope, NOW, debounce_seconds=0)
        await store.record_stored(scope, KEY, memory_id, NOW)
    forgotten = await store.forget_scope("user:a")
    assert (forgotten.mention_rows, forgotten.dedupe_rows) == (2, 2)
    assert set(await store.mentions(["m1", "m2", "m3", "m4"])) == {"m3", "m4"}


async def test_forget_everything_empties_both_tables(store: Store) -> None:
    await store.reinforce("mem-1", "user:a", NOW, debounce_seconds=0)
    await store.record_stored("user:a", KEY, "mem-1", NOW)
    forgotten = await store.forget_everything()
    assert (forgotten.mention_rows, forgotten.dedupe_rows) == (1, 1)
    stats = await store.stats()
    assert (stats.mention_rows, stats.total_mentions, stats.dedupe_rows) == (0, 0, 0)


async def test_stats_count_rows_and_mentions(store: Store) -> None:
    for when in (NOW, NOW + 1, NOW + 2):
        await store.reinforce("mem-1", "user:a", when, debounce_seconds=0)
    await store.reinforce("mem-2", "user:a", NOW, debounce_seconds=0)
    await store.record_stored("user:a", KEY, "mem-1", NOW)
    stats = await store.stats()
    assert (stats.mention_rows, stats.total_mentions, stats.dedupe_rows) == (2, 4, 1)


async def test_reopening_keeps_every_acknowledged_write(
    store: Store, backend: str, backend_url: str, tmp_path: Path
) -> None:
    await store.reinforce("mem-1", "user:a", NOW, debounce_seconds=0)
    await store.record_stored("user:a", KEY, "mem-1", NOW)
    await store.close()
    reopened = await open_backend(backend, tmp_path, backend_url, empty=False)
    try:
        assert (await reopened.mentions(["mem-1"]))["mem-1"].mentions == 1
        assert await reopened.find_stored("user:a", KEY, since=NOW - HOUR) is not None
    finally:
        await reopened.close()


async def test_reopening_applies_each_migration_exactly_once(
    store: Store, backend: str, backend_url: str, tmp_path: Path
) -> None:
    reopened = await open_backend(backend, tmp_path, backend_url, empty=False)
    await reopened.close()
    query = "SELECT version FROM ranker_schema_version ORDER BY version"
    if backend == "sqlite":
        with closing(sqlite3.connect(tmp_path / "ranker.sqlite3")) as conn:
            versions = [row[0] for row in conn.execute(query)]
    else:
        async with await psycopg.AsyncConnection.connect(backend_url) as conn:
            cur = await conn.execute(query)
            versions = [row[0] for row in await cur.fetchall()]
    assert versions == [version for version, _ in MIGRATIONS[backend]]


async def test_mention_lookup_searches_the_primary_key_not_the_table(
    store: Store, backend: str, backend_url: str, tmp_path: Path
) -> None:
    # The plan, not a timing, is what keeps a rerank as cheap at a million rows as at a
    # thousand. PostgreSQL plans by statistics, so it gets enough rows to prefer a scan if the
    # key could not serve the lookup.
    if backend == "sqlite":
        with closing(sqlite3.connect(tmp_path / "ranker.sqlite3")) as conn:
            rows = conn.execute(f"EXPLAIN QUERY PLAN {SQLITE_MENTIONS_QUERY}", ("[]",))
            plan = " ".join(str(row[3]) for row in rows)
        assert "SEARCH ranker_mentions USING PRIMARY KEY (memory_id=?)" in plan
        return
    async with await psycopg.AsyncConnection.connect(backend_url, autocommit=True) as conn:
        await conn.execute(
            "INSERT INTO ranker_mentions (memory_id, scope, mentions, last_reinforced_at)"
            " SELECT 'bulk-' || g, 'user:bulk', 1, 0 FROM generate_series(1, 20000) AS g"
        )
        await conn.execute("ANALYZE ranker_mentions")
        cur = await conn.execute(f"EXPLAIN {POSTGRES_MENTIONS_QUERY}", (["bulk-1", "bulk-2"],))
        plan = " ".join(str(row[0]) for row in await cur.fetchall())
    assert "ranker_mentions_pkey" in plan
    assert "Seq Scan" not in plan


async def test_holders_racing_for_one_free_lease_get_it_exactly_once(store: Store) -> None:
    """Concurrent first acquires of a key no row exists for yet: one insert wins, every other
    asker finds it held (on PostgreSQL, the upsert's row lock orders them)."""
    key = f"scope/{uuid.uuid4().hex}"
    answers = await asyncio.gather(
        *(store.acquire_lease(key, f"holder-{i}", 10.0, NOW, 2.0) for i in range(12))
    )
    assert sorted(answer.granted for answer in answers) == [False] * 11 + [True]

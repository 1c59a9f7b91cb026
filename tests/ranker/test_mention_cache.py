"""The mention cache: bounded, exact on SQLite, at most its TTL stale on PostgreSQL replicas."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, closing
from pathlib import Path

import pytest

from mem0_ranker import MentionRecord
from mem0_ranker._mention_cache import MentionCache, MentionReader
from mem0_ranker._postgres import PostgresStore
from mem0_ranker._sqlite import SqliteStore
from tests.ranker.conftest import NOW, Clock, open_backend
from tests.ranker.test_coalescing import ROWS, RecordingFetch

pytestmark = pytest.mark.anyio

TTL = 2.0


# --- the cache on its own ---------------------------------------------------------------------


def test_the_cache_keeps_at_most_its_size_dropping_the_least_recently_used() -> None:
    cache = MentionCache(3)
    cache.fill(["m1", "m2", "m3"], {"m1": ROWS["m1"]}, cache.generation)
    cache.lookup(["m1"])  # m1 is now the most recently used; m2 the least
    cache.fill(["m4"], {}, cache.generation)
    assert len(cache) == 3
    found, missing = cache.lookup(["m1", "m2", "m3", "m4"])
    assert (found, missing) == ({"m1": ROWS["m1"]}, ["m2"])


def test_memories_without_a_row_are_cached_as_absent() -> None:
    cache = MentionCache(10)
    cache.fill(["never-reinforced"], {}, cache.generation)
    assert cache.lookup(["never-reinforced"]) == ({}, [])


def test_a_read_that_overlapped_a_write_does_not_fill_the_cache() -> None:
    cache = MentionCache(10)
    began = cache.generation
    cache.written("m1", MentionRecord(2, NOW))  # committed while the read was running
    cache.fill(["m1", "m2"], {"m1": MentionRecord(1, NOW - 1)}, began)
    assert cache.lookup(["m1", "m2"]) == ({"m1": MentionRecord(2, NOW)}, ["m2"])


def test_entries_expire_after_the_ttl() -> None:
    clock = Clock()
    cache = MentionCache(10, ttl_seconds=TTL, clock=clock)
    cache.fill(["m1"], {"m1": ROWS["m1"]}, cache.generation)
    clock.advance(TTL - 0.01)
    assert cache.lookup(["m1"]) == ({"m1": ROWS["m1"]}, [])
    clock.advance(0.01)
    assert cache.lookup(["m1"]) == ({}, ["m1"])


def test_an_expired_entry_among_fresh_ones_is_missing_and_the_rest_found() -> None:
    clock = Clock()
    cache = MentionCache(10, ttl_seconds=TTL, clock=clock)
    cache.fill(["m1"], {"m1": ROWS["m1"]}, cache.generation)
    clock.advance(TTL)
    cache.fill(["m2", "m3"], {"m2": ROWS["m2"]}, cache.generation)
    assert cache.lookup(["m2", "m1", "m3"]) == ({"m2": ROWS["m2"]}, ["m1"])
    assert cache.lookup([]) == ({}, [])


async def test_the_cache_alone_answers_only_when_it_holds_every_id() -> None:
    fetch = RecordingFetch(ROWS)
    reader = MentionReader(fetch, MentionCache(100))
    assert reader.cached(["m1"]) is None
    await reader(["m1", "unknown"])
    assert reader.cached(["m1", "unknown"]) == {"m1": ROWS["m1"]}
    assert reader.cached(["m1", "m2"]) is None
    assert reader.cached([]) == {}
    assert MentionReader(fetch, None).cached(["m1"]) is None
    assert fetch.batches == [["m1", "unknown"]]


async def test_cached_memories_skip_the_query_and_misses_share_one() -> None:
    fetch = RecordingFetch(ROWS)
    reader = MentionReader(fetch, MentionCache(100))
    await reader(["m1", "m2", "unknown"])
    fetch.gate.clear()
    first, second = (
        asyncio.ensure_future(reader(["m1", "m3", "unknown"])),
        asyncio.ensure_future(reader(["m2", "m4"])),
    )
    await asyncio.sleep(0)  # both callers have asked; let the one query run
    fetch.gate.set()
    assert await first == {"m1": ROWS["m1"], "m3": ROWS["m3"]}
    assert await second == {"m2": ROWS["m2"], "m4": ROWS["m4"]}
    assert fetch.batches == [["m1", "m2", "unknown"], ["m3", "m4"]]


# --- write-through, against the real backends -------------------------------------------------


async def test_reinforce_shows_in_cached_mentions_at_once(
    backend: str, backend_url: str, tmp_path: Path
) -> None:
    store = await open_backend(backend, tmp_path, backend_url)
    try:
        assert await store.mentions(["m1"]) == {}  # "no row" is now cached
        await store.reinforce("m1", "user:a", NOW, debounce_seconds=0)
        assert await store.mentions(["m1"]) == {"m1": MentionRecord(1, NOW)}
        await store.reinforce("m1", "user:a", NOW + 1, debounce_seconds=0)
        assert await store.mentions(["m1"]) == {"m1": MentionRecord(2, NOW + 1)}
    finally:
        await store.close()


@pytest.mark.parametrize("forget", ["memories", "scope", "everything"])
async def test_forget_drops_cached_mentions_at_once(
    backend: str, backend_url: str, tmp_path: Path, forget: str
) -> None:
    store = await open_backend(backend, tmp_path, backend_url)
    try:
        await store.reinforce("m1", "user:a/run:r", NOW, debounce_seconds=0)
        assert set(await store.mentions(["m1"])) == {"m1"}
        if forget == "memories":
            await store.forget_memories(["m1"])
        elif forget == "scope":
            await store.forget_scope("user:a")
        else:
            await store.forget_everything()
        assert await store.mentions(["m1"]) == {}
    finally:
        await store.close()


async def test_sqlite_serves_cached_mentions_without_reading_the_file(tmp_path: Path) -> None:
    # Only this process writes its file, so a cached row is the truth; a row changed behind
    # its back (which production never does) shows that the answer came from memory.
    store = await SqliteStore.open(tmp_path / "ranker.sqlite3", mention_cache=MentionCache(10))
    try:
        await store.reinforce("m1", "user:a", NOW, debounce_seconds=0)
        assert await store.mentions(["m1", "m2"]) == {"m1": MentionRecord(1, NOW)}
        with closing(sqlite3.connect(tmp_path / "ranker.sqlite3")) as conn, conn:
            conn.execute("UPDATE ranker_mentions SET mentions = 99")
            conn.execute("INSERT INTO ranker_mentions VALUES ('m2', 'user:a', 5, 0)")
        assert await store.mentions(["m1", "m2"]) == {"m1": MentionRecord(1, NOW)}
    finally:
        await store.close()


# --- PostgreSQL replicas ----------------------------------------------------------------------


@asynccontextmanager
async def _replicas(url: str, clock: Clock) -> AsyncIterator[tuple[PostgresStore, PostgresStore]]:
    """Two replicas of an emptied database: `here` caches mentions for TTL seconds of `clock`,
    `other` does not cache."""
    here = await PostgresStore.open(
        url, max_size=2, mention_cache=MentionCache(100, ttl_seconds=TTL, clock=clock)
    )
    other = await PostgresStore.open(url, max_size=2)
    try:
        await other.forget_everything()
        yield here, other
    finally:
        await here.close()
        await other.close()


@pytest.mark.postgres
async def test_another_replicas_reinforce_shows_here_within_the_ttl(ranker_pg_url: str) -> None:
    clock = Clock()
    async with _replicas(ranker_pg_url, clock) as (here, other):
        assert await here.mentions(["m1"]) == {}
        await other.reinforce("m1", "user:a", NOW, debounce_seconds=0)
        clock.advance(TTL - 0.01)
        assert await here.mentions(["m1"]) == {}  # still the cached "no row"
        clock.advance(0.01)
        assert await here.mentions(["m1"]) == {"m1": MentionRecord(1, NOW)}


@pytest.mark.postgres
async def test_another_replicas_forget_shows_here_within_the_ttl(ranker_pg_url: str) -> None:
    clock = Clock()
    async with _replicas(ranker_pg_url, clock) as (here, other):
        await here.reinforce("m1", "user:a", NOW, debounce_seconds=0)
        await other.forget_memories(["m1"])
        assert await here.mentions(["m1"]) == {"m1": MentionRecord(1, NOW)}
        clock.advance(TTL)
        assert await here.mentions(["m1"]) == {}

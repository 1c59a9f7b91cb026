"""Ranker fixtures: a store per backend (real SQLite file, real PostgreSQL), a movable clock.

Stores carry a mention cache as in production unless a test asks for none. On PostgreSQL its
entries live an hour here: long enough that a test relying on them expiring would fail.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from mem0_ranker import Store
from mem0_ranker._mention_cache import MentionCache
from mem0_ranker._postgres import PostgresStore
from mem0_ranker._sqlite import SqliteStore
from tests.support.postgres import temporary_database

#: A fixed "now" (2026-12-02T12:00:00Z) so tests reason about ages in whole days.
NOW = 1_796_212_800.0

BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
]


class Clock:
    """Time the tests move by hand instead of sleeping through windows."""

    def __init__(self, now: float = NOW) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture(scope="session")
def ranker_pg_url() -> Iterator[str]:
    """One PostgreSQL database for the ranker tests; each test empties what it uses."""
    with temporary_database("mem0mcp_ranker", vector=False) as url:
        yield url


async def open_backend(
    backend: str, tmp_path: Path, pg_url: str, *, empty: bool = True, cached: bool = True
) -> Store:
    """Open the backend's store; `empty` clears the shared PostgreSQL database first."""
    if backend == "sqlite":
        cache = MentionCache(1000) if cached else None
        return await SqliteStore.open(tmp_path / "ranker.sqlite3", mention_cache=cache)
    cache = MentionCache(1000, ttl_seconds=3600) if cached else None
    store = await PostgresStore.open(pg_url, max_size=4, mention_cache=cache)
    if empty:
        await store.forget_everything()
    return store


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def backend_url(backend: str, request: pytest.FixtureRequest) -> str:
    """The PostgreSQL URL when the backend is PostgreSQL (resolved lazily), else empty."""
    if backend == "postgres":
        return str(request.getfixturevalue("ranker_pg_url"))
    return ""


@pytest.fixture(params=["cached", "uncached"])
async def store(
    backend: str, backend_url: str, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[Store]:
    opened = await open_backend(backend, tmp_path, backend_url, cached=request.param == "cached")
    yield opened
    await opened.close()

"""Ranker fixtures: a store per backend (real SQLite file, real PostgreSQL), a movable clock."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from mem0_ranker import Store
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


async def open_backend(backend: str, tmp_path: Path, pg_url: str, *, empty: bool = True) -> Store:
    """Open the backend's store; `empty` clears the shared PostgreSQL database first."""
    if backend == "sqlite":
        return await SqliteStore.open(tmp_path / "ranker.sqlite3")
    store = await PostgresStore.open(pg_url, max_size=4)
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


@pytest.fixture
async def store(backend: str, backend_url: str, tmp_path: Path) -> AsyncIterator[Store]:
    opened = await open_backend(backend, tmp_path, backend_url)
    yield opened
    await opened.close()

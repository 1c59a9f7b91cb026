"""Fixtures every test package shares: the anyio backend, the fake LLM, a per-run database;
and the markers of tests that need PostgreSQL or start processes of ours, which `make test-fast`
leaves out."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator

import pytest

# The embedder (torch, in this process and in the services the tests start) on one thread: on 2
# cores shared with the tests' own servers, torch's default pool of one thread per core waits on
# its barriers whenever the other core is busy, and a mem0 add took 240-1070 ms instead of
# 105-220 ms (load average 7-10). Set before anything imports torch; an explicit value wins.
os.environ.setdefault("OMP_NUM_THREADS", "1")

from tests.fakes.llm import FakeLLM
from tests.support import heap
from tests.support.postgres import temporary_database

#: A test using one of these fixtures, directly or through another, is marked `postgres` ...
POSTGRES_FIXTURES = frozenset({"pg_database", "ranker_pg_url"})
#: ... and one using one of these (services started as processes) is marked `subprocess`.
PROCESS_FIXTURES = frozenset({"mem0_process", "ranker_process", "judge_process"})


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        if used & POSTGRES_FIXTURES:
            item.add_marker(pytest.mark.postgres)
        if used & PROCESS_FIXTURES:
            item.add_marker(pytest.mark.subprocess)


def pytest_configure() -> None:
    heap.begin_quiet_imports()  # collection imports the test modules and all they import


@pytest.hookimpl(trylast=True)
def pytest_collection_finish() -> None:
    heap.end_quiet_imports()


def pytest_sessionfinish() -> None:
    heap.release()


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session", autouse=True)
async def _one_event_loop_per_run(anyio_backend: str) -> AsyncIterator[None]:
    """Keep anyio's test runner, and so its event loop, alive for the whole run.

    grpc.aio binds its completion-queue poller to the loop it first runs on; when that loop is
    closed between tests (anyio closes its runner once no async test or fixture holds it), a
    later gRPC call in a new loop fails with "Event loop is closed".
    """
    yield  # noqa: PT022 - the fixture's lifetime, not a teardown, is the point


@pytest.fixture(scope="session")
def _fake_llm_server() -> Iterator[FakeLLM]:
    with FakeLLM() as llm:
        yield llm


@pytest.fixture
def fake_llm(_fake_llm_server: FakeLLM) -> Iterator[FakeLLM]:
    """The session's FakeLLM, with queued failures, latency and recorded requests reset."""
    _fake_llm_server.reset()
    yield _fake_llm_server
    _fake_llm_server.reset()


@pytest.fixture(scope="session")
def pg_database() -> Iterator[str]:
    """URL of a database created for this test run (with `vector`), dropped afterwards."""
    with temporary_database() as url:
        yield url

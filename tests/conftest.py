"""Fixtures every test package shares: the anyio backend, the fake LLM, a per-run database."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from tests.fakes.llm import FakeLLM
from tests.support.postgres import temporary_database


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

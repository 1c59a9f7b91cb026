"""The stacks the bridge tests run against, each started once per session.

In process (the default `stack`): mem0-local's real app on its embedded store with the real
MiniLM embedder, reached through `httpx.ASGITransport`, and the real ranker (SQLite) and judge
servers on loopback gRPC ports, all in this process (`tests.support.inprocess`): no PostgreSQL,
no subprocess. A bridge on it comes from `stack.server(settings)`.

The full stack (`full_stack`): mem0-local on PostgreSQL + pgvector, the ranker and the judge as
real processes (started by `tests.support.stack`, which the benchmarks share). A module whose
tests need it (a bridge process, pgvector's scores) overrides `stack` with it; a test that
should pass on both takes `@pytest.mark.parametrize("stack", BOTH_STACKS, indirect=True)`.
Tests using it are marked `postgres` and `subprocess` (see `tests/conftest.py`).

On either, the only stand-in is the LLM (FakeLLM answering mem0's extraction prompt and the
judge's compare and rewrite prompts). Tests isolate themselves with a fresh mem0 user id, which
also separates their ranker scopes, instead of restarting anything.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator

import pytest
from mcp import Client

from mem0_bridge import BridgeSettings
from tests.fakes.judge_responder import judge_responder
from tests.fakes.llm import FakeLLM, extraction_responder
from tests.support.inprocess import inprocess_stack as start_inprocess_stack
from tests.support.processes import ServiceProcess
from tests.support.stack import (
    RESET_TOKEN,
    Stack,
    stack_of,
    start_judge,
    start_mem0_local,
    start_ranker,
)

# The bridge tests import these from here.
__all__ = ["BOTH_STACKS", "RESET_TOKEN", "Stack", "start_judge", "start_ranker"]

COLLECTION = f"bridge_{uuid.uuid4().hex[:8]}"

#: Run a test in process and again on the full stack (`indirect=True` on `stack`).
BOTH_STACKS = [
    pytest.param("inprocess", id="in-process"),
    pytest.param("full", id="full-stack", marks=[pytest.mark.postgres, pytest.mark.subprocess]),
]


@pytest.fixture(scope="session")
def bridge_llm() -> Iterator[FakeLLM]:
    with FakeLLM(responders=[judge_responder, extraction_responder]) as llm:
        yield llm


@pytest.fixture(scope="session")
async def inprocess_stack(
    bridge_llm: FakeLLM, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Stack]:
    work_dir = tmp_path_factory.mktemp("bridge-in-process")
    async with start_inprocess_stack(bridge_llm, work_dir) as stack:
        yield stack


@pytest.fixture(scope="session")
def mem0_process(
    pg_database: str, bridge_llm: FakeLLM, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServiceProcess]:
    data_dir = tmp_path_factory.mktemp("bridge-mem0")
    with start_mem0_local(pg_database, bridge_llm, data_dir, COLLECTION) as process:
        yield process


@pytest.fixture(scope="session")
def ranker_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    with start_ranker(tmp_path_factory.mktemp("bridge-ranker") / "ranker.sqlite3") as process:
        yield process


@pytest.fixture(scope="session")
def judge_process(bridge_llm: FakeLLM) -> Iterator[ServiceProcess]:
    with start_judge(bridge_llm) as process:
        yield process


@pytest.fixture(scope="session")
def full_stack(
    pg_database: str,
    mem0_process: ServiceProcess,
    ranker_process: ServiceProcess,
    judge_process: ServiceProcess,
    bridge_llm: FakeLLM,
) -> Stack:
    return stack_of(
        pg_database,
        COLLECTION,
        mem0=mem0_process,
        ranker=ranker_process,
        judge=judge_process,
        llm=bridge_llm,
    )


@pytest.fixture
def stack(request: pytest.FixtureRequest) -> Stack:
    """The in-process stack, or the full stack where `BOTH_STACKS` parametrizes it."""
    kind = getattr(request, "param", "inprocess")
    chosen: Stack = request.getfixturevalue(f"{kind}_stack")
    return chosen


@pytest.fixture
def llm(stack: Stack) -> Iterator[FakeLLM]:
    """The stack's fake LLM with failures and recorded requests cleared around the test."""
    fake = stack.llm
    assert isinstance(fake, FakeLLM), "the test stacks run the fake in this process"
    fake.reset()
    yield fake
    fake.reset()


@pytest.fixture
def settings(stack: Stack) -> BridgeSettings:
    """Settings of a bridge on the stack, for a fresh user, in project `alpha`.

    The verdict floors are off: these tests check what the bridge does with the judge's
    verdicts on reworded pairs (cosine 0.60-0.86), which the default floors deliberately keep
    apart in part; `tests/bridge/test_core.py` covers the floors."""
    return stack.settings(
        project="alpha", verdict_similarity_floor=0.0, supersede_similarity_floor=0.0
    )


@pytest.fixture
async def client(stack: Stack, settings: BridgeSettings, llm: FakeLLM) -> AsyncIterator[Client]:
    async with Client(stack.server(settings)) as connected:
        yield connected

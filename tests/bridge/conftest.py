"""The real stack the bridge tests run against, started once per session.

mem0-local (PostgreSQL + pgvector, real MiniLM embedder), the ranker and the judge run as
real processes; the only stand-in is the LLM (FakeLLM answering mem0's extraction prompt and
the judge's compare and rewrite prompts). Tests isolate themselves with a fresh mem0 user id,
which also separates their ranker scopes, instead of restarting anything.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from mcp import Client

from mem0_bridge import BridgeSettings, create_server
from tests.fakes.judge_responder import judge_responder
from tests.fakes.llm import FakeLLM, extraction_responder
from tests.support.processes import ServiceProcess

API_KEY = "bridge-test-api-key"
RESET_TOKEN = "bridge-test-reset-token"  # noqa: S105 - a test fixture value
COLLECTION = f"bridge_{uuid.uuid4().hex[:8]}"
OFFLINE = {"HF_HUB_OFFLINE": "1", "MEM0_TELEMETRY": "false"}


@dataclass(frozen=True)
class Stack:
    mem0_url: str
    #: mem0-local's PostgreSQL database and the table its memories live in.
    database_url: str
    collection: str
    ranker_address: str
    judge_address: str
    llm: FakeLLM

    def settings(self, **overrides: object) -> BridgeSettings:
        """Bridge settings for this stack and a fresh user (so a fresh set of namespaces)."""
        values: dict[str, object] = {
            "api_url": self.mem0_url,
            "api_key": API_KEY,
            "default_user_id": f"user-{uuid.uuid4().hex[:12]}",
            "ranker_address": self.ranker_address,
            "judge_address": self.judge_address,
            "project": None,
            "scope_key": None,
            # Generous on a shared 2-core machine, so that only the tests meant to see a
            # helper degrade ever do; the budget tests set their own.
            "rewrite_budget_ms": 15_000,
            "ranker_timeout_seconds": 15.0,
            **overrides,
        }
        return BridgeSettings.model_validate(values)

    def env(self, settings: BridgeSettings) -> dict[str, str]:
        """The same settings as environment variables, for a bridge subprocess."""
        return {
            "MEM0_API_URL": settings.api_url,
            "MEM0_API_KEY": settings.api_key or "",
            "MEM0_DEFAULT_USER_ID": settings.default_user_id,
            "MEM0_RANKER_ADDRESS": settings.ranker_address,
            "MEM0_JUDGE_ADDRESS": settings.judge_address,
            "MEM0_PROJECT": settings.project or "",
            "MEM0_SCOPE_KEY": settings.scope_key or "",
            "MEM0_REWRITE_BUDGET_MS": str(settings.rewrite_budget_ms),
            "MEM0_RANKER_TIMEOUT_SECONDS": str(settings.ranker_timeout_seconds),
        }


@pytest.fixture(scope="session")
def bridge_llm() -> Iterator[FakeLLM]:
    with FakeLLM(responders=[judge_responder, extraction_responder]) as llm:
        yield llm


@pytest.fixture(scope="session")
def mem0_process(
    pg_database: str, bridge_llm: FakeLLM, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServiceProcess]:
    env = {
        **OFFLINE,
        "MEM0_LOCAL_PORT": "0",
        "MEM0_LOCAL_DATA_DIR": str(tmp_path_factory.mktemp("bridge-mem0")),
        "MEM0_LOCAL_DATABASE_URL": pg_database,
        "MEM0_LOCAL_COLLECTION_NAME": COLLECTION,
        "MEM0_LOCAL_LLM_BASE_URL": bridge_llm.base_url,
        "MEM0_LOCAL_LLM_MODEL": "fake-model",
        "MEM0_LOCAL_LLM_MAX_RETRIES": "0",
        "MEM0_LOCAL_API_KEY": API_KEY,
        "MEM0_LOCAL_RESET_TOKEN": RESET_TOKEN,
    }
    with ServiceProcess(["mem0-local"], env, ready_timeout=180) as process:
        yield process


def start_ranker(db_path: Path) -> ServiceProcess:
    """A ranker that counts every reinforcement (no debounce), so tests can build mentions."""
    env = {
        "RANKER_PORT": "0",
        "RANKER_METRICS_PORT": "-1",
        "RANKER_DB_PATH": str(db_path),
        "RANKER_REINFORCE_DEBOUNCE_SECONDS": "0",
    }
    return ServiceProcess(["mem0-ranker"], env, ready_timeout=60)


def start_judge(llm: FakeLLM) -> ServiceProcess:
    env = {
        "JUDGE_PORT": "0",
        "JUDGE_METRICS_PORT": "-1",
        "JUDGE_LLM_BASE_URL": llm.base_url,
        "JUDGE_LLM_MODEL": "fake-model",
    }
    return ServiceProcess(["mem0-judge"], env, ready_timeout=60)


@pytest.fixture(scope="session")
def ranker_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    with start_ranker(tmp_path_factory.mktemp("bridge-ranker") / "ranker.sqlite3") as process:
        yield process


@pytest.fixture(scope="session")
def judge_process(bridge_llm: FakeLLM) -> Iterator[ServiceProcess]:
    with start_judge(bridge_llm) as process:
        yield process


@pytest.fixture(scope="session")
def stack(
    pg_database: str,
    mem0_process: ServiceProcess,
    ranker_process: ServiceProcess,
    judge_process: ServiceProcess,
    bridge_llm: FakeLLM,
) -> Stack:
    return Stack(
        mem0_url=mem0_process.url,
        database_url=pg_database,
        collection=COLLECTION,
        ranker_address=f"127.0.0.1:{ranker_process.port}",
        judge_address=f"127.0.0.1:{judge_process.port}",
        llm=bridge_llm,
    )


@pytest.fixture
def llm(stack: Stack) -> Iterator[FakeLLM]:
    """The stack's fake LLM with failures and recorded requests cleared around the test."""
    stack.llm.reset()
    yield stack.llm
    stack.llm.reset()


@pytest.fixture
def settings(stack: Stack) -> BridgeSettings:
    """Settings of a bridge on the full stack, for a fresh user, in project `alpha`."""
    return stack.settings(project="alpha")


@pytest.fixture
async def client(settings: BridgeSettings, llm: FakeLLM) -> AsyncIterator[Client]:
    async with Client(create_server(settings)) as connected:
        yield connected

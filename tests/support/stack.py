"""The real stack behind the bridge: mem0-local on pgvector, the ranker and the judge.

Shared by the bridge's full-stack tests (as session fixtures, one process each) and the
benchmarks (all at once, with `running_stack`), so both run the services exactly the same way.
Each service is a real subprocess; the only stand-in is the LLM (a FakeLLM answering mem0's
extraction prompt and the judge's compare and rewrite prompts; in a process of its own on a
benchmark's `temporary_stack`, as a provider would be). `tests.support.inprocess` builds
the same `Stack` in this process, without PostgreSQL or subprocesses.
"""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import httpx
from mcp.server import MCPServer

from mem0_bridge import BridgeSettings, create_server
from tests.fakes.llm_process import FakeLLMProcess
from tests.support.postgres import temporary_database
from tests.support.processes import ServiceProcess, ranker_subprocess

API_KEY = "bridge-test-api-key"
RESET_TOKEN = "bridge-test-reset-token"  # noqa: S105 - a test fixture value
OFFLINE = {"HF_HUB_OFFLINE": "1", "MEM0_TELEMETRY": "false"}


class LLMServer(Protocol):
    """What the stack needs of its fake LLM: where it answers, and its latency (a benchmark's
    slow round sets it). `FakeLLM` in this process, or `FakeLLMProcess`."""

    latency_seconds: float

    @property
    def base_url(self) -> str: ...


@dataclass(frozen=True)
class Stack:
    mem0_url: str
    #: mem0-local's PostgreSQL database and the table its memories live in.
    database_url: str
    collection: str
    ranker_address: str
    judge_address: str
    llm: LLMServer
    #: In process (`tests.support.inprocess`): mem0-local's ASGI app, which `server` and
    #: `mem0_transport` reach without a socket; None when mem0-local is a process at `mem0_url`.
    mem0_app: Any = None

    @property
    def in_process(self) -> bool:
        return self.mem0_app is not None

    def mem0_transport(self) -> httpx.AsyncBaseTransport | None:
        """How a bridge reaches this stack's mem0: None means over HTTP at `mem0_url`."""
        if self.mem0_app is None:
            return None
        # Like a real server, an unhandled error is a 500 answer, not an exception in the caller.
        return httpx.ASGITransport(app=self.mem0_app, raise_app_exceptions=False)

    def server(self, settings: BridgeSettings) -> MCPServer[Any]:
        """The bridge (`create_server`) with `settings`, wired to this stack's mem0."""
        return create_server(settings, mem0_transport=self.mem0_transport())

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
            "verdict_budget_ms": 15_000,
            "ranker_timeout_seconds": 15.0,
            "reset_token": RESET_TOKEN,
            **overrides,
        }
        return BridgeSettings.model_validate(values)

    def env(self, settings: BridgeSettings) -> dict[str, str]:
        """The same settings as environment variables, for a bridge subprocess."""
        if self.in_process:
            raise RuntimeError("a bridge subprocess cannot reach the in-process stack's mem0")
        return {
            "MEM0_API_URL": settings.api_url,
            "MEM0_API_KEY": settings.api_key or "",
            "MEM0_DEFAULT_USER_ID": settings.default_user_id,
            "MEM0_RANKER_ADDRESS": settings.ranker_address,
            "MEM0_JUDGE_ADDRESS": settings.judge_address,
            "MEM0_PROJECT": settings.project or "",
            "MEM0_SCOPE_KEY": settings.scope_key or "",
            "MEM0_REWRITE_BUDGET_MS": str(settings.rewrite_budget_ms),
            "MEM0_VERDICT_BUDGET_MS": str(settings.verdict_budget_ms),
            "MEM0_RANKER_TIMEOUT_SECONDS": str(settings.ranker_timeout_seconds),
            "MEM0_RESET_TOKEN": settings.reset_token or "",
        }


def start_mem0_local(
    database_url: str,
    llm: LLMServer,
    data_dir: Path,
    collection: str,
    extra_env: Mapping[str, str] | None = None,
    *,
    command: Sequence[str] = ("mem0-local",),
) -> ServiceProcess:
    """mem0-local on `database_url` (pgvector), its LLM the fake, with an API and reset key;
    `extra_env` adds or overrides `MEM0_LOCAL_*` variables (the eval's test clock), and
    `command` runs another entry point of it (the profiler's timed one)."""
    env = {
        **OFFLINE,
        "MEM0_LOCAL_PORT": "0",
        "MEM0_LOCAL_DATA_DIR": str(data_dir),
        "MEM0_LOCAL_DATABASE_URL": database_url,
        "MEM0_LOCAL_COLLECTION_NAME": collection,
        "MEM0_LOCAL_LLM_BASE_URL": llm.base_url,
        "MEM0_LOCAL_LLM_MODEL": "fake-model",
        "MEM0_LOCAL_LLM_MAX_RETRIES": "0",
        "MEM0_LOCAL_API_KEY": API_KEY,
        "MEM0_LOCAL_RESET_TOKEN": RESET_TOKEN,
        **(extra_env or {}),
    }
    return ServiceProcess(command, env, ready_timeout=180)


def start_ranker(
    db_path: Path, *, port: int = 0, settings: Mapping[str, str] | None = None
) -> ServiceProcess:
    """A ranker that counts every reinforcement (no debounce), so tests can build mentions;
    `port` 0 picks a free one (a fixed port restarts a killed ranker where the bridge expects
    it), and `settings` adds or overrides `RANKER_*` variables."""
    return ranker_subprocess(
        **{
            "RANKER_PORT": str(port),
            "RANKER_METRICS_PORT": "-1",
            "RANKER_DB_PATH": str(db_path),
            "RANKER_REINFORCE_DEBOUNCE_SECONDS": "0",
            **(settings or {}),
        }
    )


def start_judge(llm: LLMServer, *, port: int = 0) -> ServiceProcess:
    """The judge on `llm`; `port` 0 picks a free one, a fixed one restarts a killed judge."""
    env = {
        "JUDGE_PORT": str(port),
        "JUDGE_METRICS_PORT": "-1",
        "JUDGE_LLM_BASE_URL": llm.base_url,
        "JUDGE_LLM_MODEL": "fake-model",
    }
    return ServiceProcess(["mem0-judge"], env, ready_timeout=60)


def stack_of(
    database_url: str,
    collection: str,
    *,
    mem0: ServiceProcess,
    ranker: ServiceProcess,
    judge: ServiceProcess,
    llm: LLMServer,
) -> Stack:
    return Stack(
        mem0_url=mem0.url,
        database_url=database_url,
        collection=collection,
        ranker_address=f"127.0.0.1:{ranker.port}",
        judge_address=f"127.0.0.1:{judge.port}",
        llm=llm,
    )


@contextmanager
def running_stack(database_url: str, work_dir: Path, llm: LLMServer) -> Iterator[Stack]:
    """Start mem0-local, the ranker and the judge together (for benchmarks); stop them after."""
    collection = f"stack_{uuid.uuid4().hex[:8]}"
    (work_dir / "mem0").mkdir(parents=True, exist_ok=True)
    with ExitStack() as processes:
        mem0 = processes.enter_context(
            start_mem0_local(database_url, llm, work_dir / "mem0", collection)
        )
        ranker = processes.enter_context(start_ranker(work_dir / "ranker.sqlite3"))
        judge = processes.enter_context(start_judge(llm))
        yield stack_of(database_url, collection, mem0=mem0, ranker=ranker, judge=judge, llm=llm)


@contextmanager
def temporary_stack(prefix: str = "mem0mcp_bench") -> Iterator[Stack]:
    """The whole stack on a fresh database and directory with its own FakeLLM process, all
    removed after (what a benchmark runs against)."""
    with (
        temporary_database(prefix) as database_url,
        tempfile.TemporaryDirectory() as work_dir,
        FakeLLMProcess() as llm,
        running_stack(database_url, Path(work_dir), llm) as stack,
    ):
        yield stack

"""Replaying the dataset through the real local stack and asking its queries three ways.

The stack: mem0-local (real mem0ai, the local MiniLM embedder, pgvector in a throwaway
database, infer off: statements are stored as said), the ranker (SQLite in a temporary
directory), a judge per configuration (none; `mem0-judge` over the deterministic fake LLM of
`tests/fakes`; `mem0-judge` over the oracle fake, whose verdicts come from the dataset's own
labels, a judge that is never wrong, for the ceiling; `mem0-judge` over the real endpoint in
`JUDGE_LLM_BASE_URL`/`JUDGE_LLM_MODEL`),
and `mem0-bridge` subprocesses over streamable HTTP, called with the official MCP client. The
services are started with the helpers of `tests/support/stack.py`, as the tests start them.

mem0-local and the ranker read "now" from one test-clock file (`ClockFile`): each statement is
added through the bridge's `memory_add` (so reconciliation happens) with the clock at its
time, and the queries are asked with the clock at the dataset's query time. Each judge gets
its own mem0 user (so its own store) on the same services.

Systems compared, over the same store and the same scope (the query's project + global):
- `mem0_raw`: mem0-local's POST /search, top 10;
- `bridge_rerank`: the bridge's `memory_search` with query rewriting off;
- `bridge_rerank_rewrite`: the same with rewriting on (needs a judge; without one it equals
  `bridge_rerank`, and is still reported so every table has the same rows). A search uses a
  question's rewrite only when it is at hand (kept from an earlier search, or back before the
  question's own search is); here each question is asked once, so the bridge is told to wait
  for it (`MEM0_REWRITE_WAIT_MS`), which measures what the rewrite does to recall.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
from mcp import Client

from bench._mcp import call_tool
from bench.eval._dataset import GLOBAL, Dataset, Query
from bench.eval._metrics import CUTOFF, Attribution, Owner, StoredMemory, first_relevant
from bench.eval._progress import ProgressBar
from mem0_bridge import BridgeSettings
from mem0_bridge._lifetime import FOLDED_INTO, SUPERSEDED_BY
from tests.fakes.judge_responder import judge_responder
from tests.fakes.llm import FakeLLM, extraction_responder
from tests.fakes.oracle_judge import oracle_judge_responder
from tests.support.postgres import temporary_database
from tests.support.processes import ServiceProcess
from tests.support.stack import API_KEY, Stack, start_judge, start_mem0_local, start_ranker

SYSTEMS = ("mem0_raw", "bridge_rerank", "bridge_rerank_rewrite")
JUDGES = ("none", "fake", "oracle", "real")
#: Concurrent searches while asking (the clock stands still then); replay is strictly serial.
CONCURRENCY = 4
#: The bridge's default over-fetch, used unless a sweep says otherwise.
DEFAULT_OVERFETCH: int = BridgeSettings.model_fields["search_overfetch"].default


class ClockFile:
    """The test clock mem0-local and the ranker read (`*_TEST_CLOCK_FILE`): epoch seconds."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def set(self, moment: datetime) -> None:
        # Written beside and renamed over, so a reader never sees a half-written number.
        scratch = self.path.with_suffix(".tmp")
        scratch.write_text(f"{moment.timestamp():.6f}\n")
        scratch.replace(self.path)


@dataclass
class Services:
    """The long-lived part of the stack, shared by every judge's replay."""

    stack: Stack
    clock: ClockFile
    work_dir: Path
    ranker_db: Path
    judge_addresses: dict[str, str]

    def bridge_env(
        self,
        *,
        user_id: str,
        judge: str,
        rewrite: bool,
        overfetch: int = DEFAULT_OVERFETCH,
        ranker_address: str | None = None,
    ) -> dict[str, str]:
        settings = self.stack.settings(
            default_user_id=user_id,
            judge_address=self.judge_addresses.get(judge, ""),
            ranker_address=ranker_address or self.stack.ranker_address,
        )
        return {
            **self.stack.env(settings),
            "MEM0_TRANSPORT": "http",
            "MEM0_HTTP_PORT": "0",
            "MEM0_QUERY_REWRITE": "1" if rewrite else "0",
            # Wait for a question's rewrite as long as its budget allows.
            "MEM0_REWRITE_WAIT_MS": str(settings.rewrite_budget_ms),
            "MEM0_INFER": "0",
            "MEM0_TEST_CLOCK_FILE": str(self.clock.path),
            "MEM0_SEARCH_OVERFETCH": str(overfetch),
            "MEM0_LOG_LEVEL": "WARNING",
        }


def real_judge_configured() -> bool:
    return bool(os.environ.get("JUDGE_LLM_BASE_URL") and os.environ.get("JUDGE_LLM_MODEL"))


def labels(dataset: Dataset) -> dict[str, set[Owner]]:
    """Every statement's text with the (fact, value) it states, for the oracle judge."""
    found: dict[str, set[Owner]] = {}
    for event in dataset.events:
        found.setdefault(event.text, set()).add((event.fact, event.value))
    return found


@contextmanager
def running_services(
    dataset: Dataset, judges: Sequence[str], oracle_error_rate: float = 0.0
) -> Iterator[Services]:
    """mem0-local, the ranker and the judges `judges` needs, on a fresh database and directory,
    all with the test clock; everything stopped and removed afterwards. The oracle judge is
    wrong on `oracle_error_rate` of the pairs it is asked about (`tests/fakes/oracle_judge.py`).
    """
    with ExitStack() as stack:
        database_url = stack.enter_context(temporary_database("mem0mcp_eval"))
        work_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mem0mcp-eval-")))
        clock = ClockFile(work_dir / "clock")
        clock.set(dataset.events[0].time if dataset.events else dataset.query_time)
        llm = stack.enter_context(FakeLLM(responders=[judge_responder, extraction_responder]))
        collection = f"eval_{uuid.uuid4().hex[:8]}"
        (work_dir / "mem0").mkdir()
        mem0 = stack.enter_context(
            start_mem0_local(
                database_url,
                llm,
                work_dir / "mem0",
                collection,
                {"MEM0_LOCAL_TEST_CLOCK_FILE": str(clock.path), "MEM0_LOCAL_LOG_LEVEL": "WARNING"},
            )
        )
        ranker_db = work_dir / "ranker.sqlite3"
        ranker = stack.enter_context(
            start_ranker(ranker_db, settings={"RANKER_TEST_CLOCK_FILE": str(clock.path)})
        )
        addresses: dict[str, str] = {}
        if "fake" in judges:
            addresses["fake"] = f"127.0.0.1:{stack.enter_context(start_judge(llm)).port}"
        if "oracle" in judges:
            oracle = stack.enter_context(
                FakeLLM(
                    responders=[
                        oracle_judge_responder(labels(dataset), oracle_error_rate),
                        extraction_responder,
                    ]
                )
            )
            addresses["oracle"] = f"127.0.0.1:{stack.enter_context(start_judge(oracle)).port}"
        if "real" in judges:
            real = ServiceProcess(
                ["mem0-judge"], {"JUDGE_PORT": "0", "JUDGE_METRICS_PORT": "-1"}, ready_timeout=60
            )
            addresses["real"] = f"127.0.0.1:{stack.enter_context(real).port}"
        yield Services(
            stack=Stack(
                mem0_url=mem0.url,
                database_url=database_url,
                collection=collection,
                ranker_address=f"127.0.0.1:{ranker.port}",
                judge_address=addresses.get("fake", ""),
                llm=llm,
            ),
            clock=clock,
            work_dir=work_dir,
            ranker_db=ranker_db,
            judge_addresses=addresses,
        )


@contextmanager
def bridge_process(env: Mapping[str, str]) -> Iterator[str]:
    """A `mem0-bridge` over streamable HTTP; yields the /mcp URL it announces."""
    with ServiceProcess(["mem0-bridge"], env, ready_timeout=60) as process:
        yield process.url


#: One search: the query -> (memory id, namespace, text) best first.
Searcher = Callable[[Query], Awaitable[list[StoredMemory]]]


def bridge_searcher(client: Client) -> Searcher:
    async def search(query: Query) -> list[StoredMemory]:
        found = await call_tool(
            client,
            "memory_search",
            query=query.text,
            scope="project",
            project=query.project,
            limit=CUTOFF,
        )
        return [
            StoredMemory(str(h["id"]), str(h.get("namespace") or ""), str(h["text"]))
            for h in found["hits"]
        ]

    return search


def _filters(user_id: str, project: str) -> dict[str, Any]:
    """The bridge's own filter for project scope: the project and global, in one search."""
    return {"user_id": user_id, "OR": [{"run_id": project}, {"run_id": GLOBAL}]}


def raw_searcher(http: httpx.AsyncClient, user_id: str) -> Searcher:
    async def search(query: Query) -> list[StoredMemory]:
        body = {"query": query.text, "filters": _filters(user_id, query.project), "top_k": CUTOFF}
        response = await http.post("/search", json=body)
        response.raise_for_status()
        return [_stored(item) for item in response.json()["results"]]

    return search


def _stored(item: Mapping[str, Any]) -> StoredMemory:
    metadata = item.get("metadata") or {}
    current = not (metadata.get(SUPERSEDED_BY) or metadata.get(FOLDED_INTO))
    return StoredMemory(
        str(item["id"]), str(item.get("run_id") or ""), str(item["memory"]), current
    )


def mem0_client(services: Services) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        base_url=services.stack.mem0_url, headers={"X-API-Key": API_KEY}, timeout=60
    )


@dataclass
class Replayed:
    """What the replay of one judge's store left behind."""

    user_id: str
    owners_by_id: dict[str, Owner] = field(default_factory=dict)
    actions: Counter[str] = field(default_factory=Counter)
    #: Adds counted as a mention of a memory they were kept apart from ("restates"), and how
    #: many of those memories held another fact than the statement.
    echoes: int = 0
    echoes_to_another_fact: int = 0
    seconds: float = 0.0


async def replay(
    client: Client, dataset: Dataset, clock: ClockFile, user_id: str, label: str
) -> Replayed:
    """Every statement through `memory_add`, in order, with the clock at its time."""
    result = Replayed(user_id)
    bar = ProgressBar(f"{label}: replay", len(dataset.events))
    started = time.monotonic()
    for event in dataset.events:
        clock.set(event.time)
        arguments: dict[str, Any] = {"text": event.text, "scope": "global"}
        if event.scope != GLOBAL:
            arguments = {"text": event.text, "scope": "project", "project": event.scope}
        added = await call_tool(client, "memory_add", **arguments)
        action = str(added.get("action"))
        result.actions[action] += 1
        restated = added.get("restates")
        if restated is not None:
            result.echoes += 1
            owner = result.owners_by_id.get(str(restated))
            result.echoes_to_another_fact += owner is None or owner[0] != event.fact
        if action in {"added", "updated"}:
            for memory_id in added.get("memory_ids", []):
                result.owners_by_id[str(memory_id)] = (event.fact, event.value)
        bar.advance()
    bar.close()
    result.seconds = time.monotonic() - started
    return result


async def ask(
    dataset: Dataset,
    searchers: Mapping[str, Searcher],
    attribution: Attribution,
    label: str,
) -> dict[str, list[list[StoredMemory]]]:
    """Every query of every system, a few at a time; results per system in query order."""
    results: dict[str, list[list[StoredMemory]]] = {
        name: [[] for _ in dataset.queries] for name in searchers
    }
    bar = ProgressBar(f"{label}: queries", len(dataset.queries) * len(searchers))
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(name: str, index: int, query: Query) -> None:
        async with gate:
            results[name][index] = await searchers[name](query)
        bar.advance()

    await asyncio.gather(
        *(one(name, i, q) for i, q in enumerate(dataset.queries) for name in searchers)
    )
    bar.close()
    return results


def gold_ranks(
    dataset: Dataset, found: Sequence[Sequence[StoredMemory]], attribution: Attribution
) -> list[int | None]:
    """Per query, the rank of the first result holding its gold fact's current value."""
    current = {f.id: f.current for f in dataset.facts}
    return [
        first_relevant([attribution.owner(m) == (q.gold, current[q.gold]) for m in hits][:CUTOFF])
        for q, hits in zip(dataset.queries, found, strict=True)
    ]


def leaks(queries: Sequence[Query], found: Sequence[Sequence[StoredMemory]]) -> list[bool]:
    """Per query, whether any result lives outside the query's project and global."""
    return [
        any(m.namespace not in (q.project, GLOBAL) for m in hits)
        for q, hits in zip(queries, found, strict=True)
    ]


async def list_store(http: httpx.AsyncClient, user_id: str) -> list[StoredMemory]:
    """Every memory of the user, all namespaces (mem0 caps a listing at 1000)."""
    response = await http.get("/memories", params={"user_id": user_id, "top_k": 1000})
    response.raise_for_status()
    items = response.json()["results"]
    if len(items) >= 1000:
        raise RuntimeError("the store holds 1000+ memories: the listing is cut, counts are wrong")
    return [_stored(item) for item in items]

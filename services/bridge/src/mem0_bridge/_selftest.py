"""`mem0-bridge selftest`: a live smoke test of the configured mem0 server and helpers.

It answers "does this deployment work?" the way an agent would find out, through the same
memory service the tools use, so a passing selftest means the tools will work: add a fact,
add it again (must not pile up), recall it with a question, list, update, read its history,
delete. It works in a throwaway namespace (`selftest-<uuid>`, a scope key) and deletes
whatever it stored there even when a step fails. The ranker and judge are optional helpers:
one that is down is a warning, as it is for the tools (they degrade, they do not fail).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

import httpx

from mem0_bridge._errors import BridgeError
from mem0_bridge._grpc import PeerFailure
from mem0_bridge._judge import JudgeClient
from mem0_bridge._mem0 import LIST_CAP, Mem0Client, Mem0Error
from mem0_bridge._ranker import RankerClient
from mem0_bridge._service import MemoryService, Where
from mem0_bridge._settings import BridgeSettings

Status = Literal["PASS", "FAIL", "WARN", "SKIP"]

FACT = "The billing service listens on port 48123."
QUESTION = "Which port does the billing service use?"
UPDATED_FACT = "The billing service listens on port 48124."
#: How many hits the recall step reads; the fact is alone in its namespace, so 5 is ample.
SEARCH_LIMIT = 5


class CheckError(Exception):
    """A step ran but its outcome was wrong; the message says what was expected."""


@dataclass(frozen=True)
class Step:
    name: str
    status: Status
    seconds: float
    detail: str
    #: A required step failing fails the selftest; helper checks only warn.
    required: bool = True


@dataclass
class SelftestReport:
    target: str
    namespace: str
    user_id: str
    steps: list[Step] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.steps) and all(s.status != "FAIL" for s in self.steps)

    def render(self) -> str:
        width = max(len(s.name) for s in self.steps) if self.steps else 0
        lines = [
            f"mem0-bridge selftest against {self.target} "
            f"(user {self.user_id}, namespace {self.namespace})"
        ]
        for s in self.steps:
            timing = f"{s.seconds * 1000:8.0f} ms" if s.status != "SKIP" else " " * 11
            lines.append(f"  {s.status:<4}  {s.name:<{width}}  {timing}  {s.detail}")
        required = [s for s in self.steps if s.required]
        passed = sum(s.status == "PASS" for s in required)
        warnings = sum(s.status == "WARN" for s in self.steps)
        verdict = "OK" if self.ok else "FAILED"
        lines.append(
            f"selftest {verdict}: {passed}/{len(required)} required steps passed, "
            f"{warnings} warning{'s' if warnings != 1 else ''}"
        )
        return "\n".join(lines)


class _Run:
    """One selftest run: the steps so far, and whether a failure stops the rest."""

    def __init__(self, report: SelftestReport) -> None:
        self.report = report
        self.failed = False

    async def step(self, name: str, action: Callable[[], Awaitable[str]]) -> bool:
        """Run a required step (skipped after a failure); True when it passed."""
        if self.failed:
            self.report.steps.append(Step(name, "SKIP", 0.0, "skipped: an earlier step failed"))
            return False
        started = time.perf_counter()
        try:
            detail = await action()
        except (CheckError, BridgeError, Mem0Error) as exc:
            status: Status = "FAIL"
            detail = str(exc)
        except Exception as exc:  # a selftest reports, it does not crash with a traceback
            status = "FAIL"
            detail = f"unexpected {type(exc).__name__}: {exc}"
        else:
            status = "PASS"
        self.report.steps.append(Step(name, status, time.perf_counter() - started, detail))
        self.failed = self.failed or status == "FAIL"
        return status == "PASS"

    def note(self, name: str, status: Status, seconds: float, detail: str) -> None:
        self.report.steps.append(Step(name, status, seconds, detail, required=False))


async def _probe_helper(run: _Run, client: RankerClient | JudgeClient, without: str) -> None:
    started = time.perf_counter()
    state = await client.peer.probe()
    seconds = time.perf_counter() - started
    name = f"{client.peer.name} reachable"
    if state == "serving":
        run.note(name, "PASS", seconds, f"serving at {client.peer.address}")
    elif state == "off":
        run.note(name, "WARN", seconds, f"off (address empty): {without}")
    elif state == "not serving":
        run.note(name, "WARN", seconds, f"answers but reports NOT_SERVING: {without}")
    else:
        run.note(name, "WARN", seconds, f"{state} at {client.peer.address}: {without}")


def _with_notes(detail: str, notes: list[str]) -> str:
    return detail + "".join(f"; note: {n}" for n in notes)


class _Steps:
    """The required steps, each an async method returning what it found (or raising)."""

    def __init__(self, service: MemoryService, namespace: str) -> None:
        self.service = service
        self.mem0 = service.mem0
        self.namespace = namespace
        self.where = Where(key=namespace, project=None)
        #: Memory ids stored so far, the first being the fact under test.
        self.stored: list[str] = []

    async def reach_mem0(self) -> str:
        await self.mem0.ping()
        return f"answers at {self.mem0.base_url}"

    async def add(self) -> str:
        result = await self.service.add(FACT, "project", self.where)
        self.stored.extend(result.memory_ids)
        if result.action != "added" or not result.memory_ids:
            raise CheckError(
                f"expected the fact to be added, mem0 answered {result.action!r} (with an LLM "
                "that extracts nothing, try MEM0_INFER=0 to check the rest)"
            )
        return _with_notes(f"added {result.memory_ids[0]}", result.notes)

    async def add_again(self) -> str:
        result = await self.service.add(FACT, "project", self.where)
        self.stored.extend(i for i in result.memory_ids if i not in self.stored)
        if result.action not in ("duplicate", "reinforced", "unchanged"):
            raise CheckError(
                f"the same fact added twice was {result.action!r}; expected duplicate, "
                "reinforced or unchanged (memories would pile up)"
            )
        return _with_notes(result.action, result.notes)

    async def search(self) -> str:
        result = await self.service.search(QUESTION, "project", SEARCH_LIMIT, self.where)
        ids = [hit.id for hit in result.hits]
        if self.stored[0] not in ids:
            raise CheckError(f"{QUESTION!r} did not find the fact (hits: {ids or 'none'})")
        rank = ids.index(self.stored[0]) + 1
        how = f"rewritten to {result.rewritten_query!r}" if result.rewritten_query else "as asked"
        order = "reranked" if result.reranked else "mem0 order"
        return _with_notes(f"found at rank {rank} ({how}, {order})", result.notes)

    async def list(self) -> str:
        result = await self.service.list_scope("project", LIST_CAP, self.where)
        if self.stored[0] not in [hit.id for hit in result.hits]:
            raise CheckError(f"the fact is missing from the listing of {self.namespace}")
        return f"{len(result.hits)} listed"

    async def update(self) -> str:
        await self.service.update(self.stored[0], UPDATED_FACT, self.where)
        now = await self.mem0.get(self.stored[0])
        if now is None or now.text != UPDATED_FACT:
            raise CheckError(f"after the update mem0 returns {now.text if now else None!r}")
        return "text replaced, same id"

    async def history(self) -> str:
        result = await self.service.history(self.stored[0], self.where)
        events = [e.event.upper() for e in result.events]
        if "ADD" not in events or "UPDATE" not in events:
            raise CheckError(f"expected ADD and UPDATE events, got {events}")
        return " -> ".join(events)

    async def delete(self) -> str:
        await self.service.delete(self.stored[0], self.where)
        if await self.mem0.get(self.stored[0]) is not None:
            raise CheckError("the memory is still there after the delete")
        return "deleted, lookup finds nothing"


async def run_selftest(
    settings: BridgeSettings,
    *,
    mem0_transport: httpx.AsyncBaseTransport | None = None,
) -> SelftestReport:
    """Run every step against the configured servers; never raises for a failing server."""
    namespace = f"selftest-{uuid.uuid4().hex[:12]}"
    run = _Run(SelftestReport(settings.api_url, namespace, settings.default_user_id))
    mem0 = Mem0Client(settings, transport=mem0_transport)
    ranker = RankerClient(settings.ranker_address, settings.ranker_timeout_seconds)
    judge = JudgeClient(settings.judge_address, settings.judge_timeout_seconds)
    steps = _Steps(MemoryService(settings, mem0, ranker, judge), namespace)
    try:
        reached = await run.step("mem0 reachable", steps.reach_mem0)
        await _probe_helper(run, ranker, "searches use mem0's order, adds skip dedupe")
        await _probe_helper(run, judge, "adds are not reconciled, questions not rewritten")
        await _reconciling(run, ranker)
        try:
            await run.step("add", steps.add)
            await run.step("add again", steps.add_again)
            await run.step("search (question)", steps.search)
            await run.step("list", steps.list)
            await run.step("update", steps.update)
            await run.step("history", steps.history)
            await run.step("delete", steps.delete)
        finally:
            if reached:
                await _cleanup(run, steps)
            else:
                run.report.steps.append(Step("cleanup", "SKIP", 0.0, "nothing was stored"))
    finally:
        await mem0.aclose()
        await ranker.aclose()
        await judge.aclose()
    return run.report


async def _reconciling(run: _Run, ranker: RankerClient) -> None:
    """How many adds await a verdict (stored while the judge could not answer)."""
    started = time.perf_counter()
    stats = await ranker.stats()
    seconds = time.perf_counter() - started
    if isinstance(stats, PeerFailure):
        run.note("reconcile queue", "SKIP", seconds, stats.note("the queue was not read"))
        return
    run.note(
        "reconcile queue",
        "PASS",
        seconds,
        f"{stats.pending} add(s) stored without a verdict await reconciling"
        + ("" if stats.pending == 0 else " (settled in the background once the judge answers)"),
    )


async def _cleanup(run: _Run, steps: _Steps) -> None:
    """Delete everything in the throwaway namespace, whatever the steps left behind."""
    service = steps.service
    started = time.perf_counter()
    try:
        left = await service.mem0.list_memories(
            user_id=service.user_id, run_id=steps.namespace, top_k=LIST_CAP
        )
        for memory in left:
            await service.mem0.delete(memory.id)
        ids = {m.id for m in left} | set(steps.stored)
        if ids:
            await service.ranker.forget(sorted(ids))
    except Mem0Error as exc:
        detail = f"{exc} (left in namespace {steps.namespace})"
        run.report.steps.append(Step("cleanup", "FAIL", time.perf_counter() - started, detail))
        return
    detail = f"removed {len(left)} left-over memor{'y' if len(left) == 1 else 'ies'}"
    run.report.steps.append(Step("cleanup", "PASS", time.perf_counter() - started, detail))


def main(settings: BridgeSettings) -> int:
    """The CLI entry: print the report; exit status 0 only when every required step passed."""
    report = asyncio.run(run_selftest(settings))
    print(report.render())  # noqa: T201 - the report is the command's output
    return 0 if report.ok else 1

"""Run the load-and-fault scenarios against the real stack, check the store, report.

One stack serves every run (mem0-local and its embedder take long to start); each run gets a
fresh bridge process, a fresh mem0 user (so fresh namespaces and ranker scopes) and a fact
vocabulary no earlier run used (so no judge cache or dedupe record carries over).

After the clients stop and the store settles (every service up again), each acknowledged fact
is asked about once more through the bridge (`memory_search`, as an agent would), and the
history of memory ids whose acknowledged value no stored memory holds any more is read from
mem0 (`GET /memories/{id}/history`); `bench.load.checker` judges all of it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx

from bench._cpu import CpuWindow
from bench._mcp import call_tool, http_bridge
from bench._report import RESULTS_DIR, format_table, progress, summarize, write_result
from bench.load.checker import CheckResult, FactSpec, Stored, check, history_wanted
from bench.load.facts import NEW_TEMPLATES, Fact, fact_pool
from bench.load.workload import (
    CALL_TIMEOUT_SECONDS,
    COLLISION_CHANCE,
    NEW_STYLE_SHARE,
    OP_WEIGHTS,
    PROTOCOLS,
    SEARCH_LIMIT,
    Recorder,
    StartGate,
    Workload,
    search_hits,
)
from mem0_bridge import BridgeSettings
from tests.fakes.judge_responder import judge_responder
from tests.fakes.llm import FakeLLM, extraction_responder
from tests.support.postgres import temporary_database
from tests.support.processes import ServiceProcess
from tests.support.stack import Stack, stack_of, start_judge, start_mem0_local, start_ranker

SCENARIOS = ("none", "judge", "llm", "ranker")
PROJECTS = ("load-api", "load-web", "load-db", "load-ops")
#: mem0-local's REST server caps GET /memories at this many items.
LIST_CAP = 1000
#: Facts in the pool per client: enough that changes of one fact rarely queue behind another.
FACTS_PER_CLIENT = 2
MIN_FACTS = 64
MAX_SHOWN_VIOLATIONS = 8
#: MCP sessions asking about every fact after the run, and tries per fact.
FINAL_SEARCH_CLIENTS = 4
FINAL_SEARCH_TRIES = 2
#: The metadata keys of a fact's lifetime (lifetime contract): a change to any is a change.
#: `unjudged` among them: most reconciles settle a value as a fact of its own, clearing only it.
LIFETIME_KEYS = ("superseded_by", "folded_into", "restates", "valid_until", "unjudged")


class Services:
    """mem0-local, the ranker and the judge; the ranker and judge can be killed and restarted
    on their own ports (where the bridge keeps calling), the fake LLM made to fail."""

    def __init__(self, database_url: str, work_dir: Path, llm: FakeLLM) -> None:
        self.llm = llm
        self.ranker_db = work_dir / "ranker.sqlite3"
        collection = f"load_{uuid.uuid4().hex[:8]}"
        (work_dir / "mem0").mkdir(parents=True, exist_ok=True)
        self.mem0 = start_mem0_local(database_url, llm, work_dir / "mem0", collection)
        self.ranker: ServiceProcess | None = None
        self.judge: ServiceProcess | None = None
        try:
            self.ranker = start_ranker(self.ranker_db)
            self.judge = start_judge(llm)
        except BaseException:
            self.close()
            raise
        self.stack: Stack = stack_of(
            database_url, collection, mem0=self.mem0, ranker=self.ranker, judge=self.judge, llm=llm
        )
        self.ports = {"ranker": self.ranker.port, "judge": self.judge.port}

    def kill(self, target: str) -> None:
        """Take `target` down hard: SIGKILL for a process, every LLM call a 500 for the LLM."""
        if target == "llm":
            self.llm.set_failure("error500")
        elif target == "ranker" and self.ranker is not None:
            self.ranker.kill()
        elif target == "judge" and self.judge is not None:
            self.judge.kill()

    def restart(self, target: str) -> None:
        """Bring `target` back on the port it had (blocks until it announces readiness)."""
        if target == "llm":
            self.llm.set_failure(None)
        elif target == "ranker":
            self.ranker = start_ranker(self.ranker_db, port=self.ports["ranker"])
        elif target == "judge":
            self.judge = start_judge(self.llm, port=self.ports["judge"])

    def fault(self, target: str) -> Fault:
        """Taking `target` down and bringing it back, for `inject_fault`."""
        return Fault(target, lambda: self.kill(target), lambda: self.restart(target))

    def close(self) -> None:
        for process in (self.judge, self.ranker, self.mem0):
            if process is not None:
                process.stop()


@contextmanager
def running_services() -> Iterator[Services]:
    with (
        temporary_database("mem0mcp_load") as database_url,
        tempfile.TemporaryDirectory() as work_dir,
        FakeLLM(responders=[judge_responder, extraction_responder]) as llm,
    ):
        services = Services(database_url, Path(work_dir), llm)
        try:
            yield services
        finally:
            services.close()


@dataclass
class Options:
    seconds: float
    fault_at: float
    fault_for: float
    settle_max: float
    quiet: float
    seed: int
    #: Share of changes, change-backs and restatements worded in the new style.
    new_style_share: float = NEW_STYLE_SHARE


@dataclass
class Settled:
    stored: list[Stored]
    #: Seconds from the end of the run to the last change seen in the store.
    seconds: float
    stable: bool
    truncated: bool
    polls: int = 0


@dataclass
class FaultWindow:
    target: str
    events: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Fault:
    """A part of the deployment taken down mid-run: `down()` (blocking, run in a thread), then
    `up()` once the outage is over; without `up` it stays down for the rest of the run."""

    target: str
    down: Callable[[], object]
    up: Callable[[], object] | None = None


@dataclass(frozen=True)
class Target:
    """What a run drives: a bridge's /mcp URL (one bridge, or a load balancer in front of
    replicas), the mem0 server behind it (read directly to check the store), and the mem0 user
    the bridge writes as (its MEM0_DEFAULT_USER_ID)."""

    bridge_url: str
    mem0_url: str
    user_id: str
    mem0_api_key: str | None = None
    #: The bridge's bearer token, when it asks for one.
    token: str | None = None


def bridge_settings(stack: Stack) -> BridgeSettings:
    """A fresh user, infer off (stored text is the text sent), the bridge's own timeouts.

    stack.settings() widens the ranker timeout and rewrite budget for tests on a busy machine;
    under load those are exactly the limits worth measuring, so the defaults are restored.
    """
    defaults = BridgeSettings.model_fields
    return stack.settings(
        infer=False,
        log_level="WARNING",
        rewrite_budget_ms=defaults["rewrite_budget_ms"].default,
        verdict_budget_ms=defaults["verdict_budget_ms"].default,
        ranker_timeout_seconds=defaults["ranker_timeout_seconds"].default,
    )


def bridge_env(stack: Stack, settings: BridgeSettings) -> dict[str, str]:
    return {
        **stack.env(settings),
        "MEM0_TRANSPORT": "http",
        "MEM0_HTTP_PORT": "0",
        "MEM0_INFER": "false",
        "MEM0_LOG_LEVEL": "WARNING",
    }


async def read_store(
    http: httpx.AsyncClient, user_id: str, projects: Sequence[str] = PROJECTS
) -> tuple[list[Stored], bool]:
    """Every memory of the run's user in its projects, straight from mem0 (not through the
    bridge)."""
    stored: list[Stored] = []
    truncated = False
    for project in projects:
        response = await http.get(
            "/memories", params={"user_id": user_id, "run_id": project, "top_k": LIST_CAP}
        )
        response.raise_for_status()
        items = response.json().get("results", [])
        truncated |= len(items) >= LIST_CAP
        stored += [
            Stored(
                str(m["id"]),
                str(m.get("run_id") or project),
                str(m.get("memory") or ""),
                m.get("metadata") if isinstance(m.get("metadata"), dict) else {},
            )
            for m in items
        ]
    return stored, truncated


async def read_histories(
    http: httpx.AsyncClient, memory_ids: Sequence[str]
) -> dict[str, list[str]]:
    """Per memory id, every text its mem0 history mentions (old and new text of each event);
    an id mem0 knows nothing of has none."""
    histories: dict[str, list[str]] = {}
    for memory_id in sorted(memory_ids):
        response = await http.get(f"/memories/{memory_id}/history")
        if response.status_code == 404:
            histories[memory_id] = []
            continue
        response.raise_for_status()
        answer = response.json()
        events = answer if isinstance(answer, list) else []
        histories[memory_id] = [
            str(event[key])
            for event in events
            if isinstance(event, dict)
            for key in ("old_memory", "new_memory")
            if event.get(key)
        ]
    return histories


async def search_after_run(
    url: str, facts: Sequence[Fact], token: str | None = None
) -> tuple[dict[str, tuple[Stored, ...]], list[str]]:
    """Ask the bridge about each fact (its question, in its project), as an agent would once
    the run is over: per fact id the hits in rank order; and the errors of facts whose every
    try failed (those are left out)."""
    pending = list(reversed(facts))
    found: dict[str, tuple[Stored, ...]] = {}
    errors: list[str] = []

    async def asker() -> None:
        async with http_bridge(url, token) as client:
            while pending:
                fact = pending.pop()
                for attempt in range(FINAL_SEARCH_TRIES):
                    try:
                        with anyio.fail_after(CALL_TIMEOUT_SECONDS):
                            answer = await call_tool(
                                client,
                                "memory_search",
                                query=fact.question(),
                                project=fact.project,
                                limit=SEARCH_LIMIT,
                            )
                    except Exception as exc:  # counted, and the fact left unsearched
                        if attempt + 1 == FINAL_SEARCH_TRIES:
                            errors.append(f"{fact.fact_id}: {type(exc).__name__}: {exc}"[:300])
                        continue
                    found[fact.fact_id] = search_hits(answer, fact.project)
                    break

    await asyncio.gather(*(asker() for _ in range(min(FINAL_SEARCH_CLIENTS, len(facts)))))
    return found, errors


async def settle(
    http: httpx.AsyncClient,
    user_id: str,
    *,
    quiet: float,
    limit: float,
    projects: Sequence[str] = PROJECTS,
) -> Settled:
    """Poll the store until it has not changed for `quiet` seconds and no current memory waits
    for the reconciler (at most `limit`).

    A bridge that reconciles in the background (facts stored while the judge was away) keeps
    changing the store after the clients stop; the check must see where it ends up, not a
    pause between two reconciles on a busy machine.
    """
    started = time.monotonic()
    stored, truncated = await read_store(http, user_id, projects)
    last_change = started
    polls = 1
    while time.monotonic() - started < limit:
        await asyncio.sleep(1.0)
        current, truncated = await read_store(http, user_id, projects)
        polls += 1
        if _fingerprint(current) != _fingerprint(stored):
            stored, last_change = current, time.monotonic()
        elif time.monotonic() - last_change >= quiet and not any(map(_waiting, current)):
            return Settled(stored, last_change - started, True, truncated, polls)
    return Settled(stored, last_change - started, False, truncated, polls)


def _waiting(memory: Stored) -> bool:
    """Does a current memory still wait for the reconciler? (One folded or superseded while
    it waited is settled for search: its reconcile changes nothing but the flag.)"""
    return memory.live and bool((memory.metadata or {}).get("unjudged"))


def _fingerprint(stored: Sequence[Stored]) -> frozenset[tuple[str, ...]]:
    """What settling waits on: texts, and the lifetime marks a background fold or a change
    writes without touching the text."""
    return frozenset(
        (m.memory_id, m.text, *(str((m.metadata or {}).get(k)) for k in LIFETIME_KEYS))
        for m in stored
    )


async def inject_fault(
    fault: Fault, window: FaultWindow, recorder: Recorder, at: float, down: float
) -> None:
    """Take `fault.target` down at `at` s into the run and bring it back `down` s later (if
    the fault says how)."""
    await asyncio.sleep(at)
    window.events["killed_at"] = recorder.now()
    await asyncio.to_thread(fault.down)
    progress(f"    {window.target} down at {recorder.now():.1f}s")
    if fault.up is None:
        return
    await asyncio.sleep(down)
    window.events["restart_at"] = recorder.now()
    await asyncio.to_thread(fault.up)
    window.events["ready_at"] = recorder.now()
    progress(f"    {window.target} back at {recorder.now():.1f}s")


async def report_progress(label: str, recorder: Recorder, seconds: float) -> None:
    while True:
        await asyncio.sleep(5.0)
        now = recorder.now()
        progress(
            f"  [{label}] {min(now, seconds):4.0f}/{seconds:.0f}s  calls "
            f"{sum(recorder.calls.values())}  errors {sum(recorder.errors.values())}  "
            f"acks {len(recorder.acks)}"
        )


async def run_scenario(
    services: Services,
    scenario: str,
    clients: int,
    options: Options,
    index: int,
    *,
    protocol: str = "auto",
) -> dict[str, Any]:
    """One run on our own stack: a fresh bridge process, the load (with the fault), the check."""
    stack = services.stack
    settings = bridge_settings(stack)
    bridge = await asyncio.to_thread(
        ServiceProcess, ["mem0-bridge"], bridge_env(stack, settings), ready_timeout=60
    )
    try:
        target = Target(bridge.url, stack.mem0_url, settings.default_user_id, settings.api_key)
        fault = services.fault(scenario) if scenario != "none" else None
        entry = await run_load(
            target, scenario, clients, options, index, fault=fault, protocol=protocol
        )
        log = bridge.log_text()
    finally:
        await asyncio.to_thread(bridge.stop)
    entry["bridge_log"] = {
        "warnings": log.count(" WARNING "),
        "errors": log.count(" ERROR "),
        "tracebacks": log.count("Traceback"),
    }
    return entry


def run_projects(tag: str) -> tuple[str, ...]:
    """The projects of a run against a store that earlier runs wrote to as the same user."""
    return tuple(f"{project}-{tag}" for project in PROJECTS)


async def run_load(
    target: Target,
    scenario: str,
    clients: int,
    options: Options,
    index: int,
    *,
    fault: Fault | None = None,
    protocol: str = "auto",
    projects: Sequence[str] = PROJECTS,
    recorder: Recorder | None = None,
    on_window: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """N clients through `target` for the duration (with `fault` at options.fault_at), then
    wait for the store to settle, ask the bridge about every acknowledged fact, and check it
    all: the run's entry (`passed` is the verdict).

    `index` shifts the fact vocabulary (no two runs of one process share words); `projects`
    must hold no memory of the user's yet (runs against one store and user take fresh ones).
    A caller that measures more passes its own `recorder` (to read every answer after) and
    `on_window`, called with "start" when the clients start and "stop" when the last is done.
    """
    label = f"{scenario} x{clients}"
    facts = fact_pool(
        max(MIN_FACTS, FACTS_PER_CLIENT * clients), tuple(projects), offset=index * 1000
    )
    recorder = Recorder() if recorder is None else recorder
    workload = Workload(
        facts,
        recorder,
        seed=options.seed + index,
        token=target.token,
        protocol=protocol,
        new_style_share=options.new_style_share,
    )
    window = FaultWindow(fault.target if fault is not None else scenario)
    gate = StartGate(clients, options.seconds)
    connecting = time.monotonic()
    running = [
        asyncio.create_task(workload.client(i, target.bridge_url, gate)) for i in range(clients)
    ]
    await gate.all_arrived()
    connect_seconds = time.monotonic() - connecting
    progress(f"  [{label}] {clients} sessions open after {connect_seconds:.1f}s; go")
    recorder.restart_clock()
    cpu = CpuWindow()
    cpu.start()
    gate.open()
    if on_window is not None:
        on_window("start")
    ticker = asyncio.create_task(report_progress(label, recorder, options.seconds))
    injecting = (
        asyncio.create_task(
            inject_fault(fault, window, recorder, options.fault_at, options.fault_for)
        )
        if fault is not None
        else None
    )
    await asyncio.gather(*running)
    elapsed = recorder.now()
    cpu_seconds = cpu.stop()
    if on_window is not None:
        on_window("stop")
    if injecting is not None:
        await injecting
    ticker.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await ticker
    progress(f"  [{label}] clients done after {elapsed:.1f}s; waiting for the store to settle")
    headers = {"X-API-Key": target.mem0_api_key or ""}
    async with httpx.AsyncClient(base_url=target.mem0_url, headers=headers, timeout=60) as http:
        settled = await settle(
            http,
            target.user_id,
            quiet=options.quiet,
            limit=options.settle_max,
            projects=projects,
        )
        acked = {a.fact_id for a in recorder.acks}
        progress(f"  [{label}] asking the bridge about {len(acked)} facts")
        final_searches, final_errors = await search_after_run(
            target.bridge_url, [f for f in facts if f.fact_id in acked], target.token
        )
        wanted = history_wanted(_specs(facts), recorder.acks, settled.stored)
        histories = await read_histories(http, sorted(wanted))
    verdict = check(
        _specs(facts),
        recorder.acks,
        recorder.unacked,
        settled.stored,
        searches=recorder.searches,
        final_searches=final_searches,
        histories=histories,
    )
    entry = _entry(
        scenario,
        clients,
        elapsed=elapsed,
        facts=facts,
        recorder=recorder,
        window=window,
        settled=settled,
        verdict=verdict,
    )
    entry["connect_seconds"] = round(connect_seconds, 1)
    entry["protocols"] = dict(recorder.protocols)
    entry["after_run"] = {
        "searches": len(final_searches),
        "search_errors": len(final_errors),
        "search_error_samples": final_errors[:MAX_SHOWN_VIOLATIONS],
        "histories_read": len(histories),
    }
    entry["cpu"] = cpu_use(cpu_seconds, elapsed, entry)
    # The machine is shared: its load says how much these latencies are worth.
    entry["load_average_after"] = [round(x, 1) for x in os.getloadavg()]
    progress(f"  [{label}] {_verdict_line(entry)}")
    return entry


def _specs(facts: Sequence[Fact]) -> list[FactSpec]:
    return [FactSpec(f.fact_id, f.project, f.words) for f in facts]


def _violations(verdict: CheckResult, recorder: Recorder, flag: str) -> list[dict[str, Any]]:
    acks_of: dict[str, list[Any]] = {}
    for ack in recorder.acks:
        acks_of.setdefault(ack.fact_id, []).append(ack)
    bad = [v for v in verdict.facts.values() if getattr(v, flag)]
    return [
        v.describe(sorted(acks_of.get(v.fact_id, []), key=lambda a: a.acked_at))
        for v in bad[:MAX_SHOWN_VIOLATIONS]
    ]


def _entry(
    scenario: str,
    clients: int,
    *,
    elapsed: float,
    facts: Sequence[Fact],
    recorder: Recorder,
    window: FaultWindow,
    settled: Settled,
    verdict: CheckResult,
) -> dict[str, Any]:
    return {
        "scenario": scenario,
        "clients": clients,
        "seconds": round(elapsed, 1),
        "facts_in_pool": len(facts),
        "passed": verdict.passed,
        "check": verdict.summary(),
        "violations": {
            "duplicated": _violations(verdict, recorder, "duplicate"),
            "lost": _violations(verdict, recorder, "lost"),
            "stale": _violations(verdict, recorder, "stale"),
            "not_one_current": _violations(verdict, recorder, "not_one_current"),
            "older_value_first": _violations(verdict, recorder, "older_first"),
            "older_value_first_during_run": [
                v.describe() for v in verdict.older_first_during_run[:MAX_SHOWN_VIOLATIONS]
            ],
            "unreadable": _violations(verdict, recorder, "unreadable"),
        },
        "fault": {"target": window.target, **{k: round(v, 1) for k, v in window.events.items()}}
        if scenario != "none"
        else None,
        "settle": {
            "seconds": round(settled.seconds, 1),
            "stable": settled.stable,
            "polls": settled.polls,
            "listing_truncated": settled.truncated,
        },
        "ops": dict(recorder.ops),
        "actions": dict(sorted(recorder.actions.items())),
        "collisions": dict(recorder.collisions),
        "calls": dict(recorder.calls),
        **throughput(recorder, elapsed),
        "wordings": dict(sorted(recorder.wordings.items())),
        "acks": len(recorder.acks),
        "unacked": len(recorder.unacked),
        "errors": dict(recorder.errors),
        "error_samples": recorder.error_samples,
        "error_causes": dict(recorder.error_causes),
        "notes": dict(recorder.notes),
        "latency": {tool: summarize(times) for tool, times in recorder.latencies.items()},
        "timeline": [[second, *counts] for second, counts in sorted(recorder.timeline.items())],
    }


def cpu_use(seconds: dict[str, float], elapsed: float, entry: dict[str, Any]) -> dict[str, Any]:
    """Where the machine's CPU went while the clients ran: `seconds` per part of the stack,
    `busy_cores` (all parts, `other` included: the machine's other users), and
    `ms_per_call`, each part's CPU per successful call."""
    answered = sum(tool["calls"] for tool in entry["per_tool"].values())
    return {
        "seconds": seconds,
        "busy_cores": round(sum(seconds.values()) / elapsed, 2) if elapsed else 0.0,
        "cores": os.cpu_count(),
        "ms_per_call": {
            part: round(1000 * used / answered, 1) if answered else None
            for part, used in seconds.items()
        },
    }


def _rate(count: int, seconds: float) -> float:
    return round(count / seconds, 1) if seconds else 0.0


def throughput(recorder: Recorder, elapsed: float) -> dict[str, Any]:
    """`calls_per_second`: calls answered without error per second of the run;
    `attempted_calls_per_second`: every call; `per_tool`: per tool its answered calls, errors,
    answered calls per second and p50/p95 latency of the answered calls (ms)."""
    answered = sum(len(times) for times in recorder.latencies.values())
    per_tool: dict[str, dict[str, float | None]] = {}
    for tool in sorted(set(recorder.calls) | set(recorder.latencies)):
        times = recorder.latencies.get(tool, [])
        summary = summarize(times) if times else None
        per_tool[tool] = {
            "calls": len(times),
            "errors": recorder.errors.get(tool, 0),
            "calls_per_second": _rate(len(times), elapsed),
            "p50_ms": round(summary["p50_ms"], 1) if summary else None,
            "p95_ms": round(summary["p95_ms"], 1) if summary else None,
        }
    return {
        "calls_per_second": _rate(answered, elapsed),
        "attempted_calls_per_second": _rate(sum(recorder.calls.values()), elapsed),
        "per_tool": per_tool,
    }


def _verdict_line(entry: dict[str, Any]) -> str:
    c = entry["check"]
    return (
        f"{'PASS' if entry['passed'] else 'FAIL'}: {c['duplicate_memories']} duplicate memories "
        f"({c['duplicated_facts']} facts), {c['lost']} lost, {c['stale']} stale, "
        f"{c['older_value_first']} older value first "
        f"({c['older_value_first_during_run']} of {c['searches_judged_during_run']} searches "
        f"during the run, {c.get('older_value_first_during_run_latest_not_found', 0)} of them "
        f"without the latest value among their hits), {c['not_one_current']} not one current, "
        f"{c['unreadable']} unreadable, {c['ambiguous']} ambiguous of {c['acked_facts']} facts; "
        f"{sum(entry['errors'].values())} errors, {entry['calls_per_second']} calls/s"
    )


def _latency(entry: dict[str, Any], tool: str, stat: str) -> float:
    summary = entry["latency"].get(tool)
    return float(summary[stat]) if summary else float("nan")


def print_table(runs: Sequence[dict[str, Any]]) -> None:
    headers = [
        "fault",
        "clients",
        "calls",
        "calls/s",
        "acks",
        "errors",
        "facts",
        "dup mem",
        "dup facts",
        "lost",
        "stale",
        "old 1st",
        "old 1st run",
        "not 1 cur",
        "unread",
        "ambig",
        "settle s",
        "add p50",
        "add p95",
        "search p50",
        "search p95",
    ]
    rows = [
        [
            r["scenario"],
            r["clients"],
            sum(r["calls"].values()),
            r["calls_per_second"],
            r["acks"],
            sum(r["errors"].values()),
            r["check"]["acked_facts"],
            r["check"]["duplicate_memories"],
            r["check"]["duplicated_facts"],
            r["check"]["lost"],
            r["check"]["stale"],
            r["check"]["older_value_first"],
            r["check"]["older_value_first_during_run"],
            r["check"]["not_one_current"],
            r["check"]["unreadable"],
            r["check"]["ambiguous"],
            r["settle"]["seconds"],
            _latency(r, "memory_add", "p50_ms"),
            _latency(r, "memory_add", "p95_ms"),
            _latency(r, "memory_search", "p50_ms"),
            _latency(r, "memory_search", "p95_ms"),
        ]
        for r in runs
    ]
    print(format_table(headers, rows))
    print(
        "(latencies in ms; calls/s = successful calls per second; dup mem = current memories "
        "beyond one per fact;\n old 1st = facts whose search after the run names an older "
        "value first, old 1st run = such searches during it;\n not 1 cur = facts without "
        "exactly one current memory; unread = facts with an acknowledged value no longer "
        "readable)"
    )
    print_cpu(runs)


def print_cpu(runs: Sequence[dict[str, Any]]) -> None:
    """Where the CPU went: per run, each part's CPU ms per successful call, and how many cores
    were busy (a rate is bounded by cores x 1000 / the total)."""
    measured = [r for r in runs if r.get("cpu")]
    parts = sorted({part for r in measured for part in r["cpu"]["ms_per_call"]})
    if not parts:
        return
    rows = [
        [
            r["scenario"],
            r["clients"],
            r["cpu"]["busy_cores"],
            *(r["cpu"]["ms_per_call"].get(part) or 0.0 for part in parts),
            round(sum(v or 0.0 for v in r["cpu"]["ms_per_call"].values()), 1),
        ]
        for r in measured
    ]
    print()
    print(format_table(["fault", "clients", "busy cores", *parts, "total"], rows))
    print("(CPU ms per successful call while the clients ran; other = the machine's other users)")


def plot(runs: Sequence[dict[str, Any]], path: Path) -> None:
    import matplotlib  # noqa: PLC0415 - only when plotting

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    labels = [f"{r['scenario']}\nx{r['clients']}" for r in runs]
    xs = list(range(len(runs)))
    fig, (bad, slow, errs) = plt.subplots(3, 1, figsize=(max(8, 1.3 * len(runs) + 3), 11))
    gates = (
        ("duplicate_memories", "tab:red"),
        ("stale", "tab:orange"),
        ("lost", "tab:purple"),
        ("older_value_first", "tab:brown"),
        ("not_one_current", "tab:pink"),
        ("unreadable", "tab:gray"),
    )
    width = 0.8 / len(gates)
    for i, (key, color) in enumerate(gates):
        offset = (i - (len(gates) - 1) / 2) * width
        bars = bad.bar(
            [x + offset for x in xs],
            [r["check"][key] for r in runs],
            width,
            label=key,
            color=color,
        )
        bad.bar_label(bars, fontsize=8)
    bad.set_xticks(xs, labels)
    bad.set_ylabel("count")
    bad.set_title("Correctness after the run (all must be 0)")
    bad.legend(fontsize=8)
    for offset, tool, color in (
        (-0.2, "memory_add", "tab:blue"),
        (0.2, "memory_search", "tab:green"),
    ):
        for stat, alpha in (("p95_ms", 0.35), ("p50_ms", 1.0)):
            bars = slow.bar(
                [x + offset for x in xs],
                [_latency(r, tool, stat) for r in runs],
                0.4,
                alpha=alpha,
                color=color,
                label=f"{tool} {stat.removesuffix('_ms')}",
            )
            slow.bar_label(bars, fmt="%.0f", fontsize=7)
    slow.set_xticks(xs, labels)
    slow.set_ylabel("ms")
    slow.set_title("Tool latency under load")
    slow.legend(fontsize=8)
    for r in runs:
        seconds = [t[0] for t in r["timeline"]]
        line = errs.plot(
            seconds, [t[2] for t in r["timeline"]], label=f"{r['scenario']} x{r['clients']} failed"
        )[0]
        errs.plot(
            seconds,
            [t[3] for t in r["timeline"]],
            linestyle=":",
            color=line.get_color(),
            label=f"{r['scenario']} x{r['clients']} degraded",
        )
    errs.set_xlabel("second of the run")
    errs.set_ylabel("calls / s")
    errs.set_title(
        "Failed calls (solid) and answers degraded by an unavailable helper (dotted); "
        "grey: helper down",
        fontsize=9,
    )
    faulted = [r["fault"] for r in runs if r["fault"] and "killed_at" in r["fault"]]
    if faulted:
        window = faulted[0]
        errs.axvspan(
            window["killed_at"],
            window.get("ready_at", window["killed_at"]),
            alpha=0.1,
            color="grey",
        )
    errs.legend(fontsize=6, ncol=4, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _git_commit() -> str | None:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
        )
    except OSError:
        return None
    return done.stdout.strip() or None


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.load", description=(__doc__ or "").splitlines()[0]
    )
    parser.add_argument("--seconds", type=float, default=60.0, help="load per run (default 60)")
    parser.add_argument(
        "--clients", default="16,50", help="concurrent MCP clients, a comma list (default 16,50)"
    )
    parser.add_argument(
        "--fault",
        help="service taken down mid-run: none, judge, llm, ranker, a comma list of them, or "
        "all = every one in turn (default; none with --bridge-url)",
    )
    parser.add_argument("--fault-at", type=float, default=20.0, help="seconds into the run")
    parser.add_argument("--fault-for", type=float, default=10.0, help="seconds down")
    parser.add_argument(
        "--settle-max", type=float, default=60.0, help="longest wait for the store to settle"
    )
    parser.add_argument(
        "--quiet", type=float, default=5.0, help="unchanged this long = settled (seconds)"
    )
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument(
        "--new-style-share",
        type=float,
        default=NEW_STYLE_SHARE,
        help="share of changes, change-backs and restatements in new wordings (default 1/3; "
        "0: the plain wordings only)",
    )
    parser.add_argument(
        "--output", default="load", help="bench/results/<output>.json and .png (default load)"
    )
    parser.add_argument(
        "--protocol",
        choices=PROTOCOLS,
        default="auto",
        help="how the clients speak MCP: auto (2026-07-28), legacy (2025-11-25 handshake) or "
        "mixed (every other client legacy); default auto",
    )
    running = parser.add_argument_group(
        "an already-running deployment (no stack is started; --fault none only)"
    )
    running.add_argument(
        "--bridge-url", help="the bridge's (or its load balancer's) MCP URL, e.g. .../mcp"
    )
    running.add_argument("--mem0-url", help="the mem0 server behind it, read to check the store")
    running.add_argument(
        "--mem0-api-key",
        default=os.environ.get("MEM0_API_KEY"),
        help="mem0's X-API-Key (default: MEM0_API_KEY)",
    )
    running.add_argument(
        "--user-id", default="default", help="the bridge's MEM0_DEFAULT_USER_ID (default default)"
    )
    running.add_argument(
        "--token",
        default=os.environ.get("MEM0_HTTP_BEARER_TOKEN"),
        help="the bridge's bearer token (default: MEM0_HTTP_BEARER_TOKEN)",
    )
    return parser.parse_args(argv)


async def run_all(
    services: Services, plan: Sequence[tuple[str, int]], options: Options, protocol: str
) -> list[dict[str, Any]]:
    runs = []
    for index, (scenario, clients) in enumerate(plan):
        progress(
            f"run {index + 1}/{len(plan)}: fault={scenario}, {clients} clients, "
            f"{options.seconds:g}s"
        )
        runs.append(
            await run_scenario(services, scenario, clients, options, index, protocol=protocol)
        )
    return runs


async def run_all_against(
    target: Target, plan: Sequence[tuple[str, int]], options: Options, protocol: str
) -> list[dict[str, Any]]:
    """The runs against a deployment someone else started: each in projects of its own."""
    runs = []
    for index, (scenario, clients) in enumerate(plan):
        progress(f"run {index + 1}/{len(plan)}: {clients} clients on {target.bridge_url}")
        projects = run_projects(uuid.uuid4().hex[:6])
        runs.append(
            await run_load(
                target, scenario, clients, options, index, protocol=protocol, projects=projects
            )
        )
    return runs


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    clients = [int(c) for c in str(args.clients).split(",") if c.strip()]
    fault = args.fault or ("none" if args.bridge_url else "all")
    scenarios = list(SCENARIOS) if fault == "all" else fault.split(",")
    unknown = sorted(set(scenarios) - set(SCENARIOS))
    if unknown:
        raise SystemExit(f"--fault: unknown {', '.join(unknown)}; choose from {SCENARIOS} or all")
    plan = [(scenario, n) for n in clients for scenario in scenarios]
    target: Target | None = None
    if args.bridge_url:
        if not args.mem0_url:
            raise SystemExit("--bridge-url needs --mem0-url (the store is checked there)")
        if set(scenarios) != {"none"}:
            raise SystemExit("--bridge-url runs no stack of its own to fault: use --fault none")
        target = Target(args.bridge_url, args.mem0_url, args.user_id, args.mem0_api_key, args.token)
    options = Options(
        seconds=args.seconds,
        fault_at=min(args.fault_at, args.seconds / 3),
        fault_for=args.fault_for,
        settle_max=args.settle_max,
        quiet=args.quiet,
        seed=args.seed,
        new_style_share=args.new_style_share,
    )
    started = time.monotonic()
    if target is not None:
        runs = asyncio.run(run_all_against(target, plan, options, args.protocol))
    else:
        progress("starting mem0-local (pgvector, throwaway database), ranker, judge on FakeLLM")
        with running_services() as services:
            runs = asyncio.run(run_all(services, plan, options, args.protocol))
    passed = all(r["passed"] for r in runs)
    result = {
        "command": "python -m bench.load " + " ".join(sys.argv[1:] if argv is None else argv),
        "commit": _git_commit(),
        "passed": passed,
        "total_seconds": round(time.monotonic() - started, 1),
        "setup": {
            "stack": f"already running: {target.bridge_url}, mem0 at {target.mem0_url}"
            if target is not None
            else "mem0-local on pgvector (throwaway database, MiniLM on CPU), ranker on "
            "SQLite, judge on the fake LLM, bridge subprocess on streamable HTTP",
            "protocol": args.protocol,
            "clients": "official MCP client over streamable HTTP, closed loop, no think time",
            "infer": False,
            "op_weights": OP_WEIGHTS,
            "new_style_share": options.new_style_share,
            "new_style_wordings": list(NEW_TEMPLATES),
            "collision_chance": COLLISION_CHANCE,
            "projects": list(PROJECTS),
            "fault_at_seconds": options.fault_at,
            "fault_for_seconds": options.fault_for,
            "llm_fault": "FakeLLM answers every call with HTTP 500 (the judge stays up)",
            "process_fault": "SIGKILL, then a fresh process on the same port",
            "bridge_timeouts": "the bridge's defaults (ranker 2 s, judge 20 s, rewrite 1.5 s, "
            "verdicts 0.3 s)",
        },
        "runs": runs,
    }
    path = write_result(args.output, result)
    png = RESULTS_DIR / f"{args.output}.png"
    plot(runs, png)
    print_table(runs)
    print(
        f"\n{'PASS' if passed else 'FAIL'}: {sum(not r['passed'] for r in runs)} of "
        f"{len(runs)} runs have duplicates, lost writes, stale facts, an older value answered "
        "first, facts without one current memory or unreadable values"
    )
    progress(f"wrote {path} and {png} in {result['total_seconds']:.0f}s")
    return 0 if passed else 1

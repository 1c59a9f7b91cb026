"""`mem0-bridge selftest` against the real stack: every step passes, helpers down only warn,
a failing step stops the rest but not the cleanup, and mem0 unreachable fails clearly.

`run_selftest` runs on the in-process stack; the `selftest` command, a process, on the full one."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from mem0_bridge import Mem0Client
from mem0_bridge._selftest import SelftestReport, run_selftest
from tests.bridge.conftest import Stack
from tests.fakes.llm import FakeLLM

BRIDGE = Path(sys.executable).parent / "mem0-bridge"
REQUIRED = [
    "mem0 reachable",
    "add",
    "add again",
    "search (question)",
    "list",
    "update",
    "history",
    "delete",
    "cleanup",
]


def _dead_address() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{sock.getsockname()[1]}"


def _statuses(report: SelftestReport) -> dict[str, str]:
    return {step.name: step.status for step in report.steps}


async def _left_in_namespace(stack: Stack, report: SelftestReport) -> list[str]:
    mem0 = Mem0Client(
        stack.settings(default_user_id=report.user_id), transport=stack.mem0_transport()
    )
    try:
        memories = await mem0.list_memories(
            user_id=report.user_id, run_id=report.namespace, top_k=100
        )
    finally:
        await mem0.aclose()
    return [m.text for m in memories]


class _UpdatesRefused(httpx.AsyncBaseTransport):
    """The real mem0 server, except that every update answers 503 (a server failing mid-run)."""

    def __init__(self, real: httpx.AsyncBaseTransport | None) -> None:
        self._real = real or httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "PUT":
            return httpx.Response(503, json={"detail": "updates are down for maintenance"})
        return await self._real.handle_async_request(request)

    async def aclose(self) -> None:
        await self._real.aclose()


def _run_command(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BRIDGE), "selftest"],
        env={**os.environ, "MEM0_LOG_LEVEL": "ERROR", **env},
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


@pytest.mark.anyio
async def test_selftest_passes_every_step_on_the_full_stack(stack: Stack, llm: FakeLLM) -> None:
    report = await run_selftest(stack.settings(), mem0_transport=stack.mem0_transport())
    assert report.ok, report.render()
    statuses = _statuses(report)
    assert statuses == dict.fromkeys(
        ["mem0 reachable", "ranker reachable", "judge reachable", "reconcile queue", *REQUIRED[1:]],
        "PASS",
    )


@pytest.mark.anyio
async def test_selftest_recalls_the_fact_through_the_rewritten_question(
    stack: Stack, llm: FakeLLM
) -> None:
    # A search waits for a question's first rewrite only when told to (the rewrite is
    # otherwise fetched in the background for the question's next search).
    settings = stack.settings(rewrite_wait_ms=5000)
    report = await run_selftest(settings, mem0_transport=stack.mem0_transport())
    search = next(step for step in report.steps if step.name == "search (question)")
    assert search.detail.startswith("found at rank 1 (rewritten to 'The billing service uses port'")
    again = next(step for step in report.steps if step.name == "add again")
    assert again.detail == "duplicate"


@pytest.mark.anyio
async def test_selftest_leaves_nothing_in_its_namespace(stack: Stack, llm: FakeLLM) -> None:
    report = await run_selftest(stack.settings(), mem0_transport=stack.mem0_transport())
    assert report.namespace.startswith("selftest-")
    assert await _left_in_namespace(stack, report) == []


@pytest.mark.anyio
async def test_selftest_with_ranker_and_judge_down_passes_with_warnings(
    stack: Stack, llm: FakeLLM
) -> None:
    settings = stack.settings(ranker_address=_dead_address(), judge_address=_dead_address())
    report = await run_selftest(settings, mem0_transport=stack.mem0_transport())
    assert report.ok, report.render()
    statuses = _statuses(report)
    assert statuses["ranker reachable"] == "WARN"
    assert statuses["judge reachable"] == "WARN"
    assert all(statuses[name] == "PASS" for name in REQUIRED)
    rendered = report.render()
    assert "adds skip dedupe" in rendered
    assert "questions not rewritten" in rendered
    assert "2 warnings" in rendered


@pytest.mark.anyio
async def test_failing_step_skips_the_rest_and_still_cleans_up(stack: Stack, llm: FakeLLM) -> None:
    report = await run_selftest(
        stack.settings(), mem0_transport=_UpdatesRefused(stack.mem0_transport())
    )
    assert not report.ok
    statuses = _statuses(report)
    assert statuses["update"] == "FAIL"
    assert statuses["history"] == statuses["delete"] == "SKIP"
    assert statuses["cleanup"] == "PASS"
    update = next(step for step in report.steps if step.name == "update")
    assert "updates are down for maintenance" in update.detail
    assert "selftest FAILED: 6/9 required steps passed" in report.render()
    assert await _left_in_namespace(stack, report) == []


def test_selftest_command_exits_zero_and_prints_every_step(full_stack: Stack) -> None:
    done = _run_command(full_stack.env(full_stack.settings()))
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"mem0-bridge selftest against {full_stack.mem0_url} ")
    for name in REQUIRED:
        assert any(line.split()[:1] == ["PASS"] and f" {name} " in line for line in lines), name
    assert lines[-1] == "selftest OK: 9/9 required steps passed, 0 warnings"


@pytest.mark.subprocess
def test_selftest_command_with_mem0_unreachable_fails_naming_the_url() -> None:
    url = f"http://{_dead_address()}"
    done = _run_command(
        {
            "MEM0_API_URL": url,
            "MEM0_RANKER_ADDRESS": _dead_address(),
            "MEM0_JUDGE_ADDRESS": _dead_address(),
        }
    )
    assert done.returncode == 1
    assert "FAIL  mem0 reachable" in done.stdout
    assert f"mem0 is unreachable at {url}" in done.stdout
    assert "MEM0_API_URL" in done.stdout
    assert "SKIP  add " in done.stdout
    assert done.stdout.splitlines()[-1] == "selftest FAILED: 0/9 required steps passed, 2 warnings"

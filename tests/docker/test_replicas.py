"""Replicas in containers (issue 25): two bridges behind a load balancer without affinity.

The stack of `_stack.running_stack` with two bridge replicas instead of one: HAProxy (Debian's
package, in an image built here from the suite's Debian base image) sends each HTTP request to
the next replica, round robin, no session affinity; two rankers on PostgreSQL and two judges
behind one network name each; mem0-local on pgvector; the fake LLM. The official MCP client
runs on the host against the balancer's published port.

Then `bench.load`'s workload (50 clients, half of them on the 2025-11-25 handshake, half on
2026-07-28) runs through the balancer, once without faults and once with one bridge killed
mid-run (SIGKILL, not restarted: the balancer takes it out and the other replica carries the
load), and `bench.load`'s checker must find no acknowledged write lost and every acknowledged
value readable.

Racing statements of one fact that land on different replicas are ordered by the scope's lease
in the ranker, as by each bridge's own per-scope lock: each run must also end with no duplicate
memory of a fact and no fact holding a stale value. The load uses its plain wordings
(`new_style_share=0`): changes worded far from the stored value are an open gap of facts with a
lifetime through one bridge as through two, which `make bench-load` reports.

The tests run in file order: the load runs come last, the kill at the very end.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from typing import Any

import docker
import pytest

from bench.load.run import Fault, Options, Target, run_load, run_projects
from tests.bridge._calls import (
    LEGACY,
    MODERN,
    assert_whole_session,
    call,
    every_tool,
    http_client,
)
from tests.docker._stack import (
    API_KEY,
    BEARER_TOKEN,
    BRIDGE_REPLICAS,
    RESET_TOKEN,
    Stack,
    running_stack,
)
from tests.docker.images import Images, build_balancer

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.anyio]

#: Shared by both replicas, as in the Helm chart: a 2026-07-28 client's later round may reach
#: the replica that did not seal the state of its first.
STATE_SECRET = "docker-suite-request-state-secret-0123456789"  # noqa: S105
CLIENTS = 50
#: The load per run (60 s as `make bench-load`; shorter for a quick look).
SECONDS = float(os.environ.get("MEM0MCP_REPLICA_LOAD_SECONDS") or 60)
KILL_AT = min(20.0, SECONDS / 3)
#: The line a bridge logs for every tool call it serves.
CALL_LINE = " called by token "


@pytest.fixture(scope="module")
def balancer_image(docker_engine: docker.DockerClient) -> str:
    return build_balancer()


@pytest.fixture(scope="module")
def stack(
    docker_engine: docker.DockerClient, built_images: Images, balancer_image: str
) -> Iterator[Stack]:
    env = {
        # The load's checker reads back the text it sent: store it verbatim.
        "MEM0_INFER": "false",
        "MEM0_REQUEST_STATE_SECRET": STATE_SECRET,
        "MEM0_LOG_LEVEL": "INFO",
    }
    with running_stack(
        docker_engine, built_images, balancer=balancer_image, bridge_env=env
    ) as running:
        yield running


def _calls_served(stack: Stack) -> dict[str, int]:
    return {key: stack.logs(key).count(CALL_LINE) for key in BRIDGE_REPLICAS}


def _target(stack: Stack) -> Target:
    return Target(
        bridge_url=stack.bridge_url,
        mem0_url=stack.mem0_url,
        user_id=f"suite-{stack.run_id}",
        mem0_api_key=API_KEY,
        token=BEARER_TOKEN,
    )


def _options() -> Options:
    # The load's plain wordings: a change worded far from the stored value (a third of the
    # changes in `make bench-load`) is kept beside it through one bridge as through two
    # (bench/README.md, "Facts with a lifetime"); this checks what the replicas add.
    return Options(
        seconds=SECONDS,
        fault_at=KILL_AT,
        fault_for=0.0,
        settle_max=60.0,
        quiet=5.0,
        seed=25,
        new_style_share=0.0,
    )


def _report(entry: dict[str, Any]) -> None:
    """The run's figures on stdout (pytest -s shows them), the way bench.load reports them."""
    shown = {
        key: entry.get(key)
        for key in (
            "scenario",
            "clients",
            "seconds",
            "passed",
            "check",
            "calls",
            "calls_per_second",
            "errors",
            "error_causes",
            "error_samples",
            "protocols",
            "collisions",
            "fault",
            "after_run",
        )
    }
    shown["latency_p50_p95_ms"] = {
        tool: [round(s["p50_ms"]), round(s["p95_ms"])] for tool, s in entry["latency"].items()
    }
    print(f"\nreplica load run: {json.dumps(shown, sort_keys=True)}")  # noqa: T201
    if not entry["passed"]:
        print(f"violations: {json.dumps(entry['violations'])}")  # noqa: T201


def test_the_balancer_reaches_both_replicas_ready(stack: Stack) -> None:
    readiness = stack.readiness()
    assert readiness == {
        "status": "ready",
        "checks": {"mem0": "ok", "ranker": "serving", "judge": "serving"},
    }


@pytest.mark.parametrize(
    ("mode", "version"), [(LEGACY, "2025-11-25"), (MODERN, "2026-07-28")], ids=["2025", "2026"]
)
async def test_a_whole_session_spans_both_replicas(stack: Stack, mode: str, version: str) -> None:
    before = _calls_served(stack)
    async with http_client(stack.bridge_url, token=BEARER_TOKEN, mode=mode) as client:
        negotiated = client.protocol_version
        steps = await every_tool(client, f"proj-{uuid.uuid4().hex[:8]}", RESET_TOKEN)
    after = _calls_served(stack)
    served = {key: after[key] - before[key] for key in BRIDGE_REPLICAS}
    assert negotiated == version
    assert_whole_session(steps)
    assert sum(served.values()) == 12, served
    assert min(served.values()) >= 4, served


async def test_a_2026_client_names_its_project_by_roots_across_replicas(stack: Stack) -> None:
    project = f"proj-{uuid.uuid4().hex[:8]}"
    async with http_client(
        stack.bridge_url, token=BEARER_TOKEN, roots=[f"file:///work/{project}"], mode=MODERN
    ) as client:
        added = await call(client, "memory_add", text="Billing runs on Fridays.")
    assert added["namespace"] == project


@pytest.mark.timeout(1200)
async def test_fifty_clients_through_the_balancer_lose_nothing(stack: Stack) -> None:
    entry = await run_load(
        _target(stack),
        "none",
        CLIENTS,
        _options(),
        index=0,
        protocol="mixed",
        projects=run_projects(uuid.uuid4().hex[:6]),
    )
    _report(entry)
    served = _calls_served(stack)
    assert min(served.values()) > 0, served
    assert entry["protocols"] == {"2025-11-25": CLIENTS // 2, "2026-07-28": CLIENTS // 2}
    _assert_nothing_lost(entry)


@pytest.mark.timeout(1200)
async def test_one_bridge_killed_mid_run_loses_nothing(stack: Stack) -> None:
    killed = BRIDGE_REPLICAS[0]
    entry = await run_load(
        _target(stack),
        "bridge",
        CLIENTS,
        _options(),
        index=1,
        fault=Fault("bridge", lambda: stack.kill(killed)),
        protocol="mixed",
        projects=run_projects(uuid.uuid4().hex[:6]),
    )
    _report(entry)
    assert entry["fault"]["killed_at"] > 0
    # The survivor carried the rest of the run.
    assert entry["calls_per_second"] > 0
    _assert_nothing_lost(entry)


def _assert_nothing_lost(entry: dict[str, Any]) -> None:
    """Every acknowledged write is still there, every acknowledged value readable, no fact has
    a duplicate memory and none holds a stale value (racing statements on two replicas are
    judged against each other)."""
    assert entry["check"]["lost"] == 0, entry["check"]
    assert entry["check"]["unreadable"] == 0, entry["check"]
    assert entry["check"]["duplicate_memories"] == 0, entry["violations"]["duplicated"]
    assert entry["check"]["stale"] == 0, entry["violations"]["stale"]
    # Without a fault no call may fail; with one, only those in flight on the killed bridge.
    assert entry["fault"] is not None or not entry["errors"], entry["error_samples"]

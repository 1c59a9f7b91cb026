"""The deployment in real containers, driven the way an agent drives it: the official MCP client
over streamable HTTP from the host to the bridge's published port.

One stack serves the whole module (its images and start-up cost minutes on two cores); each test
works in a project of its own. The tests run in file order: the replica kill comes last.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import anyio
import docker
import pytest
from mcp_types import CallToolResult

from tests.bridge._calls import call, http_client, text_of
from tests.docker._stack import BEARER_TOKEN, RESET_TOKEN, Stack, running_stack
from tests.docker.images import Images
from tests.support.tools import TOOL_NAMES

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.anyio]


@pytest.fixture(scope="module")
def stack(docker_engine: docker.DockerClient, built_images: Images) -> Iterator[Stack]:
    with running_stack(docker_engine, built_images) as running:
        yield running


def _project() -> str:
    return f"proj-{uuid.uuid4().hex[:8]}"


def test_the_bridge_reports_mem0_ranker_and_judge_ready(stack: Stack) -> None:
    readiness = stack.readiness()
    assert readiness == {
        "status": "ready",
        "checks": {"mem0": "ok", "ranker": "serving", "judge": "serving"},
    }


async def test_every_tool_answers_over_http_from_the_host(stack: Stack) -> None:
    project = _project()
    async with http_client(stack.bridge_url, token=BEARER_TOKEN) as client:
        listed_tools = {tool.name for tool in (await client.list_tools()).tools}
        added = await call(
            client, "memory_add", text="The billing API listens on port 7070.", project=project
        )
        memory_id = added["memory_ids"][0]
        found = await call(
            client, "memory_search", query="which port does billing use?", project=project
        )
        listed = await call(client, "memory_list", project=project)
        recent = await call(client, "memory_recent", project=project)
        pinned = await call(client, "memory_pin", text="Never deploy on Fridays.", project=project)
        pins = await call(client, "memory_pins", project=project)
        unpinned = await call(
            client, "memory_unpin", memory_id=pinned["pin"]["id"], project=project
        )
        updated = await call(
            client,
            "memory_update",
            memory_id=memory_id,
            text="The billing API listens on 7071.",
            project=project,
        )
        history = await call(client, "memory_history", memory_id=memory_id, project=project)
        deleted = await call(client, "memory_delete", memory_id=memory_id, project=project)
        after_delete = await call(client, "memory_list", project=project)
        await call(client, "memory_add", text="Reset must wipe this fact.", project=project)
        reset = await call(client, "memory_reset", reset_token=RESET_TOKEN)
        after_reset = await call(client, "memory_list", project=project)
    assert listed_tools == set(TOOL_NAMES)
    assert added["action"] == "added"
    assert found["reranked"] is True
    assert found["rewritten_query"]
    assert [hit["id"] for hit in found["hits"]] == [memory_id]
    assert [hit["id"] for hit in listed["hits"]] == [memory_id]
    assert [hit["id"] for hit in recent["hits"]] == [memory_id]
    assert [pin["text"] for pin in pins["local_pins"]] == ["Never deploy on Fridays."]
    assert unpinned["action"] == "unpinned"
    assert (updated["action"], updated["text"]) == ("updated", "The billing API listens on 7071.")
    assert [event["event"] for event in history["events"]] == ["ADD", "UPDATE"]
    assert deleted["action"] == "deleted"
    assert after_delete["hits"] == []
    assert reset["reset"] is True
    assert after_reset["hits"] == []


async def test_adding_reconciles_with_what_is_stored(stack: Stack) -> None:
    project = _project()
    async with http_client(stack.bridge_url, token=BEARER_TOKEN) as client:
        first = await call(
            client, "memory_add", text="The API listens on port 8080.", project=project
        )
        memory_id = first["memory_ids"][0]
        same = await call(
            client, "memory_add", text="The API listens on port 8080.", project=project
        )
        # Pairs the shipped verdict guard lets through: a paraphrase 0.95 alike (MiniLM), and
        # a change in the same words.
        paraphrase = await call(
            client, "memory_add", text="The API is listening on port 8080.", project=project
        )
        changed = await call(
            client, "memory_add", text="The API listens on port 9000.", project=project
        )
        listed = await call(client, "memory_list", project=project)
    assert same["action"] == "duplicate"
    assert paraphrase["action"] == "reinforced"
    assert (changed["action"], changed["superseded_ids"]) == ("updated", [memory_id])
    assert [hit["text"] for hit in listed["hits"] if hit["current"]] == [
        "The API listens on port 9000."
    ]
    assert {hit["id"]: hit["current"] for hit in listed["hits"]}[memory_id] is False


async def test_calls_are_spread_over_both_replicas_of_each_helper(stack: Stack) -> None:
    project = _project()
    before = {replica.name: replica.calls() for replica in stack.rankers + stack.judges}
    async with http_client(stack.bridge_url, token=BEARER_TOKEN) as client:
        await call(
            client, "memory_add", text="The cache holds entries for an hour.", project=project
        )
        for n in range(12):
            await call(
                client, "memory_search", query=f"how long is cache entry {n} kept?", project=project
            )
    served = {
        replica.name: replica.calls() - before[replica.name]
        for replica in stack.rankers + stack.judges
    }
    for pair in (stack.rankers, stack.judges):
        counts = [served[replica.name] for replica in pair]
        assert sum(counts) >= 12, served
        # round_robin alternates; a quarter each leaves room for the odd reconnect.
        assert min(counts) >= sum(counts) // 4, served


async def test_a_restart_of_every_stateful_container_keeps_memories_and_mentions(
    stack: Stack,
) -> None:
    project = _project()
    async with http_client(stack.bridge_url, token=BEARER_TOKEN) as client:
        for text in ("Zebras sleep standing up.", "Giraffes sleep very little."):
            await call(client, "memory_add", text=text, project=project)
        acknowledged: list[int | None] = []
        for _ in range(2):
            again = await call(
                client, "memory_add", text="Zebras sleep while standing up.", project=project
            )
            assert again["action"] == "reinforced"
            acknowledged.append(again["mentions"])
        zebra = again["memory_ids"][0]
        listed = await call(client, "memory_list", project=project)
        found = await call(client, "memory_search", query="how do zebras sleep?", project=project)

    # New postgres and mem0-local containers on the same named volumes; the rankers reconnect
    # to the new database; a new bridge.
    stack.recreate("postgres")
    stack.recreate("mem0-local")
    for replica in stack.rankers:
        stack.restart(replica.name)
    stack.recreate("bridge")

    async with http_client(stack.bridge_url, token=BEARER_TOKEN) as client:
        listed_after = await call(client, "memory_list", project=project)
        found_after = await call(
            client, "memory_search", query="how do zebras sleep?", project=project
        )
    assert sorted((h["id"], h["text"]) for h in listed_after["hits"]) == sorted(
        (h["id"], h["text"]) for h in listed["hits"]
    )
    mentions = {hit["id"]: hit["mentions"] for hit in found["hits"]}
    # The mention count the second reinforcement acknowledged is what search reports...
    assert acknowledged == [1, 2], acknowledged
    assert mentions[zebra] == acknowledged[-1], (mentions, zebra)
    # ...and what it still reports after the restart.
    assert {hit["id"]: hit["mentions"] for hit in found_after["hits"]} == mentions


@dataclass(frozen=True)
class Outcome:
    started: float
    ended: float
    ok: bool
    detail: str


def _degraded(result: CallToolResult) -> str | None:
    """Why a tool result is worse than a healthy stack's (an error, or a helper missing)."""
    if result.is_error:
        return f"error: {text_of(result)}"
    content: dict[str, Any] = result.structured_content or {}
    notes = [n for n in content.get("notes", []) if "unavailable" in n or "not rewritten" in n]
    if content.get("reranked") is False or notes:
        return f"degraded: {notes}"
    return None


async def test_killing_one_replica_of_each_helper_under_load_fails_only_calls_in_flight(
    stack: Stack,
) -> None:
    project = _project()
    workers, calls_each, kill_after = 4, 12, 8
    outcomes: list[Outcome] = []
    enough_before_kill = anyio.Event()
    killed: list[float] = []

    async with http_client(stack.bridge_url, token=BEARER_TOKEN) as client:
        await call(client, "memory_add", text="Deploys happen on Tuesdays.", project=project)

    async def worker(index: int) -> None:
        async with http_client(stack.bridge_url, token=BEARER_TOKEN) as client:
            for n in range(calls_each):
                started = time.monotonic()
                if n % 3 == 2:
                    result = await client.call_tool(
                        "memory_add",
                        {"text": f"Worker {index} noted fact number {n}.", "project": project},
                    )
                else:
                    result = await client.call_tool(
                        "memory_search",
                        {"query": f"when do deploys happen ({index}-{n})?", "project": project},
                    )
                problem = _degraded(result)
                outcomes.append(Outcome(started, time.monotonic(), problem is None, problem or ""))
                if len(outcomes) >= kill_after:
                    enough_before_kill.set()

    async def killer() -> None:
        await enough_before_kill.wait()
        killed.append(time.monotonic())
        await anyio.to_thread.run_sync(stack.rankers[0].kill)
        await anyio.to_thread.run_sync(stack.judges[0].kill)
        killed.append(time.monotonic())

    survivors_before = stack.rankers[1].calls(), stack.judges[1].calls()
    async with anyio.create_task_group() as group:
        group.start_soon(killer)
        for index in range(workers):
            group.start_soon(worker, index)

    kill_started, kill_done = killed
    in_flight = [o for o in outcomes if o.started <= kill_done and o.ended >= kill_started]
    failed = [o for o in outcomes if not o.ok]
    after = [o for o in outcomes if o.started > kill_done]
    assert len(outcomes) == workers * calls_each
    assert all(o in in_flight for o in failed), [o.detail for o in failed]
    assert len(failed) <= workers
    assert len(after) >= workers * 2, "too few calls after the kill to show anything"
    assert all(o.ok for o in after), [o.detail for o in after if not o.ok]
    assert stack.rankers[1].calls() > survivors_before[0]
    assert stack.judges[1].calls() > survivors_before[1]

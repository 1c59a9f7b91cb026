"""Degrade, don't fail: without the ranker or the judge the bridge still serves, and says so.

"Down" here is a real address nothing listens on (a port bound, read and released); the kill
of a running helper mid-session is covered end to end in test_scenarios. The rest of the stack
runs in process.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator

import anyio
import pytest
from mcp import Client

from mem0_bridge import create_server
from tests.bridge._calls import call, call_error
from tests.bridge.conftest import Stack
from tests.fakes.llm import FakeLLM

pytestmark = pytest.mark.anyio


def _dead_address() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{sock.getsockname()[1]}"


@pytest.fixture
async def without_ranker(stack: Stack) -> AsyncIterator[Client]:
    settings = stack.settings(project="alpha", ranker_address=_dead_address())
    async with Client(stack.server(settings)) as client:
        yield client


@pytest.fixture
async def without_judge(stack: Stack) -> AsyncIterator[Client]:
    settings = stack.settings(project="alpha", judge_address=_dead_address())
    async with Client(stack.server(settings)) as client:
        yield client


async def test_search_without_ranker_falls_back_to_mem0_order_and_says_so(
    without_ranker: Client,
) -> None:
    await call(without_ranker, "memory_add", text="The nightly backup runs at two.")
    await call(without_ranker, "memory_add", text="Old backup tapes go offsite.")
    result = await call(without_ranker, "memory_search", query="backup tapes")
    assert result["reranked"] is False
    assert any("ranker unavailable" in note for note in result["notes"])
    similarities = [hit["similarity"] for hit in result["hits"]]
    assert len(similarities) == 2
    assert similarities == sorted(similarities, reverse=True)
    assert [hit["score"] for hit in result["hits"]] == similarities


async def test_add_without_ranker_still_stores_and_says_dedupe_was_skipped(
    without_ranker: Client,
) -> None:
    added = await call(without_ranker, "memory_add", text="The nightly backup runs at two.")
    assert added["action"] == "added"
    assert any("not checked for exact duplicates" in note for note in added["notes"])


async def test_add_without_judge_adds_a_paraphrase_unreconciled_and_says_so(
    without_judge: Client,
) -> None:
    await call(without_judge, "memory_add", text="The API listens on port 8080.")
    again = await call(without_judge, "memory_add", text="Our API service uses port 8080.")
    assert again["action"] == "added"
    assert any("judge unavailable" in note for note in again["notes"])


async def test_search_without_judge_skips_the_rewrite_and_says_so(without_judge: Client) -> None:
    await call(without_judge, "memory_add", text="The API uses port 8080.")
    first = await call(without_judge, "memory_search", query="what port does the API use?")
    with anyio.fail_after(60):  # the rewrite fails in the background; the next search says so
        result = first
        while not result["notes"]:
            await anyio.sleep(0.1)
            result = await call(without_judge, "memory_search", query="what port does the API use?")
    for found in (first, result):
        assert found["rewritten_query"] is None
        assert found["hits"]
    assert any("not rewritten" in note for note in result["notes"])


async def test_helpers_turned_off_are_not_reported_as_down(stack: Stack) -> None:
    settings = stack.settings(project="alpha", ranker_address="", judge_address="")
    async with Client(stack.server(settings)) as client:
        added = await call(client, "memory_add", text="The API uses port 8080.")
        found = await call(client, "memory_search", query="what port does the API use?")
    assert added["notes"] == []
    assert found["notes"] == [
        "ranker off (MEM0_RANKER_ADDRESS is empty): results are in mem0's similarity order, "
        "without mention and recency reranking"
    ]


async def test_mem0_down_is_a_clear_error(stack: Stack) -> None:
    settings = stack.settings(project="alpha", api_url=f"http://{_dead_address()}")
    async with Client(create_server(settings)) as client:  # over HTTP, to nothing
        message = await call_error(client, "memory_search", query="anything")
    assert "mem0 is unreachable" in message
    assert "MEM0_API_URL" in message


async def test_a_slow_rewrite_does_not_hold_the_search_and_serves_the_next_one(
    stack: Stack, llm: FakeLLM
) -> None:
    question = "which port does the API listen on?"
    async with Client(stack.server(stack.settings(project="alpha"))) as client:
        added = await call(client, "memory_add", text="The API uses port 8080.")
        llm.set_failure("slow", seconds=2)
        found = await call(client, "memory_search", query=question)
        llm.set_failure(None)
        with anyio.fail_after(60):  # the background rewrite is back after the slow answer
            again = found
            while again["rewritten_query"] is None:
                await anyio.sleep(0.2)
                again = await call(client, "memory_search", query=question)
    assert found["rewritten_query"] is None
    assert [hit["id"] for hit in found["hits"]] == added["memory_ids"]
    assert found["notes"] == []
    assert [hit["id"] for hit in again["hits"]] == added["memory_ids"]


async def test_a_failing_llm_behind_mem0_is_an_actionable_error(
    client: Client, llm: FakeLLM
) -> None:
    llm.set_failure("error500")
    message = await call_error(client, "memory_add", text="The API uses port 8080.")
    llm.set_failure(None)
    assert "mem0 failed the add (provider_" in message
    assert (await call(client, "memory_list"))["hits"] == []

"""Rewrite over real gRPC: questions become statements, statements pass through, repeats hit the
cache, and concurrent identical questions share one LLM call."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from mem0mcp.judge.v1 import judge_pb2
from tests.fakes.llm import FakeLLM
from tests.judge.conftest import RunningJudge, judge_settings, running_judge

pytestmark = pytest.mark.anyio


async def _rewrite(judge: RunningJudge, query: str) -> judge_pb2.RewriteResponse:
    response: judge_pb2.RewriteResponse = await judge.stub.Rewrite(
        judge_pb2.RewriteRequest(query=query), timeout=10
    )
    return response


async def test_a_question_becomes_a_statement(judge: RunningJudge, llm: FakeLLM) -> None:
    response = await _rewrite(judge, "what port does the API use?")
    assert response.statement == "The API uses port"
    assert response.rewritten
    assert not response.cached
    assert len(llm.chat_requests) == 1


async def test_a_statement_passes_through_without_an_llm_call(
    judge: RunningJudge, llm: FakeLLM
) -> None:
    response = await _rewrite(judge, "  API   port settings ")
    assert response.statement == "API port settings"
    assert not response.rewritten
    assert llm.chat_requests == []


async def test_a_repeated_question_is_answered_from_the_cache(
    judge: RunningJudge, llm: FakeLLM
) -> None:
    first = await _rewrite(judge, "what is the database URL?")
    second = await _rewrite(judge, "what is  the database URL?")
    assert second.statement == first.statement == "The database URL is"
    assert second.cached
    assert len(llm.chat_requests) == 1


async def test_concurrent_identical_questions_share_one_llm_call(
    judge: RunningJudge, llm: FakeLLM
) -> None:
    llm.latency_seconds = 0.2
    responses = await asyncio.gather(
        *(_rewrite(judge, "how does the cache work?") for _ in range(10))
    )
    assert {r.statement for r in responses} == {"The cache works"}
    assert sum(not r.cached for r in responses) == 1
    assert len(llm.chat_requests) == 1


async def test_an_expired_rewrite_is_asked_again(llm: FakeLLM) -> None:
    async with running_judge(judge_settings(llm, cache_ttl_seconds=0.001)) as judge:
        await _rewrite(judge, "what port does the API use?")
        await asyncio.sleep(0.01)
        again = await _rewrite(judge, "what port does the API use?")
    assert not again.cached
    assert len(llm.chat_requests) == 2


async def test_a_failed_rewrite_is_not_cached(judge: RunningJudge, llm: FakeLLM) -> None:
    llm.fail_next("garbage")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await _rewrite(judge, "what port does the API use?")
    assert caught.value.code() == grpc.StatusCode.INTERNAL
    response = await _rewrite(judge, "what port does the API use?")
    assert response.statement == "The API uses port"
    assert not response.cached

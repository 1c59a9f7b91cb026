"""The LLM's own health name: NOT_SERVING after its last calls failed, SERVING on a success."""

from __future__ import annotations

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from mem0_judge import LLM_HEALTH_SERVICE, SERVICE_FULL_NAME, LLMHealth
from mem0mcp.judge.v1 import judge_pb2
from tests.fakes.llm import FakeLLM
from tests.judge.conftest import RunningJudge, judge_settings, running_judge

pytestmark = pytest.mark.anyio

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
COMPARE = judge_pb2.CompareRequest(
    fact="We moved the API to port 9000",
    candidates=[judge_pb2.CompareCandidate(memory_id="m1", text="The API listens on port 8080")],
)


async def _status(judge: RunningJudge, service: str) -> int:
    stub = health_pb2_grpc.HealthStub(judge.channel)
    response = await stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
    return int(response.status)


async def _failed_compare(judge: RunningJudge) -> None:
    with pytest.raises(grpc.aio.AioRpcError):
        await judge.stub.Compare(COMPARE, timeout=10)


def test_the_llm_health_name_is_the_service_name_with_llm() -> None:
    assert LLM_HEALTH_SERVICE == "mem0mcp.judge.v1.JudgeService.llm"


async def test_a_configured_llm_starts_serving(judge: RunningJudge) -> None:
    assert await _status(judge, LLM_HEALTH_SERVICE) == SERVING


async def test_without_an_llm_the_llm_name_is_not_serving() -> None:
    async with running_judge(judge_settings(None)) as judge:
        assert await _status(judge, LLM_HEALTH_SERVICE) == NOT_SERVING


async def test_the_last_n_calls_failing_degrades_only_the_llm_name(llm: FakeLLM) -> None:
    settings = judge_settings(llm, llm_max_retries=0, llm_degraded_after_failures=3)
    async with running_judge(settings) as judge:
        llm.set_failure("error500")
        for _ in range(2):
            await _failed_compare(judge)
        assert await _status(judge, LLM_HEALTH_SERVICE) == SERVING
        await _failed_compare(judge)
        assert await _status(judge, LLM_HEALTH_SERVICE) == NOT_SERVING
        assert await _status(judge, SERVICE_FULL_NAME) == SERVING


async def test_the_next_success_serves_again(llm: FakeLLM) -> None:
    settings = judge_settings(llm, llm_max_retries=0, llm_degraded_after_failures=2)
    async with running_judge(settings) as judge:
        llm.fail_next("garbage", count=2)
        await _failed_compare(judge)
        await _failed_compare(judge)
        assert await _status(judge, LLM_HEALTH_SERVICE) == NOT_SERVING
        await judge.stub.Compare(COMPARE, timeout=10)
        assert await _status(judge, LLM_HEALTH_SERVICE) == SERVING


async def test_a_success_between_failures_restarts_the_count(llm: FakeLLM) -> None:
    settings = judge_settings(llm, llm_max_retries=0, llm_degraded_after_failures=2)
    async with running_judge(settings) as judge:
        llm.fail_next("error500")
        await _failed_compare(judge)
        await judge.stub.Compare(COMPARE, timeout=10)
        llm.fail_next("error500")
        await _failed_compare(judge)
        assert await _status(judge, LLM_HEALTH_SERVICE) == SERVING


async def test_invalid_requests_and_pass_through_rewrites_do_not_count(llm: FakeLLM) -> None:
    settings = judge_settings(llm, llm_max_retries=0, llm_degraded_after_failures=1)
    async with running_judge(settings) as judge:
        llm.set_failure("error500")
        with pytest.raises(grpc.aio.AioRpcError):
            await judge.stub.Compare(judge_pb2.CompareRequest(fact="x"), timeout=10)
        await judge.stub.Rewrite(judge_pb2.RewriteRequest(query="port of the API"), timeout=10)
        assert await _status(judge, LLM_HEALTH_SERVICE) == SERVING
        assert llm.chat_requests == []


async def test_the_tracker_reports_only_changes() -> None:
    changes: list[bool] = []

    async def listener(healthy: bool) -> None:
        changes.append(healthy)

    health = LLMHealth(degraded_after=2, listener=listener)
    for ok in (False, False, False, True, True, False):
        await health.record(ok)
    assert changes == [False, True]
    assert health.consecutive_failures == 1

"""How Compare and Rewrite fail: fast, with a distinct status, never a hang or a guess."""

from __future__ import annotations

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from mem0_judge import SERVICE_FULL_NAME
from mem0mcp.judge.v1 import judge_pb2
from tests.fakes.llm import FakeLLM
from tests.judge.conftest import RunningJudge, judge_settings, running_judge

pytestmark = pytest.mark.anyio

COMPARE = judge_pb2.CompareRequest(
    fact="We moved the API to port 9000",
    candidates=[judge_pb2.CompareCandidate(memory_id="m1", text="The API listens on port 8080")],
)
QUESTION = judge_pb2.RewriteRequest(query="what port does the API use?")


async def _compare_error(judge: RunningJudge, deadline: float = 10) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await judge.stub.Compare(COMPARE, timeout=deadline)
    return caught.value


async def test_a_non_json_answer_is_internal(judge: RunningJudge, llm: FakeLLM) -> None:
    llm.fail_next("garbage")
    error = await _compare_error(judge)
    assert error.code() == grpc.StatusCode.INTERNAL
    assert "not a chat completion" in (error.details() or "")


async def test_json_of_the_wrong_schema_is_internal(judge: RunningJudge, llm: FakeLLM) -> None:
    llm.responders.insert(0, lambda _: '{"judgements": [{"id": 1, "verdict": "MAYBE"}]}')
    error = await _compare_error(judge)
    assert error.code() == grpc.StatusCode.INTERNAL
    assert "did not match the schema" in (error.details() or "")


async def test_an_answer_missing_a_candidate_is_internal(judge: RunningJudge, llm: FakeLLM) -> None:
    llm.responders.insert(0, lambda _: '{"judgements": []}')
    error = await _compare_error(judge)
    assert error.code() == grpc.StatusCode.INTERNAL
    assert "no judgement for memory ids [1]" in (error.details() or "")


async def test_a_fenced_answer_with_a_reasoning_block_is_accepted(
    judge: RunningJudge, llm: FakeLLM
) -> None:
    llm.responders.insert(
        0,
        lambda _: (
            "<think>port differs</think>\n```json\n"
            '{"judgements": [{"id": 1, "verdict": "SUPERSEDES", "reason": "new port"}]}\n```'
        ),
    )
    response = await judge.stub.Compare(COMPARE, timeout=10)
    assert response.judgements[0].verdict == judge_pb2.VERDICT_SUPERSEDES


async def test_a_rate_limit_then_success_is_retried(judge: RunningJudge, llm: FakeLLM) -> None:
    llm.fail_next("rate_limit", seconds=0)
    response = await judge.stub.Compare(COMPARE, timeout=10)
    assert response.judgements[0].verdict == judge_pb2.VERDICT_SUPERSEDES
    assert len(llm.chat_requests) == 2


async def test_server_errors_past_the_retries_are_unavailable(
    judge: RunningJudge, llm: FakeLLM
) -> None:
    llm.set_failure("error500")
    error = await _compare_error(judge)
    assert error.code() == grpc.StatusCode.UNAVAILABLE
    assert "HTTP 500 (after 3 attempts)" in (error.details() or "")
    assert len(llm.chat_requests) == 3


async def test_a_retry_after_beyond_the_deadline_fails_at_once(
    judge: RunningJudge, llm: FakeLLM
) -> None:
    llm.fail_next("rate_limit", seconds=60)
    error = await _compare_error(judge, deadline=5)
    assert error.code() == grpc.StatusCode.UNAVAILABLE
    assert "would pass the caller's deadline" in (error.details() or "")
    assert len(llm.chat_requests) == 1


async def test_a_hanging_llm_is_cut_off_at_the_callers_deadline(
    judge: RunningJudge, llm: FakeLLM
) -> None:
    llm.set_failure("hang")
    error = await _compare_error(judge, deadline=0.5)
    assert error.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    # Our explanation, sent before the caller's own clock ran out, not grpc's bare timeout.
    assert "caller's deadline" in (error.details() or "")


async def test_a_hanging_llm_without_a_caller_deadline_hits_the_llm_timeout(
    llm: FakeLLM,
) -> None:
    llm.set_failure("hang")
    async with running_judge(judge_settings(llm, llm_timeout_seconds=0.3)) as judge:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await judge.stub.Rewrite(QUESTION)
    assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert "within 0.3s" in (caught.value.details() or "")


async def test_a_rejected_request_is_failed_precondition_without_retries(
    judge: RunningJudge, llm: FakeLLM
) -> None:
    llm.set_failure("unauthorized")
    error = await _compare_error(judge)
    assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "HTTP 401" in (error.details() or "")
    assert len(llm.chat_requests) == 1


async def test_an_unreachable_llm_is_unavailable(llm: FakeLLM) -> None:
    settings = judge_settings(llm, llm_base_url="http://127.0.0.1:9/v1", llm_max_retries=1)
    async with running_judge(settings) as judge:
        error = await _compare_error(judge)
    assert error.code() == grpc.StatusCode.UNAVAILABLE
    assert "unreachable" in (error.details() or "")


async def test_without_an_llm_every_call_is_unavailable_at_once() -> None:
    async with running_judge(judge_settings(None)) as judge:
        errors = []
        for call in (
            judge.stub.Compare(COMPARE, timeout=10),
            judge.stub.Rewrite(QUESTION, timeout=10),
            judge.stub.Rewrite(judge_pb2.RewriteRequest(query="API port"), timeout=10),
        ):
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await call
            errors.append(caught.value)
    assert {e.code() for e in errors} == {grpc.StatusCode.UNAVAILABLE}
    assert all("JUDGE_LLM_BASE_URL" in (e.details() or "") for e in errors)


async def test_without_an_llm_health_reports_the_judge_not_serving() -> None:
    async with running_judge(judge_settings(None)) as judge:
        health = health_pb2_grpc.HealthStub(judge.channel)
        judge_status = await health.Check(health_pb2.HealthCheckRequest(service=SERVICE_FULL_NAME))
        process_status = await health.Check(health_pb2.HealthCheckRequest(service=""))
    assert judge_status.status == health_pb2.HealthCheckResponse.NOT_SERVING
    assert process_status.status == health_pb2.HealthCheckResponse.SERVING


async def test_with_an_llm_health_reports_the_judge_serving(judge: RunningJudge) -> None:
    health = health_pb2_grpc.HealthStub(judge.channel)
    status = await health.Check(health_pb2.HealthCheckRequest(service=SERVICE_FULL_NAME))
    assert status.status == health_pb2.HealthCheckResponse.SERVING

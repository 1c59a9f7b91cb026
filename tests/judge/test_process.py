"""`mem0-judge` as operators run it: a real process configured from the environment."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from mem0_common.env_table import env_names
from mem0_judge import SERVICE_FULL_NAME, JudgeSettings
from mem0mcp.judge.v1 import judge_pb2, judge_pb2_grpc
from tests.fakes.llm import FakeLLM
from tests.support.processes import ServiceProcess

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]


def _env(**values: str) -> dict[str, str]:
    """The test's environment minus any JUDGE_* settings, plus `values`."""
    cleared = {name: "" for name in env_names([JudgeSettings]) if name in os.environ}
    return {**cleared, "JUDGE_PORT": "0", "JUDGE_METRICS_PORT": "0", **values}


@pytest.fixture
def unconfigured() -> Iterator[ServiceProcess]:
    with ServiceProcess(["mem0-judge"], _env()) as process:
        yield process


def test_without_an_llm_it_starts_and_says_why_it_cannot_judge(
    unconfigured: ServiceProcess,
) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{unconfigured.port}") as channel:
        status = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=SERVICE_FULL_NAME), timeout=10
        )
        with pytest.raises(grpc.RpcError) as caught:
            judge_pb2_grpc.JudgeServiceStub(channel).Rewrite(
                judge_pb2.RewriteRequest(query="why?"), timeout=10
            )
    assert status.status == health_pb2.HealthCheckResponse.NOT_SERVING
    assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
    assert "JUDGE_LLM_BASE_URL" in unconfigured.log_text()


def test_it_judges_with_an_llm_and_stops_cleanly_on_sigterm(llm: FakeLLM) -> None:
    env = _env(JUDGE_LLM_BASE_URL=llm.base_url, JUDGE_LLM_MODEL=llm.model)
    with ServiceProcess(["mem0-judge"], env) as process:
        with grpc.insecure_channel(f"127.0.0.1:{process.port}") as channel:
            response = judge_pb2_grpc.JudgeServiceStub(channel).Rewrite(
                judge_pb2.RewriteRequest(query="what port does the API use?"), timeout=10
            )
        exit_code = process.stop(signal.SIGTERM)
    assert response.statement == "The API uses port"
    assert exit_code == 0
    log = process.log_text()
    assert "judge listening on grpc://127.0.0.1:" in log
    assert "Rewrite OK" in log

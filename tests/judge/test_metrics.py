"""The judge's own metrics move with what happens: cache results and errors by kind."""

from __future__ import annotations

import grpc
import pytest
from prometheus_client import REGISTRY

from mem0mcp.judge.v1 import judge_pb2
from tests.fakes.llm import FakeLLM
from tests.judge.conftest import RunningJudge

pytestmark = pytest.mark.anyio


def _sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


async def test_rewrite_cache_results_are_counted(judge: RunningJudge) -> None:
    before = {r: _sample("mem0mcp_judge_rewrite_cache_total", result=r) for r in ("hit", "miss")}
    for _ in range(3):
        await judge.stub.Rewrite(judge_pb2.RewriteRequest(query="who owns the API?"), timeout=10)
    assert _sample("mem0mcp_judge_rewrite_cache_total", result="miss") - before["miss"] == 1
    assert _sample("mem0mcp_judge_rewrite_cache_total", result="hit") - before["hit"] == 2


async def test_llm_errors_are_counted_by_kind_and_latency_is_observed(
    judge: RunningJudge, llm: FakeLLM
) -> None:
    errors = {"operation": "rewrite", "kind": "bad_answer"}
    before_errors = _sample("mem0mcp_judge_llm_errors_total", **errors)
    before_calls = _sample("mem0mcp_judge_llm_seconds_count", operation="rewrite")
    llm.fail_next("garbage")
    with pytest.raises(grpc.aio.AioRpcError):
        await judge.stub.Rewrite(judge_pb2.RewriteRequest(query="who runs CI?"), timeout=10)
    assert _sample("mem0mcp_judge_llm_errors_total", **errors) - before_errors == 1
    assert _sample("mem0mcp_judge_llm_seconds_count", operation="rewrite") - before_calls == 1

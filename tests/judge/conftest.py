"""The judge under test: a real gRPC server on a loopback port, talking real HTTP to FakeLLM."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import grpc
import pytest

from mem0_judge import JudgeServer, JudgeSettings, build_server
from mem0mcp.judge.v1 import judge_pb2_grpc
from tests.fakes.judge_responder import judge_responder
from tests.fakes.llm import FakeLLM, extraction_responder


@dataclass
class RunningJudge:
    server: JudgeServer
    channel: grpc.aio.Channel
    stub: judge_pb2_grpc.JudgeServiceStub


@pytest.fixture(scope="session")
def _judge_llm_server() -> Iterator[FakeLLM]:
    with FakeLLM(responders=[judge_responder, extraction_responder]) as llm:
        yield llm


@pytest.fixture
def llm(_judge_llm_server: FakeLLM) -> Iterator[FakeLLM]:
    """A FakeLLM answering the judge's prompts; failures, latency and responders reset."""
    responders = list(_judge_llm_server.responders)
    _judge_llm_server.reset()
    yield _judge_llm_server
    _judge_llm_server.reset()
    _judge_llm_server.responders[:] = responders


def judge_settings(llm: FakeLLM | None, **overrides: Any) -> JudgeSettings:
    values: dict[str, Any] = {
        "port": 0,
        "metrics_port": -1,
        "llm_base_url": None if llm is None else llm.base_url,
        "llm_model": None if llm is None else llm.model,
        "llm_timeout_seconds": 5.0,
        "llm_max_retries": 2,
        "grace_seconds": 1.0,
    }
    return JudgeSettings(**{**values, **overrides})


@asynccontextmanager
async def running_judge(settings: JudgeSettings) -> AsyncIterator[RunningJudge]:
    server = build_server(settings)
    await server.start()
    channel = grpc.aio.insecure_channel(server.address)
    try:
        yield RunningJudge(server, channel, judge_pb2_grpc.JudgeServiceStub(channel))
    finally:
        await channel.close()
        await server.stop(0)
        await server.close_llm()


@pytest.fixture
async def judge(llm: FakeLLM) -> AsyncIterator[RunningJudge]:
    async with running_judge(judge_settings(llm)) as running:
        yield running

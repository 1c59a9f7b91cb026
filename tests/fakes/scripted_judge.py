"""ScriptedJudge: the judge's gRPC API on a loopback port, answering from a test's script.

For the bridge core's fast tests: the verdicts come from a function of (fact, candidate text),
and the judge can be told to fail (a status code), to report that it has no LLM, or to hold
its answers until a test releases them (a slow LLM, without a clock), so every path of
reconcile-on-add runs in milliseconds without an LLM. The real judge service is tested
against the fake LLM elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import anyio
import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from mem0mcp.judge.v1 import judge_pb2, judge_pb2_grpc

Script = Callable[[str, str], judge_pb2.Verdict.ValueType]

SERVICE = judge_pb2.DESCRIPTOR.services_by_name["JudgeService"].full_name


def unrelated(fact: str, text: str) -> judge_pb2.Verdict.ValueType:
    return judge_pb2.VERDICT_UNRELATED


@dataclass
class ScriptedJudge(judge_pb2_grpc.JudgeServiceServicer):
    script: Script = unrelated
    #: A status code every call fails with, or None to answer.
    failure: grpc.StatusCode | None = None
    compares: list[tuple[str, list[str]]] = field(default_factory=list)
    rewrites: list[str] = field(default_factory=list)
    #: The statement a question becomes; None: every query is left as it is.
    rewrite: Callable[[str], str] | None = None
    #: Set: every call waits for it before answering (as behind a slow LLM).
    hold: anyio.Event | None = None

    async def _held(self) -> None:
        if self.hold is not None:
            await self.hold.wait()

    async def Compare(  # noqa: N802 - gRPC method name
        self, request: judge_pb2.CompareRequest, context: grpc.aio.ServicerContext
    ) -> judge_pb2.CompareResponse:
        self.compares.append((request.fact, [c.text for c in request.candidates]))
        await self._held()
        if self.failure is not None:
            await context.abort(self.failure, "scripted failure")
        return judge_pb2.CompareResponse(
            judgements=[
                judge_pb2.Judgement(
                    memory_id=c.memory_id, verdict=self.script(request.fact, c.text)
                )
                for c in request.candidates
            ]
        )

    async def Rewrite(  # noqa: N802 - gRPC method name
        self, request: judge_pb2.RewriteRequest, context: grpc.aio.ServicerContext
    ) -> judge_pb2.RewriteResponse:
        self.rewrites.append(request.query)
        await self._held()
        if self.failure is not None:
            await context.abort(self.failure, "scripted failure")
        if self.rewrite is None:
            return judge_pb2.RewriteResponse(statement=request.query, rewritten=False)
        return judge_pb2.RewriteResponse(statement=self.rewrite(request.query), rewritten=True)


class RunningJudge:
    """A ScriptedJudge served on 127.0.0.1 with a health service (`has_llm` drives it)."""

    def __init__(self, judge: ScriptedJudge) -> None:
        self.judge = judge
        self.health = health.aio.HealthServicer()
        self.server = grpc.aio.server()
        judge_pb2_grpc.add_JudgeServiceServicer_to_server(judge, self.server)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        self.address = f"127.0.0.1:{self.port}"

    async def start(self) -> None:
        await self.server.start()
        await self.set_llm(has_llm=True)

    async def set_llm(self, *, has_llm: bool) -> None:
        status = (
            health_pb2.HealthCheckResponse.SERVING
            if has_llm
            else health_pb2.HealthCheckResponse.NOT_SERVING
        )
        await self.health.set(SERVICE, status)

    async def stop(self) -> None:
        await self.server.stop(0)

"""Client of the judge: verdicts on a new fact against close memories, and query rewriting.

Both calls are best-effort: a `PeerFailure` means no judgement, and the caller proceeds without
one, saying why.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

import anyio

from mem0_bridge._grpc import GrpcPeer, PeerFailure
from mem0mcp.judge.v1 import judge_pb2, judge_pb2_grpc

#: How long a judge's "no LLM" health answer is trusted before it is asked again.
HEALTH_TTL_SECONDS = 1.0
#: The health name under which the judge reports whether its LLM answered its latest calls.
LLM_HEALTH_SUFFIX = ".llm"


class Verdict(enum.Enum):
    SAME = "same"
    SUPERSEDES = "supersedes"
    UNRELATED = "unrelated"


_VERDICTS = {
    judge_pb2.VERDICT_SAME: Verdict.SAME,
    judge_pb2.VERDICT_SUPERSEDES: Verdict.SUPERSEDES,
}


#: The name the judge reports its service's health under: NOT_SERVING without an LLM.
_SERVICE = judge_pb2.DESCRIPTOR.services_by_name["JudgeService"].full_name


class JudgeClient:
    def __init__(self, address: str, timeout_seconds: float) -> None:
        stub = judge_pb2_grpc.JudgeServiceStub
        self.peer = GrpcPeer("judge", address, timeout_seconds, stub, health_service=_SERVICE)
        self._health = "serving"
        self._health_checked_at = -HEALTH_TTL_SECONDS

    async def aclose(self) -> None:
        await self.peer.aclose()

    async def usable(self) -> PeerFailure | None:
        """None when a verdict can be asked for; why not when the judge is off or has no LLM.

        A judge without an LLM answers every Compare with UNAVAILABLE, which would look like an
        outage on each add; its health service says NOT_SERVING instead, which is remembered
        for a second (so a judge restarted with an LLM is used again at once). A health check
        that fails says nothing: the call is tried and fails on its own terms.
        """
        now = anyio.current_time()
        if now >= self._health_checked_at + HEALTH_TTL_SECONDS:
            self._health = await self.peer.probe()
            self._health_checked_at = anyio.current_time()
        if self._health == "off":
            return self.peer.off
        if self._health == "not serving":
            return PeerFailure(self.peer.name, None, "no LLM configured")
        return None

    async def compare(
        self, fact: str, candidates: Sequence[tuple[str, str]]
    ) -> dict[str, Verdict] | PeerFailure:
        """Verdict per candidate memory id."""
        request = judge_pb2.CompareRequest(
            fact=fact,
            candidates=[
                judge_pb2.CompareCandidate(memory_id=memory_id, text=text)
                for memory_id, text in candidates
            ],
        )
        answer = await self.peer.call(lambda stub: stub.Compare, request)
        if isinstance(answer, PeerFailure):
            return answer
        return {j.memory_id: _VERDICTS.get(j.verdict, Verdict.UNRELATED) for j in answer.judgements}

    async def rewrite(self, query: str, deadline: float) -> str | PeerFailure | None:
        """The statement a question-style query becomes; None when it already was one."""
        answer = await self.peer.call(
            lambda stub: stub.Rewrite, judge_pb2.RewriteRequest(query=query), deadline=deadline
        )
        if isinstance(answer, PeerFailure):
            return answer
        statement = answer.statement.strip()
        return statement if answer.rewritten and statement else None

"""Client of the judge: verdicts on a new fact against close memories, and query rewriting.

Both calls are best-effort: None means no judgement, and the caller proceeds without one.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

import grpc

from mem0_bridge._grpc import GrpcPeer
from mem0mcp.judge.v1 import judge_pb2, judge_pb2_grpc


class Verdict(enum.Enum):
    SAME = "same"
    SUPERSEDES = "supersedes"
    UNRELATED = "unrelated"


@dataclass(frozen=True)
class Rewrite:
    #: The declarative statement; None when the query already was one (or over budget).
    statement: str | None
    over_budget: bool = False


_VERDICTS = {
    judge_pb2.VERDICT_SAME: Verdict.SAME,
    judge_pb2.VERDICT_SUPERSEDES: Verdict.SUPERSEDES,
}


class JudgeClient:
    def __init__(self, address: str, timeout_seconds: float) -> None:
        self.peer = GrpcPeer(
            "judge",
            address,
            timeout_seconds,
            health_service=judge_pb2.DESCRIPTOR.services_by_name["JudgeService"].full_name,
        )
        self._stub = (
            judge_pb2_grpc.JudgeServiceStub(self.peer.channel)
            if self.peer.channel is not None
            else None
        )

    async def aclose(self) -> None:
        await self.peer.aclose()

    async def compare(
        self, fact: str, candidates: Sequence[tuple[str, str]]
    ) -> dict[str, Verdict] | None:
        """Verdict per candidate memory id, or None when the judge could not say."""
        if self._stub is None:
            return None
        request = judge_pb2.CompareRequest(
            fact=fact,
            candidates=[
                judge_pb2.CompareCandidate(memory_id=memory_id, text=text)
                for memory_id, text in candidates
            ],
        )
        answer = await self.peer.call(self._stub.Compare, request)
        if answer is None:
            return None
        return {j.memory_id: _VERDICTS.get(j.verdict, Verdict.UNRELATED) for j in answer.judgements}

    async def rewrite(self, query: str, deadline: float) -> Rewrite | None:
        """The statement a question-style query becomes; None when the judge could not say.

        A call cut by `deadline` (the search's latency budget) says so in `over_budget`.
        """
        if self._stub is None:
            return None
        answer, code = await self.peer.try_call(
            self._stub.Rewrite, judge_pb2.RewriteRequest(query=query), deadline=deadline
        )
        if code is grpc.StatusCode.DEADLINE_EXCEEDED:
            return Rewrite(statement=None, over_budget=True)
        if answer is None:
            return None
        statement = answer.statement.strip()
        return Rewrite(statement if answer.rewritten and statement else None)

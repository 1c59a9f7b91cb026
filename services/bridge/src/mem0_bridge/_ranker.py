"""Client of the ranker: exact-content dedupe, mention counts and reranking.

Every method returns None when the ranker is off, down or too slow; callers say so to the agent
and carry on (search in mem0's order, adds without dedupe).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mem0_bridge._grpc import GrpcPeer
from mem0mcp.ranker.v1 import ranker_pb2, ranker_pb2_grpc


@dataclass(frozen=True)
class RankCandidate:
    memory_id: str
    similarity: float
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class Ranked:
    memory_id: str
    score: float
    similarity: float
    mentions: int
    recency: float


@dataclass(frozen=True)
class DuplicateCheck:
    #: The memory an identical text recorded within the window became, else None.
    memory_id: str | None


@dataclass(frozen=True)
class Reinforcement:
    counted: bool
    mentions: int


class RankerClient:
    def __init__(self, address: str, timeout_seconds: float) -> None:
        self.peer = GrpcPeer(
            "ranker",
            address,
            timeout_seconds,
            health_service=ranker_pb2.DESCRIPTOR.services_by_name["RankerService"].full_name,
        )
        self._stub = (
            ranker_pb2_grpc.RankerServiceStub(self.peer.channel)
            if self.peer.channel is not None
            else None
        )

    async def aclose(self) -> None:
        await self.peer.aclose()

    async def check_duplicate(self, scope: str, text: str) -> DuplicateCheck | None:
        """Was identical text recorded in the window? None when the ranker is off or down."""
        if self._stub is None:
            return None
        answer = await self.peer.call(
            self._stub.CheckDuplicate, ranker_pb2.CheckDuplicateRequest(scope=scope, text=text)
        )
        if answer is None:
            return None
        return DuplicateCheck(answer.memory_id if answer.duplicate and answer.memory_id else None)

    async def record_stored(self, scope: str, text: str, memory_id: str) -> bool:
        if self._stub is None:
            return False
        answer = await self.peer.call(
            self._stub.RecordStored,
            ranker_pb2.RecordStoredRequest(scope=scope, text=text, memory_id=memory_id),
        )
        return answer is not None

    async def reinforce(self, scope: str, memory_id: str) -> Reinforcement | None:
        if self._stub is None:
            return None
        answer = await self.peer.call(
            self._stub.Reinforce, ranker_pb2.ReinforceRequest(memory_id=memory_id, scope=scope)
        )
        if answer is None:
            return None
        return Reinforcement(counted=answer.counted, mentions=answer.mentions)

    async def rerank(self, candidates: Sequence[RankCandidate], limit: int) -> list[Ranked] | None:
        if self._stub is None:
            return None
        request = ranker_pb2.RerankRequest(
            candidates=[
                ranker_pb2.Candidate(
                    memory_id=c.memory_id,
                    similarity=min(max(c.similarity, 0.0), 1.0),
                    created_at=c.created_at,
                    updated_at=c.updated_at,
                )
                for c in candidates
            ],
            limit=limit,
        )
        answer = await self.peer.call(self._stub.Rerank, request)
        if answer is None:
            return None
        return [
            Ranked(
                memory_id=r.memory_id,
                score=r.score,
                similarity=r.similarity,
                mentions=r.mentions,
                recency=r.recency,
            )
            for r in answer.results
        ]

    async def forget(self, memory_ids: Sequence[str] = (), *, everything: bool = False) -> bool:
        if self._stub is None:
            return False
        request = (
            ranker_pb2.ForgetRequest(everything=True)
            if everything
            else ranker_pb2.ForgetRequest(memories=ranker_pb2.MemoryIds(memory_ids=memory_ids))
        )
        return await self.peer.call(self._stub.Forget, request) is not None

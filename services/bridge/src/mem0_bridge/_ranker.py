"""Client of the ranker: exact-content dedupe, mention counts, reranking, pending verdicts and
the leases that order a scope's writes across bridge replicas.

Every method returns a `PeerFailure` instead of its answer when the ranker is off, down, slow
or rejected the call; callers say what they skipped and carry on (search in mem0's order, adds
without dedupe).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import grpc

from mem0_bridge._grpc import GrpcPeer, PeerFailure
from mem0mcp.contract import candidate_columns
from mem0mcp.ranker.v1 import ranker_pb2, ranker_pb2_grpc


@dataclass(frozen=True)
class RankCandidate:
    memory_id: str
    similarity: float
    created_at: str
    updated_at: str
    related_ids: Sequence[str] = ()
    #: When a related memory last stated this one's values again (RFC 3339; "" for never).
    restated_at: str = ""
    #: The candidates that state this one's values again in other words (see `restatements`).
    restatement_ids: Sequence[str] = ()


@dataclass(frozen=True)
class Ranked:
    memory_id: str
    score: float
    similarity: float
    mentions: int
    recency: float


@dataclass(frozen=True)
class Reinforcement:
    counted: bool
    mentions: int


@dataclass(frozen=True)
class PendingMemory:
    """A memory stored without a verdict, leased to this bridge for reconciling."""

    scope: str
    memory_id: str
    reason: str
    attempts: int


@dataclass(frozen=True)
class LeaseAnswer:
    """Granted (for `expires_in` seconds), or held by another until `expires_in` at the latest."""

    granted: bool
    expires_in: float


@dataclass(frozen=True)
class Stats:
    mention_rows: int
    dedupe_rows: int
    pending: int


#: The name the ranker reports its service's health under (`GrpcPeer.probe`).
_SERVICE = ranker_pb2.DESCRIPTOR.services_by_name["RankerService"].full_name


#: How a ranker that predates `RerankRequest.columns` refuses them.
_COLUMNS_UNKNOWN = (
    "request: unknown field number "
    f"{ranker_pb2.RerankRequest.DESCRIPTOR.fields_by_name['columns'].number}"
)


def _similarity(value: float) -> float:
    """A similarity within the 0..1 the ranker accepts (mem0's scores may stray past either)."""
    return min(max(value, 0.0), 1.0)


def _columns(candidates: Sequence[RankCandidate]) -> ranker_pb2.CandidateColumns:
    """The candidates as `RerankRequest.columns`, the form the ranker reads fastest."""
    columns = candidate_columns(candidates)
    columns.similarities[:] = list(map(_similarity, columns.similarities))
    return columns


def _messages(candidates: Sequence[RankCandidate]) -> list[ranker_pb2.Candidate]:
    """The candidates as Candidate messages, for a ranker that predates `columns`."""
    return [
        ranker_pb2.Candidate(
            memory_id=c.memory_id,
            similarity=_similarity(c.similarity),
            created_at=c.created_at,
            updated_at=c.updated_at,
            related_ids=c.related_ids,
            restated_at=c.restated_at,
            restatement_ids=c.restatement_ids,
        )
        for c in candidates
    ]


class RankerClient:
    def __init__(self, address: str, timeout_seconds: float) -> None:
        stub = ranker_pb2_grpc.RankerServiceStub
        self.peer = GrpcPeer("ranker", address, timeout_seconds, stub, health_service=_SERVICE)
        #: Set once a ranker refused `RerankRequest.columns` (it predates them).
        self._candidate_messages = False

    async def aclose(self) -> None:
        await self.peer.aclose()

    async def check_duplicate(self, scope: str, text: str) -> str | PeerFailure | None:
        """The memory identical text recorded within the window became, else None (also while
        adds of the scope await reconciling)."""
        answer = await self.peer.call(
            lambda stub: stub.CheckDuplicate,
            ranker_pb2.CheckDuplicateRequest(scope=scope, text=text),
        )
        if isinstance(answer, PeerFailure):
            return answer
        # With facts of the scope awaiting a verdict, the record may vouch for a value that an
        # unreconciled add has since changed: judging the add is the safe answer then.
        if answer.scope_pending:
            return None
        return answer.memory_id if answer.duplicate and answer.memory_id else None

    async def record_stored(
        self, scope: str, text: str, memory_id: str, *, replaces: bool = False
    ) -> PeerFailure | None:
        """Record `text` as stored in `memory_id`; `replaces`: it is the memory's text now, so
        the records of its old text go in the same transaction."""
        return await self.peer.send(
            lambda stub: stub.RecordStored,
            ranker_pb2.RecordStoredRequest(
                scope=scope, text=text, memory_id=memory_id, replaces=replaces
            ),
        )

    async def reinforce(self, scope: str, memory_id: str) -> Reinforcement | PeerFailure:
        answer = await self.peer.call(
            lambda stub: stub.Reinforce,
            ranker_pb2.ReinforceRequest(memory_id=memory_id, scope=scope),
        )
        if isinstance(answer, PeerFailure):
            return answer
        return Reinforcement(counted=answer.counted, mentions=answer.mentions)

    async def fold(self, scope: str, into: str, others: Sequence[str]) -> int | PeerFailure:
        """Carry the mentions of `others` (removed copies) over to `into`; its count after."""
        answer = await self.peer.call(
            lambda stub: stub.Fold,
            ranker_pb2.FoldRequest(scope=scope, into_memory_id=into, from_memory_ids=others),
        )
        return answer if isinstance(answer, PeerFailure) else answer.mentions

    async def rerank(
        self, candidates: Sequence[RankCandidate], limit: int
    ) -> list[Ranked] | PeerFailure:
        request = (
            ranker_pb2.RerankRequest(candidates=_messages(candidates), limit=limit)
            if self._candidate_messages
            else ranker_pb2.RerankRequest(columns=_columns(candidates), limit=limit)
        )
        answer = await self.peer.call(lambda stub: stub.Rerank, request)
        if (
            isinstance(answer, PeerFailure)
            and not self._candidate_messages
            and answer.code is grpc.StatusCode.INVALID_ARGUMENT
            and answer.detail.startswith(_COLUMNS_UNKNOWN)
        ):
            # A ranker older than `columns`: send it Candidate messages from now on.
            self._candidate_messages = True
            return await self.rerank(candidates, limit)
        if isinstance(answer, PeerFailure):
            return answer
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

    async def forget(
        self, memory_ids: Sequence[str] = (), *, everything: bool = False
    ) -> PeerFailure | None:
        request = (
            ranker_pb2.ForgetRequest(everything=True)
            if everything
            else ranker_pb2.ForgetRequest(memories=ranker_pb2.MemoryIds(memory_ids=memory_ids))
        )
        return await self.peer.send(lambda stub: stub.Forget, request)

    async def mark_pending(self, scope: str, memory_id: str, reason: str) -> PeerFailure | None:
        return await self.peer.send(
            lambda stub: stub.MarkPending,
            ranker_pb2.MarkPendingRequest(scope=scope, memory_id=memory_id, reason=reason[:500]),
        )

    async def claim_pending(
        self, limit: int, lease_seconds: float
    ) -> list[PendingMemory] | PeerFailure:
        answer = await self.peer.call(
            lambda stub: stub.ClaimPending,
            ranker_pb2.ClaimPendingRequest(limit=limit, lease_seconds=lease_seconds),
        )
        if isinstance(answer, PeerFailure):
            return answer
        return [
            PendingMemory(
                scope=p.scope, memory_id=p.memory_id, reason=p.reason, attempts=p.attempts
            )
            for p in answer.pending
        ]

    async def resolve_pending(self, memory_ids: Sequence[str]) -> PeerFailure | None:
        return await self.peer.send(
            lambda stub: stub.ResolvePending,
            ranker_pb2.ResolvePendingRequest(memory_ids=memory_ids),
        )

    async def acquire_lease(
        self, key: str, holder: str, ttl_seconds: float
    ) -> LeaseAnswer | PeerFailure:
        """Take (or, held by `holder` already, extend) the lease `key` for `ttl_seconds`."""
        answer = await self.peer.call(
            lambda stub: stub.AcquireLease,
            ranker_pb2.AcquireLeaseRequest(key=key, holder=holder, ttl_seconds=ttl_seconds),
        )
        if isinstance(answer, PeerFailure):
            return answer
        return LeaseAnswer(granted=answer.granted, expires_in=answer.expires_in_seconds)

    async def release_lease(self, key: str, holder: str) -> PeerFailure | None:
        return await self.peer.send(
            lambda stub: stub.ReleaseLease, ranker_pb2.ReleaseLeaseRequest(key=key, holder=holder)
        )

    async def stats(self) -> Stats | PeerFailure:
        answer = await self.peer.call(lambda stub: stub.GetStats, ranker_pb2.GetStatsRequest())
        if isinstance(answer, PeerFailure):
            return answer
        return Stats(answer.mention_rows, answer.dedupe_rows, answer.pending_rows)

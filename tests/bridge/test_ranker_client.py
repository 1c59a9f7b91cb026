"""The bridge's ranker client sends candidates as columns, and Candidate messages to a ranker
that predates columns (so upgrading the bridge first does not stop reranking)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
import pytest
from google.protobuf.unknown_fields import UnknownFieldSet

from mem0_bridge._ranker import RankCandidate, RankerClient
from mem0mcp.ranker.v1 import ranker_pb2 as pb

pytestmark = pytest.mark.anyio

RERANK = "/mem0mcp.ranker.v1.RankerService/Rerank"
COLUMNS = pb.RerankRequest.DESCRIPTOR.fields_by_name["columns"].number


class _Ranker:
    """A Rerank that answers the candidates in the order it got them; `old` refuses columns as
    a ranker built before them does (an unknown field)."""

    def __init__(self, *, old: bool) -> None:
        self.old = old
        self.requests: list[pb.RerankRequest] = []

    async def rerank(self, data: bytes, context: grpc.aio.ServicerContext) -> bytes:
        request = pb.RerankRequest.FromString(data)
        self.requests.append(request)
        if self.old and request.HasField("columns"):
            # What the old ranker's parser saw: field 3 unknown, answered as such.
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, f"request: unknown field number {COLUMNS}"
            )
        ids = list(request.columns.memory_ids) or [c.memory_id for c in request.candidates]
        return pb.RerankResponse(
            results=[pb.ScoredCandidate(memory_id=i, score=1.0, recency=1.0) for i in ids]
        ).SerializeToString()


async def _serve(ranker: _Ranker) -> AsyncIterator[RankerClient]:
    server = grpc.aio.server()
    handlers = {"Rerank": grpc.unary_unary_rpc_method_handler(ranker.rerank)}
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("mem0mcp.ranker.v1.RankerService", handlers),)
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    client = RankerClient(f"127.0.0.1:{port}", timeout_seconds=5)
    try:
        yield client
    finally:
        await client.aclose()
        await server.stop(None)


@pytest.fixture
async def current() -> AsyncIterator[tuple[_Ranker, RankerClient]]:
    ranker = _Ranker(old=False)
    async for client in _serve(ranker):
        yield ranker, client


@pytest.fixture
async def old() -> AsyncIterator[tuple[_Ranker, RankerClient]]:
    ranker = _Ranker(old=True)
    async for client in _serve(ranker):
        yield ranker, client


CANDIDATES = [
    RankCandidate("a", 0.9, "2026-01-01T00:00:00Z", "", related_ids=("b",)),
    RankCandidate("b", 1.5, "2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z"),
    RankCandidate("c", 0.5, "", "", restated_at="2026-01-04T00:00:00Z", restatement_ids=("a",)),
]


async def test_rerank_sends_the_candidates_as_columns(
    current: tuple[_Ranker, RankerClient],
) -> None:
    ranker, client = current
    ranked = await client.rerank(CANDIDATES, limit=3)
    assert [r.memory_id for r in ranked] == ["a", "b", "c"]  # type: ignore[union-attr]
    (request,) = ranker.requests
    assert not request.candidates
    assert request.columns == pb.CandidateColumns(
        memory_ids=["a", "b", "c"],
        similarities=[0.9, 1.0, 0.5],  # clamped to [0, 1] as before
        created_at=["2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z", ""],
        updated_at=["", "2026-01-03T00:00:00Z", ""],
        restated_at=["", "", "2026-01-04T00:00:00Z"],
        related_ids=["b"],
        related_counts=[1, 0, 0],
        restatement_ids=["a"],
        restatement_counts=[0, 0, 1],
    )
    assert request.limit == 3
    assert not len(UnknownFieldSet(request))


async def test_rerank_leaves_out_the_columns_no_candidate_fills(
    current: tuple[_Ranker, RankerClient],
) -> None:
    ranker, client = current
    await client.rerank([RankCandidate("a", 0.5, "2026-01-01T00:00:00Z", "")], limit=1)
    columns = ranker.requests[0].columns
    assert [f.name for f, _ in columns.ListFields()] == [
        "memory_ids",
        "similarities",
        "created_at",
        "updated_at",
    ]


async def test_a_ranker_that_predates_columns_gets_candidate_messages_from_then_on(
    old: tuple[_Ranker, RankerClient],
) -> None:
    ranker, client = old
    first = await client.rerank(CANDIDATES, limit=3)
    second = await client.rerank(CANDIDATES[:1], limit=1)
    assert [r.memory_id for r in first] == ["a", "b", "c"]  # type: ignore[union-attr]
    assert [r.memory_id for r in second] == ["a"]  # type: ignore[union-attr]
    # Columns once (refused), then the same candidates as messages, and messages since.
    assert [r.HasField("columns") for r in ranker.requests] == [True, False, False]
    assert ranker.requests[1].candidates[2] == pb.Candidate(
        memory_id="c",
        similarity=0.5,
        restated_at="2026-01-04T00:00:00Z",
        restatement_ids=["a"],
    )

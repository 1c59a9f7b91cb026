"""Input the database cannot hold, or bytes that are no message at all, refused as
INVALID_ARGUMENT by a real ranker on either backend, with nothing written."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
from google.protobuf.message import Message

from mem0_ranker import SERVICE_NAME, RankerSettings, Store, create_server
from mem0mcp.ranker.v1 import ranker_pb2 as pb
from mem0mcp.ranker.v1 import ranker_pb2_grpc
from tests.ranker.conftest import open_backend

pytestmark = pytest.mark.anyio

NOW_ISO = "2026-12-02T12:00:00Z"


def _identity(data: bytes) -> bytes:
    return data


@pytest.fixture
async def served(
    backend: str, backend_url: str, tmp_path: Path
) -> AsyncIterator[tuple[grpc.aio.Channel, Store]]:
    store = await open_backend(backend, tmp_path, backend_url)
    server = create_server(RankerSettings(port=0, metrics_port=-1), store)
    await server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            yield channel, store
    finally:
        await server.stop(grace=1)
        await store.close()


NUL_REQUESTS: list[tuple[str, Message, str]] = [
    ("Reinforce", pb.ReinforceRequest(memory_id="m\x001", scope="u"), "memory_id: "),
    ("Reinforce", pb.ReinforceRequest(memory_id="m1", scope="u\x00"), "scope: "),
    ("RecordStored", pb.RecordStoredRequest(scope="u", text="t", memory_id="\x00"), "memory_id: "),
    ("RecordStored", pb.RecordStoredRequest(scope="\x00u", text="t", memory_id="m"), "scope: "),
    ("CheckDuplicate", pb.CheckDuplicateRequest(scope="u\x00", text="t"), "scope: "),
    (
        "Rerank",
        pb.RerankRequest(
            candidates=[pb.Candidate(memory_id="m\x00", similarity=0.5, created_at=NOW_ISO)]
        ),
        "candidates[0].memory_id: ",
    ),
    (
        "Forget",
        pb.ForgetRequest(memories=pb.MemoryIds(memory_ids=["ok", "m\x00"])),
        "memories.memory_ids[1]: ",
    ),
    ("Forget", pb.ForgetRequest(scope="u\x00"), "scope: "),
    (
        "Fold",
        pb.FoldRequest(scope="u", into_memory_id="m\x00", from_memory_ids=["m2"]),
        "into_memory_id: ",
    ),
    (
        "Fold",
        pb.FoldRequest(scope="u", into_memory_id="m1", from_memory_ids=["m2\x00"]),
        "from_memory_ids[0]: ",
    ),
    ("MarkPending", pb.MarkPendingRequest(scope="u", memory_id="m1", reason="x\x00"), "reason: "),
    ("ResolvePending", pb.ResolvePendingRequest(memory_ids=["\x00"]), "memory_ids[0]: "),
]


@pytest.mark.parametrize(
    ("method", "request_message", "field"),
    NUL_REQUESTS,
    ids=[f"{m}-{i}" for i, (m, _, _) in enumerate(NUL_REQUESTS)],
)
async def test_a_nul_in_an_id_or_scope_is_invalid_argument_naming_the_field(
    served: tuple[grpc.aio.Channel, Store], method: str, request_message: Message, field: str
) -> None:
    channel, store = served
    await ranker_pb2_grpc.RankerServiceStub(channel).Reinforce(
        pb.ReinforceRequest(memory_id="kept", scope="u")
    )
    before = await store.stats()

    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await getattr(ranker_pb2_grpc.RankerServiceStub(channel), method)(request_message)

    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert f"{field}must not contain a NUL character" in (raised.value.details() or "")
    assert await store.stats() == before


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(b"\xff\xff\xff\xff", id="truncated-varint"),
        pytest.param(b"\x0a\x02\xed\xa0", id="string-not-utf8"),  # memory_id: a lone surrogate
    ],
)
async def test_bytes_that_are_not_the_message_are_invalid_argument_and_change_nothing(
    served: tuple[grpc.aio.Channel, Store], raw: bytes
) -> None:
    channel, store = served
    reinforce = channel.unary_unary(f"/{SERVICE_NAME}/Reinforce", _identity, _identity)
    before = await store.stats()

    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await reinforce(raw)

    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "not a valid Reinforce request" in (raised.value.details() or "")
    assert await store.stats() == before

"""GrpcPeer spreads calls over every address its target names (replicas behind one name)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from mem0_bridge._grpc import GrpcPeer, PeerFailure
from mem0_common import GrpcServer, GrpcServiceSettings

pytestmark = pytest.mark.anyio


class _CountingHealth(health_pb2_grpc.HealthServicer):  # type: ignore[misc]
    """A health service that counts the checks it answers, to see which replica got a call."""

    def __init__(self) -> None:
        self.calls = 0

    async def Check(  # noqa: N802 - the generated servicer's method name
        self, request: health_pb2.HealthCheckRequest, context: grpc.aio.ServicerContext
    ) -> health_pb2.HealthCheckResponse:
        self.calls += 1
        return health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.SERVING)


@pytest.fixture
async def replicas() -> AsyncIterator[list[tuple[int, _CountingHealth]]]:
    started: list[tuple[grpc.aio.Server, int, _CountingHealth]] = []
    for _ in range(2):
        servicer = _CountingHealth()
        server = grpc.aio.server()
        health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        started.append((server, port, servicer))
    yield [(port, servicer) for _, port, servicer in started]
    for server, _, _ in started:
        await server.stop(0)


async def test_calls_are_spread_over_every_resolved_replica(
    replicas: list[tuple[int, _CountingHealth]],
) -> None:
    target = "ipv4:" + ",".join(f"127.0.0.1:{port}" for port, _ in replicas)
    peer = GrpcPeer("ranker", target, 5, health_pb2_grpc.HealthStub)
    assert peer.channel is not None
    try:
        for _ in range(20):
            answer = await peer.call(lambda stub: stub.Check, health_pb2.HealthCheckRequest())
            assert answer is not None
    finally:
        await peer.aclose()
    assert all(servicer.calls >= 5 for _, servicer in replicas), [s.calls for _, s in replicas]


async def test_an_empty_address_means_the_service_is_off() -> None:
    peer = GrpcPeer("judge", "  ", 1, health_pb2_grpc.HealthStub)
    assert not peer.configured
    answer = await peer.call(lambda stub: stub.Check, health_pb2.HealthCheckRequest())
    assert isinstance(answer, PeerFailure)
    assert answer.off
    assert answer.note("skipped") == "judge off (MEM0_JUDGE_ADDRESS is empty): skipped"
    assert await peer.send(lambda stub: stub.Check, health_pb2.HealthCheckRequest()) == answer
    assert await peer.probe() == "off"


async def test_the_shared_server_kit_is_a_valid_replica_target() -> None:
    server = GrpcServer("replica", [], GrpcServiceSettings(port=0))
    await server.start()
    peer = GrpcPeer("ranker", f"ipv4:{server.address}", 5, health_pb2_grpc.HealthStub)
    try:
        assert await peer.probe() == "serving"
    finally:
        await peer.aclose()
        await server.stop(0)


async def _health_server(port: int = 0) -> tuple[grpc.aio.Server, int]:
    server = grpc.aio.server()
    health_pb2_grpc.add_HealthServicer_to_server(_CountingHealth(), server)
    bound = server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    return server, bound


@pytest.mark.slow
async def test_a_peer_back_after_a_long_outage_is_used_again_within_a_second() -> None:
    server, port = await _health_server()
    peer = GrpcPeer("ranker", f"127.0.0.1:{port}", 1, health_pb2_grpc.HealthStub)
    assert peer.channel is not None
    try:
        assert not isinstance(
            await peer.call(lambda stub: stub.Check, health_pb2.HealthCheckRequest()), PeerFailure
        )
        await server.stop(0)
        # Calls keep failing through a long outage, so gRPC's reconnect backoff would grow.
        for _ in range(40):
            answer = await peer.call(lambda stub: stub.Check, health_pb2.HealthCheckRequest())
            assert isinstance(answer, PeerFailure)
            assert answer.down
            await anyio.sleep(0.5)
        server, _ = await _health_server(port)
        await anyio.sleep(1.2)
        answer = await peer.call(lambda stub: stub.Check, health_pb2.HealthCheckRequest())
        assert not isinstance(answer, PeerFailure), answer
    finally:
        await peer.aclose()
        await server.stop(0)


async def test_a_contract_error_is_not_reported_as_an_outage() -> None:
    server = grpc.aio.server()
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()  # no service registered: every call is UNIMPLEMENTED
    peer = GrpcPeer("judge", f"127.0.0.1:{port}", 2, health_pb2_grpc.HealthStub)
    assert peer.channel is not None
    try:
        answer = await peer.call(lambda stub: stub.Check, health_pb2.HealthCheckRequest())
    finally:
        await peer.aclose()
        await server.stop(0)
    assert isinstance(answer, PeerFailure)
    assert not answer.down
    assert "rejected the call (UNIMPLEMENTED" in answer.note("skipped")
    assert "unavailable" not in answer.note("skipped")

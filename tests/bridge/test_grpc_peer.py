"""GrpcPeer spreads calls over every address its target names (replicas behind one name)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from mem0_bridge._grpc import GrpcPeer
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
    peer = GrpcPeer("ranker", target, timeout_seconds=5)
    assert peer.channel is not None
    stub = health_pb2_grpc.HealthStub(peer.channel)
    try:
        for _ in range(20):
            assert await peer.call(stub.Check, health_pb2.HealthCheckRequest()) is not None
    finally:
        await peer.aclose()
    assert all(servicer.calls >= 5 for _, servicer in replicas), [s.calls for _, s in replicas]


def test_an_empty_address_means_the_service_is_off() -> None:
    assert not GrpcPeer("judge", "  ", timeout_seconds=1).configured


async def test_the_shared_server_kit_is_a_valid_replica_target() -> None:
    server = GrpcServer("replica", [], GrpcServiceSettings(port=0))
    await server.start()
    peer = GrpcPeer("ranker", f"ipv4:{server.address}", timeout_seconds=5)
    try:
        assert await peer.probe() == "serving"
    finally:
        await peer.aclose()
        await server.stop(0)

"""The shared gRPC plumbing, exercised over real loopback connections."""

from __future__ import annotations

import asyncio
import logging
import urllib.request
from collections.abc import AsyncIterator

import anyio
import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from mem0_common import GrpcServer, GrpcServiceSettings, ServiceRegistration, request_id_var

pytestmark = pytest.mark.anyio

SERVICE = "test.Echo"


class Echo:
    """A tiny servicer: `Ping` echoes bytes and the request id it saw; `Fail` aborts."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.release.set()

    async def ping(self, request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        await self.release.wait()
        return request + b"|" + request_id_var.get().encode()

    async def fail(self, request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "text: must not be empty")
        raise AssertionError("abort returns by raising")


def _identity(b: bytes) -> bytes:
    return b


def _add(servicer: Echo, server: grpc.aio.Server) -> None:
    handlers = {
        "Ping": grpc.unary_unary_rpc_method_handler(servicer.ping, _identity, _identity),
        "Fail": grpc.unary_unary_rpc_method_handler(servicer.fail, _identity, _identity),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))


@pytest.fixture
async def echo() -> Echo:
    return Echo()


@pytest.fixture
async def server(echo: Echo) -> AsyncIterator[GrpcServer]:
    settings = GrpcServiceSettings(port=0, metrics_port=0, grace_seconds=5)
    srv = GrpcServer("test", [ServiceRegistration(SERVICE, echo, _add)], settings)
    await srv.start()
    yield srv
    await srv.stop(0)


@pytest.fixture
async def channel(server: GrpcServer) -> AsyncIterator[grpc.aio.Channel]:
    async with grpc.aio.insecure_channel(server.address) as ch:
        yield ch


def _ping(channel: grpc.aio.Channel) -> grpc.aio.UnaryUnaryMultiCallable:
    return channel.unary_unary(f"/{SERVICE}/Ping", _identity, _identity)


async def _health(channel: grpc.aio.Channel, service: str) -> int:
    stub = health_pb2_grpc.HealthStub(channel)
    response = await stub.Check(health_pb2.HealthCheckRequest(service=service))
    return int(response.status)


async def test_health_reports_serving_for_server_and_each_service(
    channel: grpc.aio.Channel,
) -> None:
    assert await _health(channel, "") == health_pb2.HealthCheckResponse.SERVING
    assert await _health(channel, SERVICE) == health_pb2.HealthCheckResponse.SERVING


async def test_set_serving_false_reports_not_serving(
    server: GrpcServer, channel: grpc.aio.Channel
) -> None:
    await server.set_serving(SERVICE, False)
    assert await _health(channel, SERVICE) == health_pb2.HealthCheckResponse.NOT_SERVING


async def test_reflection_lists_the_service_health_and_reflection(
    channel: grpc.aio.Channel,
) -> None:
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    request = reflection_pb2.ServerReflectionRequest(list_services="")
    names: set[str] = set()
    async for response in stub.ServerReflectionInfo(iter([request])):
        names |= {s.name for s in response.list_services_response.service}
    assert {SERVICE, "grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection"} <= names


async def test_request_id_from_metadata_reaches_the_handler(channel: grpc.aio.Channel) -> None:
    answer = await _ping(channel)(b"hi", metadata=(("x-request-id", "req-42"),))
    assert answer == b"hi|req-42"


async def test_request_id_is_generated_when_the_caller_sends_none(
    channel: grpc.aio.Channel,
) -> None:
    first = (await _ping(channel)(b"a")).split(b"|")[1]
    second = (await _ping(channel)(b"a")).split(b"|")[1]
    assert len(first) == 32
    assert first != second


class _LogWaiter(logging.Handler):
    """Sets `seen` once a record on the call logger carries every one of `parts`."""

    def __init__(self, *parts: str) -> None:
        super().__init__(logging.INFO)
        self.parts = parts
        self.seen = asyncio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if all(part in record.getMessage() for part in self.parts):
            self.seen.set()


async def test_each_call_is_logged_with_method_code_and_request_id(
    channel: grpc.aio.Channel,
) -> None:
    fail = channel.unary_unary(f"/{SERVICE}/Fail", _identity, _identity)
    calls_log = logging.getLogger("mem0_common.calls")
    waiter = _LogWaiter("Fail INVALID_ARGUMENT", "text: must not be empty")
    waiter.addFilter(lambda record: request_id_var.get() == "req-7")
    level = calls_log.level
    calls_log.addHandler(waiter)
    calls_log.setLevel(logging.INFO)
    try:
        with pytest.raises(grpc.aio.AioRpcError) as error:
            await fail(b"", metadata=(("x-request-id", "req-7"),))
        assert error.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        # The server logs once the call is over, which can be after the client has its answer.
        with anyio.fail_after(5):
            await waiter.seen.wait()
    finally:
        calls_log.removeHandler(waiter)
        calls_log.setLevel(level)


async def test_metrics_endpoint_counts_calls_by_code(
    server: GrpcServer, channel: grpc.aio.Channel
) -> None:
    fail = channel.unary_unary(f"/{SERVICE}/Fail", _identity, _identity)
    with pytest.raises(grpc.aio.AioRpcError):
        await fail(b"")
    url = f"http://127.0.0.1:{server.metrics_port}/metrics"
    body = await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=5).read().decode())
    assert 'mem0mcp_grpc_calls_total{code="INVALID_ARGUMENT",method="Fail",service="test"}' in body


async def test_graceful_stop_lets_an_in_flight_call_finish(
    echo: Echo, server: GrpcServer, channel: grpc.aio.Channel
) -> None:
    echo.release.clear()
    in_flight = asyncio.ensure_future(_ping(channel)(b"slow"))
    await asyncio.sleep(0.1)  # let the call reach the handler before stopping
    stopping = asyncio.ensure_future(server.stop(5))
    await asyncio.sleep(0.1)
    echo.release.set()
    assert (await in_flight).startswith(b"slow|")
    await stopping


async def test_calls_after_stop_are_refused(server: GrpcServer, channel: grpc.aio.Channel) -> None:
    await server.stop(0)
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await _ping(channel)(b"late", timeout=2)
    assert error.value.code() is grpc.StatusCode.UNAVAILABLE


async def test_a_request_that_does_not_decode_is_invalid_argument_naming_the_method(
    channel: grpc.aio.Channel,
) -> None:
    check = channel.unary_unary("/grpc.health.v1.Health/Check", _identity, _identity)

    with pytest.raises(grpc.aio.AioRpcError) as error:
        await check(b"\xff\xff\xff\xff")  # field 0 with a truncated varint: not protobuf

    assert error.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "Check" in (error.value.details() or "")

"""The lifecycle every gRPC service shares: health, reflection, interceptors, graceful stop.

Modelled on grpc's own aio examples: the server reports SERVING per service through the standard
health protocol, exposes reflection, and on SIGTERM/SIGINT first flips health to NOT_SERVING (so
load balancers stop sending), then drains in-flight calls for `grace_seconds`.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from mem0_common._interceptors import CallInterceptor
from mem0_common._logging import announce_listening
from mem0_common._metrics import MetricsEndpoint
from mem0_common._settings import GrpcServiceSettings

_log = logging.getLogger("mem0_common.server")

#: Generous message limits: rerank batches carry up to a few thousand candidates.
_OPTIONS = [
    ("grpc.max_receive_message_length", 16 * 1024 * 1024),
    ("grpc.max_send_message_length", 16 * 1024 * 1024),
    ("grpc.so_reuseport", 0),
]


@dataclass(frozen=True)
class ServiceRegistration:
    """One servicer to mount: its full proto name (for health and reflection) and adder."""

    full_name: str
    servicer: object
    add_to_server: Callable[[Any, grpc.aio.Server], None]


class GrpcServer:
    """A started-or-not gRPC server with health, reflection, call logging and metrics."""

    def __init__(
        self,
        name: str,
        registrations: Sequence[ServiceRegistration],
        settings: GrpcServiceSettings,
    ) -> None:
        self.name = name
        self._registrations = list(registrations)
        self._settings = settings
        self._health = health.aio.HealthServicer()
        self._server: grpc.aio.Server | None = None
        self._metrics: MetricsEndpoint | None = None
        self.port: int = 0
        self.metrics_port: int | None = None

    @property
    def metrics_host(self) -> str:
        return self._settings.metrics_host

    @property
    def metrics_token_required(self) -> bool:
        return self._settings.metrics_token is not None

    @property
    def address(self) -> str:
        return f"{self._settings.host}:{self.port}"

    async def start(self) -> None:
        server = grpc.aio.server(interceptors=[CallInterceptor(self.name)], options=_OPTIONS)
        health_pb2_grpc.add_HealthServicer_to_server(self._health, server)
        for reg in self._registrations:
            reg.add_to_server(reg.servicer, server)
        names = [reg.full_name for reg in self._registrations]
        reflection.enable_server_reflection(
            [
                *names,
                health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
                reflection.SERVICE_NAME,
            ],
            server,
        )
        self.port = server.add_insecure_port(f"{self._settings.host}:{self._settings.port}")
        if self.port == 0:
            raise OSError(f"{self.name}: cannot bind {self._settings.host}:{self._settings.port}")
        await server.start()
        self._server = server
        for full_name in ["", *names]:
            await self._health.set(full_name, health_pb2.HealthCheckResponse.SERVING)
        if self._settings.metrics_port >= 0:
            self._metrics = MetricsEndpoint(
                self._settings.metrics_host,
                self._settings.metrics_port,
                self._settings.metrics_token,
            )
            self.metrics_port = self._metrics.port

    async def set_serving(self, full_name: str, serving: bool) -> None:
        """Report one service as (not) serving, e.g. the judge when no LLM is configured."""
        status = (
            health_pb2.HealthCheckResponse.SERVING
            if serving
            else health_pb2.HealthCheckResponse.NOT_SERVING
        )
        await self._health.set(full_name, status)

    async def stop(self, grace: float | None = None) -> None:
        """Flip health to NOT_SERVING, then let in-flight calls finish within the grace period."""
        if self._server is None:
            return
        await self._health.enter_graceful_shutdown()
        await self._server.stop(self._settings.grace_seconds if grace is None else grace)
        self._server = None
        if self._metrics is not None:
            self._metrics.close()
            self._metrics = None


async def serve_until_signalled(
    server: GrpcServer,
    *,
    on_stopped: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """Start `server`, announce its address, run until SIGTERM or SIGINT, then drain and stop."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await server.start()
    if server.metrics_port is not None:
        _log.info(
            "%s metrics on http://%s:%d/metrics%s",
            server.name,
            server.metrics_host,
            server.metrics_port,
            " (bearer token required)" if server.metrics_token_required else "",
        )
    announce_listening(server.name, f"grpc://{server.address}")
    try:
        await stop.wait()
        _log.info("%s stopping: draining in-flight calls", server.name)
        await server.stop()
    finally:
        if on_stopped is not None:
            await on_stopped()
        _log.info("%s stopped", server.name)

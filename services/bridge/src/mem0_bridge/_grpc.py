"""What the ranker and judge clients share: a channel, a deadline per call, and degrading.

Both services are optional helpers of the bridge: when one is down or slow the bridge carries
on without it, so a failed call becomes `None` (logged once per call) rather than an exception.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from mem0_common import REQUEST_ID_HEADER, request_id_var

_Response = TypeVar("_Response")

logger = logging.getLogger(__name__)

#: Spread calls over every address the name resolves to: replicas of the ranker or judge behind
#: one DNS name (compose `deploy.replicas`, a headless Kubernetes service) all get traffic,
#: where gRPC's default pick_first would pin this bridge to one of them.
CHANNEL_OPTIONS = (("grpc.lb_policy_name", "round_robin"),)


class GrpcPeer:
    """A channel to one optional gRPC service; `address` empty means the service is off."""

    def __init__(
        self, name: str, address: str, timeout_seconds: float, *, health_service: str = ""
    ) -> None:
        self.name = name
        #: Probed by /readyz and selftest: the service's own health, not just the process's
        #: (the judge process serves, yet reports its service NOT_SERVING without an LLM).
        self.health_service = health_service
        self.address = address.strip()
        self.timeout_seconds = timeout_seconds
        self.channel: grpc.aio.Channel | None = (
            grpc.aio.insecure_channel(self.address, options=CHANNEL_OPTIONS)
            if self.address
            else None
        )

    @property
    def configured(self) -> bool:
        return self.channel is not None

    async def aclose(self) -> None:
        if self.channel is not None:
            await self.channel.close()

    async def call(
        self,
        method: Callable[..., Awaitable[_Response]],
        request: object,
        *,
        deadline: float | None = None,
    ) -> _Response | None:
        """Run one unary call; any RPC failure is logged and returned as None."""
        response, _ = await self.try_call(method, request, deadline=deadline)
        return response

    async def try_call(
        self,
        method: Callable[..., Awaitable[_Response]],
        request: object,
        *,
        deadline: float | None = None,
    ) -> tuple[_Response | None, grpc.StatusCode | None]:
        """Like `call`, also saying why it failed (a deadline is not an outage)."""
        request_id = request_id_var.get()
        metadata = ((REQUEST_ID_HEADER, request_id),) if request_id != "-" else ()
        try:
            response = await method(
                request, timeout=deadline or self.timeout_seconds, metadata=metadata
            )
        except grpc.aio.AioRpcError as exc:
            logger.warning(
                "%s call failed (%s): %s; continuing without it",
                self.name,
                exc.code().name,
                exc.details(),
            )
            return None, exc.code()
        return response, None

    async def probe(self) -> str:
        """`serving`, `not serving` (answers, cannot do its job), `off` (not configured) or
        `unreachable (CODE)`, for /readyz and selftest."""
        if self.channel is None:
            return "off"
        stub = health_pb2_grpc.HealthStub(self.channel)
        try:
            answer = await stub.Check(
                health_pb2.HealthCheckRequest(service=self.health_service),
                timeout=self.timeout_seconds,
            )
        except grpc.aio.AioRpcError as exc:
            return f"unreachable ({exc.code().name})"
        if answer.status == health_pb2.HealthCheckResponse.SERVING:
            return "serving"
        return "not serving"

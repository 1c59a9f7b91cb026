"""What the ranker and judge clients share: a channel, a deadline per call, and degrading.

Both services are optional helpers of the bridge: when one fails, the bridge carries on without
it, and a failed call comes back as a `PeerFailure` that says what happened, so the caller can
tell the agent what it skipped and why. Only UNAVAILABLE and DEADLINE_EXCEEDED mean the peer is
down or slow; any other code is a contract error (a bug on one side), logged as one with the
request id, never reported as an outage.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from mem0_common import REQUEST_ID_HEADER, request_id_var

_Response = TypeVar("_Response")
_Stub = TypeVar("_Stub")

logger = logging.getLogger(__name__)

#: Spread calls over every address the name resolves to: replicas of the ranker or judge behind
#: one DNS name (compose `deploy.replicas`, a headless Kubernetes service) all get traffic,
#: where gRPC's default pick_first would pin this bridge to one of them.
#:
#: Reconnect at least once a second: gRPC's default backoff grows toward two minutes, so after
#: a long outage a peer that is back was skipped for many seconds while a fresh channel would
#: have answered at once.
CHANNEL_OPTIONS = (
    ("grpc.lb_policy_name", "round_robin"),
    ("grpc.initial_reconnect_backoff_ms", 250),
    ("grpc.min_reconnect_backoff_ms", 250),
    ("grpc.max_reconnect_backoff_ms", 1000),
    ("grpc.dns_min_time_between_resolutions_ms", 1000),
)

#: The codes that mean "the peer is down or too slow", as opposed to a broken contract.
DOWN_CODES = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})


@dataclass(frozen=True)
class PeerFailure:
    """Why a call to an optional peer gave no answer; `note()` phrases it for the agent."""

    peer: str
    #: None when the peer is not configured (its address is empty).
    code: grpc.StatusCode | None
    detail: str = ""
    request_id: str = "-"

    @property
    def off(self) -> bool:
        return self.code is None

    @property
    def down(self) -> bool:
        """Unreachable or too slow: retrying later may work, and nothing is wrong with the call."""
        return self.code in DOWN_CODES

    @property
    def timed_out(self) -> bool:
        return self.code is grpc.StatusCode.DEADLINE_EXCEEDED

    def note(self, skipped: str) -> str:
        """`skipped`, prefixed by why: off, unavailable, too slow, or a rejected call (a bug)."""
        if self.code is None:
            return f"{self.peer} off ({self.detail}): {skipped}"
        if self.code is grpc.StatusCode.DEADLINE_EXCEEDED:
            return f"{self.peer} too slow (deadline exceeded): {skipped}"
        if self.code is grpc.StatusCode.UNAVAILABLE:
            return f"{self.peer} unavailable: {skipped}"
        return (
            f"{self.peer} rejected the call ({self.code.name}: {self.detail[:200]}); this is a "
            f"bug, logged with request id {self.request_id}: {skipped}"
        )


def skipped(answer: object, what: str) -> list[str]:
    """The note telling the agent that `what` was skipped, when `answer` is a failure worth
    telling (a peer that is merely off is the operator's choice, not news on every call)."""
    if isinstance(answer, PeerFailure) and not answer.off:
        return [answer.note(what)]
    return []


class GrpcPeer(Generic[_Stub]):
    """A channel to one optional gRPC service, with its stub; `address` empty means the service
    is off, and every call then answers `off` without being sent."""

    def __init__(
        self,
        name: str,
        address: str,
        timeout_seconds: float,
        stub: Callable[[grpc.aio.Channel], _Stub],
        *,
        health_service: str = "",
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
        self._stub = stub(self.channel) if self.channel is not None else None

    @property
    def configured(self) -> bool:
        return self.channel is not None

    @property
    def off(self) -> PeerFailure:
        return PeerFailure(self.name, None, f"MEM0_{self.name.upper()}_ADDRESS is empty")

    async def aclose(self) -> None:
        if self.channel is not None:
            await self.channel.close()

    async def call(
        self,
        method: Callable[[_Stub], Callable[..., Awaitable[_Response]]],
        request: object,
        *,
        deadline: float | None = None,
    ) -> _Response | PeerFailure:
        """Run one unary call, `method` picking it from the stub (`lambda stub: stub.Rerank`);
        a failure, or the peer being off, comes back as a `PeerFailure`, logged by its kind."""
        if self._stub is None:
            return self.off
        bound = method(self._stub)
        request_id = request_id_var.get()
        metadata = ((REQUEST_ID_HEADER, request_id),) if request_id != "-" else ()
        try:
            return await bound(request, timeout=deadline or self.timeout_seconds, metadata=metadata)
        except grpc.aio.AioRpcError as exc:
            failure = PeerFailure(self.name, exc.code(), exc.details() or "", request_id)
        method_name = getattr(bound, "_method", b"").decode(errors="replace") or "call"
        if failure.down:
            logger.warning(
                "%s %s: %s (%s); continuing without it",
                self.name,
                method_name,
                failure.code.name if failure.code else "?",
                failure.detail,
            )
        else:
            logger.error(
                "%s %s rejected by the peer, a contract bug (request id %s): %s: %s",
                self.name,
                method_name,
                request_id,
                failure.code.name if failure.code else "?",
                failure.detail,
            )
        return failure

    async def send(
        self, method: Callable[[_Stub], Callable[..., Awaitable[object]]], request: object
    ) -> PeerFailure | None:
        """`call` for a call whose answer says nothing: only its failure, if any."""
        answer = await self.call(method, request)
        return answer if isinstance(answer, PeerFailure) else None

    async def probe(self, service: str | None = None) -> str:
        """`serving`, `not serving` (answers, cannot do its job), `off` (not configured) or
        `unreachable (CODE)`, for /readyz and selftest."""
        if self.channel is None:
            return "off"
        stub = health_pb2_grpc.HealthStub(self.channel)
        try:
            answer = await stub.Check(
                health_pb2.HealthCheckRequest(
                    service=self.health_service if service is None else service
                ),
                timeout=self.timeout_seconds,
            )
        except grpc.aio.AioRpcError as exc:
            if exc.code() is grpc.StatusCode.NOT_FOUND:
                return "unknown"
            return f"unreachable ({exc.code().name})"
        if answer.status == health_pb2.HealthCheckResponse.SERVING:
            return "serving"
        return "not serving"

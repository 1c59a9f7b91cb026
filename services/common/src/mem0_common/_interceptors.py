"""A server interceptor that gives every call a request id, a log line and metrics."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import grpc

from mem0_common._logging import request_id_var
from mem0_common._metrics import GRPC_CALLS, GRPC_LATENCY

REQUEST_ID_HEADER = "x-request-id"
_log = logging.getLogger("mem0_common.calls")

_Continuation = Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler | None]]


class _Undecodable:
    """What a request that is not a valid message decodes to, so the handler can refuse it.

    Left to grpc, a deserializer that raises ends the call as UNKNOWN, which reads like a server
    bug; the caller sent bytes that are not the method's message, which is INVALID_ARGUMENT.
    """

    __slots__ = ("error",)

    def __init__(self, error: Exception) -> None:
        self.error = error


def _tolerant(deserializer: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    if deserializer is None:
        return None

    def decode(data: bytes) -> Any:
        try:
            return deserializer(data)
        except Exception as exc:  # whatever the deserializer raises, the bytes were bad
            return _Undecodable(exc)

    return decode


def _request_id(details: grpc.HandlerCallDetails) -> str:
    for key, value in details.invocation_metadata or ():
        if key == REQUEST_ID_HEADER and isinstance(value, str) and 0 < len(value) <= 128:
            return value
    return uuid.uuid4().hex


class CallInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Wraps unary-unary handlers: request id in a contextvar, one log line, count and latency;
    a request that does not decode is refused as INVALID_ARGUMENT before the handler runs."""

    def __init__(self, service: str) -> None:
        self._service = service

    async def intercept_service(
        self, continuation: _Continuation, handler_call_details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler | None:
        handler = await continuation(handler_call_details)
        if handler is None or handler.unary_unary is None:
            return handler
        method = handler_call_details.method.rsplit("/", 1)[-1]
        request_id = _request_id(handler_call_details)
        inner: Callable[[Any, grpc.aio.ServicerContext], Awaitable[Any]] = handler.unary_unary
        service = self._service

        async def observed(request: Any, context: grpc.aio.ServicerContext) -> Any:
            token = request_id_var.set(request_id)
            start = time.perf_counter()
            code = grpc.StatusCode.OK
            try:
                if isinstance(request, _Undecodable):
                    await context.abort(
                        grpc.StatusCode.INVALID_ARGUMENT,
                        f"request: not a valid {method} request message "
                        f"({type(request.error).__name__})",
                    )
                response = await inner(request, context)
            except BaseException:
                code = context.code() or grpc.StatusCode.UNKNOWN
                raise
            else:
                code = context.code() or grpc.StatusCode.OK
                return response
            finally:
                elapsed = time.perf_counter() - start
                GRPC_CALLS.labels(service, method, code.name).inc()
                GRPC_LATENCY.labels(service, method).observe(elapsed)
                _log.info(
                    "%s %s %.2fms%s",
                    method,
                    code.name,
                    elapsed * 1000,
                    "" if code is grpc.StatusCode.OK else f" {context.details()}",
                )
                request_id_var.reset(token)

        return grpc.unary_unary_rpc_method_handler(
            observed,
            request_deserializer=_tolerant(handler.request_deserializer),
            response_serializer=handler.response_serializer,
        )

"""The gRPC face of the judge: validate, bound by the caller's deadline, map failures to codes.

Status codes (the bridge treats every non-OK answer as "no judgement" and proceeds):

| situation                                              | code                |
|--------------------------------------------------------|---------------------|
| empty/too long text, too many candidates, unknown field | INVALID_ARGUMENT    |
| no LLM configured (JUDGE_LLM_BASE_URL/MODEL unset)      | UNAVAILABLE         |
| LLM unreachable, or 429/5xx after the allowed retries   | UNAVAILABLE         |
| LLM slower than the caller's deadline or the timeout    | DEADLINE_EXCEEDED   |
| LLM rejected the request (401, 400, ...: configuration) | FAILED_PRECONDITION |
| LLM answer not JSON or not of the required schema       | INTERNAL            |

Invalid requests and the no-LLM case answer at once, without touching the LLM.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import NoReturn, TypeVar

import grpc
from google.protobuf.message import Message

from mem0_judge._errors import JudgeError, LLMNotConfiguredError
from mem0_judge._judge import Judge
from mem0_judge._metrics import LLM_ERRORS
from mem0_judge._settings import JudgeSettings
from mem0_judge._validation import InvalidRequestError, check_compare, check_rewrite
from mem0mcp.judge.v1 import judge_pb2, judge_pb2_grpc

SERVICE_FULL_NAME: str = judge_pb2.DESCRIPTOR.services_by_name["JudgeService"].full_name

#: Health-service name of the LLM behind the judge: NOT_SERVING after its last calls failed
#: (`JUDGE_LLM_DEGRADED_AFTER_FAILURES`), SERVING again on the next success. Not a gRPC service:
#: only the health service knows it. See `mem0_judge._health`.
LLM_HEALTH_SERVICE = f"{SERVICE_FULL_NAME}.llm"

NOT_CONFIGURED_MESSAGE = (
    "judging unavailable: no LLM configured (set JUDGE_LLM_BASE_URL and JUDGE_LLM_MODEL)"
)

#: Stop this long before the caller's deadline, so the caller gets our explanation, not a bare
#: DEADLINE_EXCEEDED from its own clock.
_DEADLINE_MARGIN_SECONDS = 0.02

_VERDICTS = {
    "SAME": judge_pb2.VERDICT_SAME,
    "SUPERSEDES": judge_pb2.VERDICT_SUPERSEDES,
    "UNRELATED": judge_pb2.VERDICT_UNRELATED,
}

_log = logging.getLogger("mem0_judge.service")

_Req = TypeVar("_Req", bound=Message)
_Resp = TypeVar("_Resp", bound=Message)
_Handler = Callable[["JudgeServicer", _Req, grpc.aio.ServicerContext], Awaitable[_Resp]]
_Asking = Callable[["JudgeServicer", _Req, grpc.aio.ServicerContext, Judge], Awaitable[_Resp]]


def _deadline(context: grpc.aio.ServicerContext) -> float | None:
    remaining: float | None = context.time_remaining()
    if remaining is None:
        return None
    return time.monotonic() + remaining - _DEADLINE_MARGIN_SECONDS


def _judging(
    operation: str, check: Callable[[_Req], None]
) -> Callable[[_Asking[_Req, _Resp]], _Handler[_Req, _Resp]]:
    """A handler that asks the judge, after `check` passed the request and only when there is a
    judge: every way this can fail ends in its code."""

    def decorate(ask: _Asking[_Req, _Resp]) -> _Handler[_Req, _Resp]:
        async def handler(
            self: JudgeServicer, request: _Req, context: grpc.aio.ServicerContext
        ) -> _Resp:
            try:
                check(request)
            except InvalidRequestError as exc:
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
            if self._judge is None:
                await self._fail(context, operation, LLMNotConfiguredError(NOT_CONFIGURED_MESSAGE))
            try:
                return await ask(self, request, context, self._judge)
            except JudgeError as error:
                await self._fail(context, operation, error)

        handler.__name__ = ask.__name__
        handler.__doc__ = ask.__doc__
        return handler

    return decorate


class JudgeServicer(judge_pb2_grpc.JudgeServiceServicer):
    """`judge` is None when no LLM is configured: every call is then UNAVAILABLE at once."""

    def __init__(self, judge: Judge | None, settings: JudgeSettings) -> None:
        self._judge = judge
        self._settings = settings

    async def _fail(
        self, context: grpc.aio.ServicerContext, operation: str, error: JudgeError
    ) -> NoReturn:
        LLM_ERRORS.labels(operation, error.kind).inc()
        _log.warning("%s: no judgement (%s): %s", operation, error.kind, error)
        await context.abort(error.code, str(error))
        raise AssertionError("context.abort returned")  # pragma: no cover

    @_judging("compare", check_compare)
    async def Compare(  # noqa: N802 - gRPC method name
        self, request: judge_pb2.CompareRequest, context: grpc.aio.ServicerContext, judge: Judge
    ) -> judge_pb2.CompareResponse:
        texts = [c.text for c in request.candidates]
        judgements = await judge.compare(request.fact, texts, _deadline(context))
        return judge_pb2.CompareResponse(
            judgements=[
                judge_pb2.Judgement(
                    memory_id=candidate.memory_id,
                    verdict=_VERDICTS[judgement.verdict],
                    reason=judgement.reason,
                )
                for candidate, judgement in zip(request.candidates, judgements, strict=True)
            ]
        )

    @_judging("rewrite", check_rewrite)
    async def Rewrite(  # noqa: N802 - gRPC method name
        self, request: judge_pb2.RewriteRequest, context: grpc.aio.ServicerContext, judge: Judge
    ) -> judge_pb2.RewriteResponse:
        rewrite = await judge.rewrite(request.query, _deadline(context))
        return judge_pb2.RewriteResponse(
            statement=rewrite.statement, rewritten=rewrite.rewritten, cached=rewrite.cached
        )

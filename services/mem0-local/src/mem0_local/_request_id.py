"""X-Request-ID on every answer, and one log line per request.

A plain ASGI middleware rather than an exception handler, so that even a crash (answered here
as a 500) carries the id the caller can quote.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mem0_common import bare_or_quoted, request_id_var

logger = logging.getLogger("mem0_local.access")

REQUEST_ID_HEADER = "X-Request-ID"
#: An incoming id is echoed only if it is short and printable (it ends up in logs).
_ACCEPTABLE_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


#: Every path this API serves fits, so only a path that is not one of ours is quoted.
_PATH_LIMIT = 128


class RequestIdMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        incoming = dict(scope["headers"]).get(b"x-request-id", b"").decode("latin-1")
        request_id = incoming if _ACCEPTABLE_ID.match(incoming) else uuid.uuid4().hex
        token = request_id_var.set(request_id)
        started = time.perf_counter()
        status = 0

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                MutableHeaders(scope=message)[REQUEST_ID_HEADER] = request_id
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception:
            logger.exception("unhandled error")
            if status:
                raise
            status = 500
            body = json.dumps({"detail": "Internal server error", "request_id": request_id})
            await send(
                {
                    "type": "http.response.start",
                    "status": 500,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (REQUEST_ID_HEADER.lower().encode(), request_id.encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body.encode()})
        finally:
            logger.info(
                "%s %s -> %d in %.1f ms",
                scope["method"],
                bare_or_quoted(scope["path"], _PATH_LIMIT),
                status,
                (time.perf_counter() - started) * 1000,
            )
            request_id_var.reset(token)

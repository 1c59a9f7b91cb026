"""Every request checked before FastAPI parses it: its size, then text mem0 could not store.

One ASGI middleware rather than validators on each model, because the input that breaks mem0
hides in places no model describes: free-form `metadata` and `filters`, keys as well as values,
query parameters. What it refuses never reaches mem0, so nothing is stored or changed:

- a body over `MEM0_LOCAL_MAX_REQUEST_BYTES`: 413 naming the limit (checked against
  Content-Length first, then counted, so a chunked upload cannot slip past);
- a NUL (PostgreSQL text cannot hold one) or a lone surrogate (not Unicode: it cannot be
  encoded for the embedder, the store or the JSON answer) in any string: 400 naming where;
- NaN or an infinite number (`NaN`, `Infinity`, `1e999`, which Python's JSON parser accepts but
  JSON does not define): 400 naming where.

A body that is not JSON at all passes through untouched: FastAPI answers it as upstream does.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qsl

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mem0_common import quote_input

MAX_REQUEST_BYTES_VARIABLE = "MEM0_LOCAL_MAX_REQUEST_BYTES"
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class _Refused(Exception):  # noqa: N818 - a control-flow signal carrying the answer
    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


def text_problem(text: str) -> str | None:
    """Why `text` cannot be stored, or None: a NUL or a lone surrogate, named by code point."""
    if "\x00" in text:
        return "contains a NUL character (U+0000), which cannot be stored"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return (
            f"contains a lone surrogate (U+{ord(text[exc.start]):04X}), "
            "which is not valid Unicode text"
        )
    return None


def _child(where: str, key: str) -> str:
    if _IDENTIFIER.match(key):
        return f"{where}.{key}" if where else key
    return f"{where}[{quote_input(key)}]"


def _check_value(value: Any, where: str) -> None:
    if isinstance(value, str):
        problem = text_problem(value)
        if problem is not None:
            raise _Refused(400, f"{where}: {problem}")
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise _Refused(400, f"{where}: {value} is not a finite number, which JSON requires")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_value(item, f"{where}[{index}]")
    elif isinstance(value, dict):
        _check_pairs(value.items(), where)


def _check_pairs(pairs: Iterable[tuple[str, Any]], where: str) -> None:
    for key, value in pairs:
        problem = text_problem(key)
        if problem is not None:
            raise _Refused(400, f"{where or 'body'} (a key): {problem}")
        _check_value(value, _child(where, key))


def _check_body(body: bytes) -> None:
    try:
        parsed = json.loads(body)
    except RecursionError:
        raise _Refused(400, "body: JSON nested too deeply to parse") from None
    except ValueError:
        return  # not JSON: FastAPI answers it as upstream does
    try:
        _check_value(parsed, "")
    except RecursionError:
        raise _Refused(400, "body: JSON nested too deeply to check") from None


class RequestGuard:
    """ASGI middleware refusing oversized bodies and unstorable text before any route runs."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    def _too_large(self, size: str) -> _Refused:
        return _Refused(
            413,
            f"Request body is {size}; this server accepts at most {self.max_bytes} bytes "
            f"({MAX_REQUEST_BYTES_VARIABLE}).",
        )

    async def _read_body(self, scope: Scope, receive: Receive) -> bytes | None:
        """The whole body, or None when the client went away before sending it."""
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            raise self._too_large(f"{int(declared)} bytes")
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                raise self._too_large(f"more than {self.max_bytes} bytes")
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            query = scope["query_string"].decode("latin-1")
            _check_pairs(parse_qsl(query, keep_blank_values=True), "")
            body = await self._read_body(scope, receive)
            if body is None:
                return
            if body:
                _check_body(body)
        except _Refused as refused:
            await _answer(send, refused)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


async def _answer(send: Send, refused: _Refused) -> None:
    payload = json.dumps({"detail": refused.detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": refused.status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})

"""A tiny HTTP load balancer without session affinity, for tests: request i goes to backend
i mod n, whatever connection or MCP session it belongs to.

It stands in for HAProxy or nginx in front of bridge replicas where no such binary is wanted
(the in-process tests). Each request is read whole, sent to the next backend and its answer
streamed back chunk by chunk (an SSE response reaches the client as the backend writes it). A
backend that refuses the connection is skipped for that request, as a load balancer's
re-dispatch would; a request that already reached a backend is never sent twice.

    with running_proxy(["http://127.0.0.1:8101", "http://127.0.0.1:8102"]) as proxy:
        proxy.url  # http://127.0.0.1:<port>
        proxy.served  # requests answered per backend
"""

from __future__ import annotations

import asyncio
import itertools
import socket
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import httpx
import uvicorn
from starlette.types import Receive, Scope, Send

#: Headers about one hop's connection, which a proxy must not pass on (RFC 9110 §7.6.1).
_HOP_BY_HOP = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"proxy-connection",
        b"te",
        b"trailer",
        b"transfer-encoding",
        b"upgrade",
    }
)


class RoundRobin:
    """The ASGI app: round-robin over `backends` (base URLs), per request."""

    def __init__(self, backends: Sequence[str]) -> None:
        if not backends:
            raise ValueError("a round robin needs at least one backend")
        self.backends = [b.rstrip("/") for b in backends]
        #: Requests each backend answered (by base URL).
        self.served: Counter[str] = Counter()
        self._turn = itertools.count()
        self._http = httpx.AsyncClient(
            timeout=httpx.Timeout(connect=5.0, read=None, write=30.0, pool=None),
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=200),
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = bytearray()
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = [(k, v) for k, v in scope["headers"] if k.lower() not in _HOP_BY_HOP]
        target = scope["raw_path"].decode("latin-1") if scope.get("raw_path") else scope["path"]
        if scope.get("query_string"):
            target += "?" + scope["query_string"].decode("latin-1")
        first = next(self._turn)
        for attempt in range(len(self.backends)):
            backend = self.backends[(first + attempt) % len(self.backends)]
            request = self._http.build_request(
                scope["method"], backend + target, headers=headers, content=bytes(body)
            )
            try:
                response = await self._http.send(request, stream=True)
            except httpx.ConnectError:
                continue  # never reached the backend: safe to try the next one
            self.served[backend] += 1
            try:
                await send(
                    {
                        "type": "http.response.start",
                        "status": response.status_code,
                        "headers": [
                            (k, v) for k, v in response.headers.raw if k.lower() not in _HOP_BY_HOP
                        ],
                    }
                )
                async for chunk in response.aiter_raw():
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await send({"type": "http.response.body", "body": b""})
            finally:
                await response.aclose()
            return
        await send(
            {
                "type": "http.response.start",
                "status": 502,
                "headers": [(b"content-type", b"text/plain")],
            }
        )
        await send({"type": "http.response.body", "body": b"no backend answered"})


class RunningProxy:
    def __init__(self, app: RoundRobin, port: int) -> None:
        self.app = app
        self.port = port
        self.url = f"http://127.0.0.1:{port}"

    @property
    def served(self) -> Counter[str]:
        return self.app.served


@contextmanager
def running_proxy(backends: Sequence[str]) -> Iterator[RunningProxy]:
    """Serve a `RoundRobin` over `backends` on a free loopback port, in a thread."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    app = RoundRobin(backends)
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", lifespan="off", timeout_keep_alive=65)
    )

    def serve() -> None:
        async def main() -> None:
            try:
                await server.serve(sockets=[sock])
            finally:
                await app.aclose()

        asyncio.run(main())

    thread = threading.Thread(target=serve, name="round-robin", daemon=True)
    thread.start()
    try:
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError("the round-robin proxy did not start")
            threading.Event().wait(0.01)
        yield RunningProxy(app, sock.getsockname()[1])
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()

"""Prometheus metrics for gRPC calls, and the small HTTP endpoint that exposes them.

The endpoint is either reachable from this host only (loopback, the default) or guarded by a
bearer token; `GrpcServiceSettings` refuses any other combination at start. Call counts by
method and code say what the service is asked and how it answers, which is worth keeping from
whoever can reach the port.
"""

from __future__ import annotations

import hmac
import ipaddress
import socket
import threading
from collections.abc import Iterable
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import Counter, Histogram, make_wsgi_app
from pydantic import SecretStr

GRPC_CALLS = Counter(
    "mem0mcp_grpc_calls_total",
    "gRPC calls served, by method and status code.",
    ["service", "method", "code"],
)
GRPC_LATENCY = Histogram(
    "mem0mcp_grpc_call_seconds",
    "gRPC call latency in seconds, by method.",
    ["service", "method"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)


def is_loopback(host: str) -> bool:
    """Whether binding `host` keeps a port reachable from this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name other than localhost may resolve to anything
        return False


#: How often the serving thread looks for a stop request: `close()` waits up to this long (the
#: standard library's 0.5 s made every stop of a service, and every test server, half a second).
_STOP_POLL_SECONDS = 0.05


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _Server6(_Server):
    address_family = socket.AF_INET6


class _QuietHandler(WSGIRequestHandler):
    """No line per scrape on stderr: the services log their own way."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


_StartResponse = Any
_WsgiEnviron = dict[str, Any]


def _bearer_guard(app: Any, token: SecretStr) -> Any:
    expected = f"Bearer {token.get_secret_value()}".encode()

    def guarded(request: _WsgiEnviron, start_response: _StartResponse) -> Iterable[bytes]:
        given = str(request.get("HTTP_AUTHORIZATION", "")).encode("latin-1", "replace")
        if hmac.compare_digest(given, expected):
            result: Iterable[bytes] = app(request, start_response)
            return result
        start_response(
            "401 Unauthorized",
            [("Content-Type", "text/plain; charset=utf-8"), ("WWW-Authenticate", "Bearer")],
        )
        return [b"metrics need the header Authorization: Bearer <the metrics token>\n"]

    return guarded


class MetricsEndpoint:
    """The `/metrics` HTTP server; `port` is the bound one (useful when 0 was asked for).

    With `token`, every request must send `Authorization: Bearer <token>` (compared in constant
    time) or gets a 401 that never echoes the token.
    """

    def __init__(self, host: str, port: int, token: SecretStr | None = None) -> None:
        app = make_wsgi_app()
        if token is not None:
            app = _bearer_guard(app, token)
        server_class = _Server6 if ":" in host else _Server
        self._server: WSGIServer = make_server(
            host, port, app, server_class=server_class, handler_class=_QuietHandler
        )
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": _STOP_POLL_SECONDS},
            name="metrics",
            daemon=True,
        )
        self._thread.start()
        self.port: int = self._server.server_port

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

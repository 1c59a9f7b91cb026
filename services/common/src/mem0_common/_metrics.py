"""Prometheus metrics for gRPC calls, and the small HTTP endpoint that exposes them."""

from __future__ import annotations

from wsgiref.simple_server import WSGIServer

from prometheus_client import Counter, Histogram, start_http_server

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


class MetricsEndpoint:
    """The `/metrics` HTTP server; `port` is the bound one (useful when 0 was asked for)."""

    def __init__(self, host: str, port: int) -> None:
        server, thread = start_http_server(port, addr=host)
        self._server: WSGIServer = server
        self._thread = thread
        self.port: int = server.server_port

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

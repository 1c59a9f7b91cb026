"""Does an HTTP server keep an idle connection open past what a Python client keeps it?

httpx (so the official MCP Python client and the bridge's mem0 client) reuses a pooled
connection for 5 s; a server that drops idle connections after the same 5 s (uvicorn's default)
races it, and the client's next request dies with a ReadError. This sends two requests on one
raw connection, idle for `idle_seconds` between them, and says whether the second was answered.
"""

from __future__ import annotations

import socket
import time

#: Past uvicorn's default keep-alive and httpx's pool expiry (both 5 s).
PAST_PYTHON_CLIENTS_EXPIRY = 5.5


def _answer(connection: socket.socket) -> bytes:
    """One whole response (head and its Content-Length body), b"" when the server hung up."""
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = connection.recv(4096)
        if not chunk:
            return received
        received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    length = next(
        (
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        ),
        0,
    )
    while len(body) < length:
        chunk = connection.recv(4096)
        if not chunk:
            break
        body += chunk
    return head


def answers_after_idling(port: int, path: str, idle_seconds: float) -> bool:
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        connection.sendall(request)
        if not _answer(connection).startswith(b"HTTP/1.1 "):
            raise AssertionError(f"no HTTP answer to GET {path}")
        time.sleep(idle_seconds)
        try:
            connection.sendall(request)
            return _answer(connection).startswith(b"HTTP/1.1 ")
        except (ConnectionResetError, BrokenPipeError):
            return False

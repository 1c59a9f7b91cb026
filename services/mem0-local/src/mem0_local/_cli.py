"""`mem0-local`: serve mem0's REST API until SIGTERM/SIGINT.

It binds first (port 0 picks a free one), opens the memory store, and only then prints
`mem0-local listening on http://host:port`, the line tests and `make run` wait for.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import uvicorn
from pydantic import ValidationError

from mem0_common import SERVER_KEEP_ALIVE_SECONDS, announce_listening, configure_logging
from mem0_local._app import create_app
from mem0_local._log_privacy import memory_text_filters
from mem0_local._settings import Mem0LocalSettings

#: Threads serving mem0's blocking steps, for all requests together.
MEM0_THREADS = 32


class _AnnouncingServer(uvicorn.Server):
    """A uvicorn server that says where it listens once it accepts connections."""

    def __init__(self, config: uvicorn.Config, url: str) -> None:
        super().__init__(config)
        self._url = url

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        # mem0 runs each step of a request (embedding, each store call) in the loop's default
        # executor, whose 6 threads (on 2 cores) held 16 concurrent requests in a queue; most of
        # those steps wait (on the embedder's workers, on PostgreSQL), so many more may run.
        asyncio.get_running_loop().set_default_executor(
            ThreadPoolExecutor(max_workers=MEM0_THREADS, thread_name_prefix="mem0")
        )
        await super().startup(sockets)
        if self.started:
            announce_listening(Mem0LocalSettings.service_name, self._url)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """Like uvicorn's, but a graceful stop on SIGTERM/SIGINT exits 0 instead of re-raising
        the signal once shut down: supervisors and `make run` should see a clean exit."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        handled = (signal.SIGINT, signal.SIGTERM)
        originals = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
        try:
            yield
        finally:
            for sig, original in originals.items():
                signal.signal(sig, original)


def _url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def main() -> int:
    try:
        settings = Mem0LocalSettings()
    except ValidationError as exc:
        print(f"mem0-local: invalid settings:\n{exc}", file=sys.stderr)  # noqa: T201
        return 2
    configure_logging(settings.log_level, memory_text_filters(settings.log_level))
    config = uvicorn.Config(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        log_config=None,
        access_log=False,
        lifespan="on",
        timeout_keep_alive=SERVER_KEEP_ALIVE_SECONDS,
    )
    try:
        sock = config.bind_socket()
    except OSError as exc:
        print(  # noqa: T201
            f"mem0-local: cannot listen on {settings.host}:{settings.port}: {exc}", file=sys.stderr
        )
        return 1
    server = _AnnouncingServer(config, _url(sock))
    server.run(sockets=[sock])
    return 0 if server.started else 1


if __name__ == "__main__":
    sys.exit(main())

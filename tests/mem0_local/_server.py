"""Run mem0-local's app in-process on a loopback port, for tests that need many configurations.

Each server is the real app over real HTTP (uvicorn in a thread); only the process is shared, so
the embedder's libraries load once per test session. The console script itself is tested as a
subprocess separately.
"""

from __future__ import annotations

import socket
import threading

import httpx
import uvicorn

from mem0_local import Mem0LocalSettings, create_app


class _ReadyServer(uvicorn.Server):
    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            await super().startup(sockets)
        finally:
            self.ready.set()


class InProcessServer:
    """mem0-local serving `settings` until `stop()`; `url` is known once the store is open."""

    def __init__(self, settings: Mem0LocalSettings, *, ready_timeout: float = 180.0) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        config = uvicorn.Config(create_app(settings), log_config=None, access_log=False)
        self._server = _ReadyServer(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name="mem0-local", daemon=True
        )
        self._thread.start()
        if not self._server.ready.wait(ready_timeout) or not self._server.started:
            self.stop()
            raise RuntimeError(f"mem0-local did not start with {settings!r}")

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=30)

    def __enter__(self) -> InProcessServer:
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()


def post_message(client: httpx.Client, user_id: str, text: str, **extra: object) -> httpx.Response:
    """POST /memories with `text` as the one user message of `user_id` (infer as the server
    defaults unless `extra` says)."""
    return client.post(
        "/memories",
        json={"messages": [{"role": "user", "content": text}], "user_id": user_id, **extra},
    )


def add_memories(
    client: httpx.Client, user_id: str, *texts: str, infer: bool = False, **extra: object
) -> list[str]:
    """Add each text as one user message; returns the new ids (asserting the call succeeded)."""
    ids: list[str] = []
    for text in texts:
        response = post_message(client, user_id, text, infer=infer, **extra)
        assert response.status_code == 200, response.text
        ids += [r["id"] for r in response.json()["results"]]
    return ids

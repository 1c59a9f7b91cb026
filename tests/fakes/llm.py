"""FakeLLM: a deterministic fake of the OpenAI-compatible HTTP API, for tests and benchmarks.

The only stand-in the test suite allows: no real LLM runs on this machine. It speaks the real
wire format (`POST /v1/chat/completions`, `POST /v1/embeddings`) on a loopback port, so the code
under test uses its real HTTP client. Chat requests go to the first *responder* that claims them;
the default one answers mem0's fact-extraction request. Failures (500, 429, garbage, slow, hang)
can be queued per test with `fail_next` or set for every call with `set_failure`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

FailureKind = Literal["error500", "rate_limit", "garbage", "slow", "hang", "unauthorized"]

#: A chat responder gets the parsed request body and returns the assistant's content, or None
#: when the request is not one it answers.
ChatResponder = Callable[[dict[str, Any]], str | None]


@dataclass
class Failure:
    kind: FailureKind
    #: For "slow": seconds to wait before answering normally. For "rate_limit": Retry-After.
    seconds: float = 0.0


def _message_text(message: dict[str, Any]) -> str:
    content = message.get("content", "")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


def section(text: str, header: str) -> str:
    """The body of a `## header` section of a mem0-style prompt, up to the next header."""
    match = re.search(
        rf"^## {re.escape(header)}\s*$(.*?)(?=^#{{1,2}} |\Z)", text, re.MULTILINE | re.DOTALL
    )
    return match.group(1).strip() if match else ""


def extraction_responder(body: dict[str, Any]) -> str | None:
    """Answer mem0's extraction prompt: one memory per sentence of each `user:` line.

    Splitting on sentence ends (rather than echoing the whole message) makes inference
    observable: "I use vim. The API runs on port 9000." becomes two memories.
    """
    if body.get("response_format", {}).get("type") != "json_object":
        return None
    user = next((_message_text(m) for m in body["messages"] if m.get("role") == "user"), "")
    new_messages = section(user, "New Messages")
    if not new_messages and "## New Messages" not in user:
        return None
    facts: list[str] = []
    for line in new_messages.splitlines():
        role, _, said = line.partition(":")
        if role.strip().lower() != "user" or not said.strip():
            continue
        facts += [s.strip() for s in re.split(r"(?<=[.!?])\s+", said.strip()) if s.strip()]
    memories = [
        {"id": str(i), "text": fact, "attributed_to": "user"} for i, fact in enumerate(facts)
    ]
    return json.dumps({"memory": memories})


def fake_embedding(text: str, dims: int) -> list[float]:
    """A deterministic bag-of-words embedding: texts sharing words are close in cosine."""
    vector = [0.0] * dims
    for word in re.findall(r"\w+", text.lower()):
        digest = hashlib.sha256(word.encode()).digest()
        index = int.from_bytes(digest[:4], "big") % dims
        vector[index] += 1.0 if digest[4] % 2 == 0 else -1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


@dataclass
class FakeLLM:
    """A running fake; use as a context manager or call `start()` / `stop()`."""

    responders: list[ChatResponder] = field(default_factory=lambda: [extraction_responder])
    model: str = "fake-model"
    #: Fixed latency added to every answer (benchmarks set it to model a real provider).
    latency_seconds: float = 0.0
    requests: list[dict[str, Any]] = field(default_factory=list)
    _queued: deque[Failure] = field(default_factory=deque)
    _always: Failure | None = None
    _server: uvicorn.Server | None = None
    _thread: threading.Thread | None = None
    port: int = 0

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL (ends in /v1), as clients are configured with."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r.get("_path") == "/v1/chat/completions"]

    def fail_next(self, kind: FailureKind, count: int = 1, seconds: float = 0.0) -> None:
        self._queued.extend(Failure(kind, seconds) for _ in range(count))

    def set_failure(self, kind: FailureKind | None, seconds: float = 0.0) -> None:
        self._always = None if kind is None else Failure(kind, seconds)

    def reset(self) -> None:
        self.requests.clear()
        self._queued.clear()
        self._always = None
        self.latency_seconds = 0.0

    # -- serving -------------------------------------------------------------------------------

    async def _failure_response(self, failure: Failure) -> Response | None:
        if failure.kind == "error500":
            return JSONResponse({"error": {"message": "fake: internal error"}}, status_code=500)
        if failure.kind == "unauthorized":
            return JSONResponse({"error": {"message": "fake: bad key"}}, status_code=401)
        if failure.kind == "rate_limit":
            return JSONResponse(
                {"error": {"message": "fake: rate limited"}},
                status_code=429,
                headers={"Retry-After": f"{failure.seconds:g}"},
            )
        if failure.kind == "garbage":
            return PlainTextResponse("<html>definitely not json", status_code=200)
        if failure.kind == "hang":
            await asyncio.sleep(3600)
        if failure.kind == "slow":
            await asyncio.sleep(failure.seconds)
        return None

    async def _next_failure(self) -> Response | None:
        failure = self._queued.popleft() if self._queued else self._always
        return None if failure is None else await self._failure_response(failure)

    async def _chat(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append({**body, "_path": "/v1/chat/completions"})
        if self.latency_seconds:
            await asyncio.sleep(self.latency_seconds)
        failed = await self._next_failure()
        if failed is not None:
            return failed
        content = next((c for r in self.responders if (c := r(body)) is not None), None)
        if content is None:
            return JSONResponse(
                {"error": {"message": "fake: no responder for this request"}}, status_code=400
            )
        prompt_tokens = sum(len(_message_text(m).split()) for m in body.get("messages", []))
        return JSONResponse(
            {
                "id": f"chatcmpl-fake-{len(self.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", self.model),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": len(content.split()),
                    "total_tokens": prompt_tokens + len(content.split()),
                },
            }
        )

    async def _embeddings(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append({**body, "_path": "/v1/embeddings"})
        failed = await self._next_failure()
        if failed is not None:
            return failed
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        dims = int(body.get("dimensions") or 384)
        return JSONResponse(
            {
                "object": "list",
                "model": body.get("model", self.model),
                "data": [
                    {"object": "embedding", "index": i, "embedding": fake_embedding(str(t), dims)}
                    for i, t in enumerate(inputs)
                ],
                "usage": {"prompt_tokens": 0, "total_tokens": 0},
            }
        )

    async def _models(self, _: Request) -> Response:
        return JSONResponse({"object": "list", "data": [{"id": self.model, "object": "model"}]})

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/v1/embeddings", self._embeddings, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
            ]
        )

    def start(self) -> FakeLLM:
        # IPPROTO_TCP, not 0: accepted sockets inherit it, and asyncio only sets TCP_NODELAY on
        # sockets whose proto says TCP; without it every keep-alive answer stalls ~40 ms (Nagle
        # against delayed ACK), which swamps latency measurements.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(self.app(), log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        server = self._server
        self._thread = threading.Thread(
            target=lambda: server.run(sockets=[sock]), name="fake-llm", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("FakeLLM did not start within 10 s")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
            self._server.force_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

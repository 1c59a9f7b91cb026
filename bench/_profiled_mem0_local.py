"""mem0-local with timers on its hops, for `bench.profile`: `python -m bench._profiled_mem0_local`.

The very `mem0-local` console script, with mem0's embedder, vector store (PostgreSQL through
pgvector, or the embedded store), history database (SQLite) and BM25 lemmatizer wrapped in
timers. Each request's total time and its time in each of them are appended, as one JSON line
keyed by the request's X-Request-ID (which every answer carries), to the file named by
`MEM0_LOCAL_PROFILE_FILE`. Nothing here is part of the service.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

import mem0_local._cli as cli
import mem0_local._store as store

#: Seconds per hop of the request being served (a dict shared with mem0's worker threads, which
#: run in a copy of the request's context).
_spans: contextvars.ContextVar[dict[str, float] | None] = contextvars.ContextVar(
    "profile_spans", default=None
)
_write_lock = threading.Lock()


def _timed(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            spans = _spans.get()
            if spans is not None:
                spans[name] = spans.get(name, 0.0) + time.perf_counter() - started

    return timed


def _time_methods(obj: Any, name: str) -> None:
    for method, _ in inspect.getmembers(type(obj), callable):
        if not method.startswith("_"):
            setattr(obj, method, _timed(name, getattr(obj, method)))


def _instrument(memory: Any) -> Any:
    store_name = "postgres" if memory.config.vector_store.provider == "pgvector" else "embedded"
    _time_methods(memory.vector_store, f"vector store ({store_name})")
    _time_methods(memory.db, "history db (sqlite)")
    for method in ("embed", "embed_batch"):
        if hasattr(memory.embedding_model, method):
            original = getattr(memory.embedding_model, method)
            setattr(memory.embedding_model, method, _timed("embedder", original))
    import mem0.memory.main as mem0_main  # noqa: PLC0415 - loaded by now

    for function in ("lemmatize_for_bm25", "extract_entities"):
        setattr(mem0_main, function, _timed("text preprocessing", getattr(mem0_main, function)))
    return memory


class _Profiler:
    """Outermost ASGI middleware: times each request and writes its spans."""

    def __init__(self, app: ASGIApp, path: str) -> None:
        self.app = app
        self.path = Path(path)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        spans: dict[str, float] = {}
        token = _spans.set(spans)
        request_id = ""

        async def sending(message: Message) -> None:
            nonlocal request_id
            if message["type"] == "http.response.start":
                for key, value in message.get("headers", []):
                    if key.lower() == b"x-request-id":
                        request_id = value.decode("latin-1")
            await send(message)

        started = time.perf_counter()
        try:
            await self.app(scope, receive, sending)
        finally:
            total = time.perf_counter() - started
            _spans.reset(token)
            line = json.dumps(
                {
                    "id": request_id,
                    "path": scope.get("path", ""),
                    "total": total,
                    "spans": spans,
                }
            )
            with _write_lock, self.path.open("a", encoding="utf-8") as out:
                out.write(line + "\n")


def main() -> int:
    path = os.environ["MEM0_LOCAL_PROFILE_FILE"]
    open_memory = store.open_async_memory
    store.open_async_memory = lambda settings: _instrument(open_memory(settings))
    namespace = vars(cli)  # the name the console script builds its app with
    create_app = namespace["create_app"]

    def profiled_app(settings: Any) -> Any:
        app = create_app(settings)
        app.add_middleware(_Profiler, path=path)
        return app

    namespace["create_app"] = profiled_app
    return cli.main()


if __name__ == "__main__":
    sys.exit(main())

"""Concurrency for the embedded store: reads together, each write alone, a reset apart.

The embedded store (qdrant's local mode) keeps its points in plain Python and numpy structures
that a write resizes in place, so a write must never overlap another call on it; reads change
nothing and may overlap each other. mem0 calls the store from its worker threads, so the guard
is a readers-writer lock taken around each call on the store's client (shared by mem0's memory
and entity collections), not around a whole request: the embedding, mem0's own work and the
HTTP layer of one request overlap every other request's. PostgreSQL needs none of this.

A reset swaps the store's client, so requests and a reset are kept apart by an asyncio gate.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractContextManager, asynccontextmanager, contextmanager
from typing import Any

#: The qdrant client's methods that only read; every other method counts as a write.
READ_METHODS = frozenset(
    {
        "collection_exists",
        "count",
        "get_collection",
        "get_collections",
        "query_batch_points",
        "query_points",
        "retrieve",
        "scroll",
        "search",
        "search_batch",
    }
)
#: Set on a client whose methods are locked, so that it is never wrapped twice.
_LOCKED_MARK = "_mem0_local_locked"


class ReadWriteLock:
    """Many readers or one writer, for threads; a waiting writer holds off new readers.

    A call made by a thread that holds the lock already (a client method calling another) runs
    under the hold it has.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writer = False
        self._writers_waiting = 0
        self._held = threading.local()

    def reading(self) -> AbstractContextManager[None]:
        """Hold the lock shared (or run under the hold this thread has)."""
        return self._outermost(self._shared)

    def writing(self) -> AbstractContextManager[None]:
        """Hold the lock alone (or run under the hold this thread has)."""
        return self._outermost(self._exclusive)

    @contextmanager
    def _outermost(self, take: Callable[[], AbstractContextManager[None]]) -> Iterator[None]:
        """`take` the lock unless this thread holds it already, counting the nesting."""
        depth = getattr(self._held, "depth", 0)
        self._held.depth = depth + 1
        try:
            if depth:
                yield
            else:
                with take():
                    yield
        finally:
            self._held.depth = depth

    @contextmanager
    def _shared(self) -> Iterator[None]:
        with self._cond:
            self._cond.wait_for(lambda: not self._writer and not self._writers_waiting)
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                if not self._readers:
                    self._cond.notify_all()

    @contextmanager
    def _exclusive(self) -> Iterator[None]:
        with self._cond:
            self._writers_waiting += 1
            try:
                self._cond.wait_for(lambda: not self._writer and not self._readers)
            finally:
                self._writers_waiting -= 1
            self._writer = True
        try:
            yield
        finally:
            with self._cond:
                self._writer = False
                self._cond.notify_all()


def lock_client_methods(client: Any, lock: ReadWriteLock) -> None:
    """Make every public method of `client` take `lock`: shared for `READ_METHODS`, exclusive
    for the rest. Bound on the instance, so the client stays what it was for every check of its
    type (mem0 hands the same client to its entity collection)."""
    if getattr(client, _LOCKED_MARK, False):
        return
    for name, _ in inspect.getmembers(type(client), callable):
        if name.startswith("_"):
            continue
        method = getattr(client, name)
        guard = lock.reading if name in READ_METHODS else lock.writing
        setattr(client, name, _guarded(method, guard))
    setattr(client, _LOCKED_MARK, True)


def _guarded(method: Callable[..., Any], guard: Callable[[], Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def locked(*args: Any, **kwargs: Any) -> Any:
        with guard():
            return method(*args, **kwargs)

    return locked


class ResetGate:
    """Requests run together; a reset waits for those in flight and holds off new ones."""

    def __init__(self) -> None:
        self._cond = asyncio.Condition()
        self._active = 0
        self._resetting = False

    @asynccontextmanager
    async def request(self) -> AsyncIterator[None]:
        async with self._cond:
            await self._cond.wait_for(lambda: not self._resetting)
            self._active += 1
        try:
            yield
        finally:
            async with self._cond:
                self._active -= 1
                self._cond.notify_all()

    @asynccontextmanager
    async def reset(self) -> AsyncIterator[None]:
        async with self._cond:
            await self._cond.wait_for(lambda: not self._resetting)
            self._resetting = True
            await self._cond.wait_for(lambda: not self._active)
        try:
            yield
        finally:
            async with self._cond:
                self._resetting = False
                self._cond.notify_all()

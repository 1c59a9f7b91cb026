"""Running the bridge's calls together: per-key locks, and concurrent calls gathered.

`KeyedLocks` is one lock per key: the memory service's scope locks (`_leases.ScopeLocks`) take
it first, so that writes in one scope of this process see each other (the ranker's dedupe check
and its record of what was stored are separate calls with a mem0 add between them, and a
restatement racing an add must be judged against it), then the ranker's lease for the replicas.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from contextlib import asynccontextmanager
from typing import TypeVar, cast

import anyio

_T = TypeVar("_T")
_A = TypeVar("_A")
_B = TypeVar("_B")


class KeyedLocks:
    """One lock per key, made on first use and dropped once nobody holds or awaits it."""

    def __init__(self) -> None:
        self._locks: dict[Hashable, tuple[anyio.Lock, int]] = {}

    def __len__(self) -> int:
        return len(self._locks)

    @asynccontextmanager
    async def hold(self, key: Hashable) -> AsyncIterator[None]:
        lock, users = self._locks.get(key, (None, 0))
        if lock is None:
            lock = anyio.Lock()
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[key]
            if users == 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)


async def gather(*calls: Callable[[], Awaitable[_T]]) -> list[_T]:
    """Run `calls` concurrently; a failure is raised as itself, not as an exception group.

    The caller turns a `Mem0Error` into the agent's message, and a group would hide it.
    """
    results: list[_T | None] = [None] * len(calls)
    errors: list[Exception] = []

    async def run(index: int, call: Callable[[], Awaitable[_T]]) -> None:
        try:
            results[index] = await call()
        except Exception as exc:  # re-raised below, unwrapped
            errors.append(exc)

    async with anyio.create_task_group() as tasks:
        for index, call in enumerate(calls):
            tasks.start_soon(run, index, call)
    if errors:
        raise errors[0]
    return cast(list[_T], results)


async def both(
    first: Callable[[], Awaitable[_A]], second: Callable[[], Awaitable[_B]]
) -> tuple[_A, _B]:
    """`gather` for two calls of different result types."""
    a, b = await gather(cast(Callable[[], Awaitable[object]], first), second)
    return cast(_A, a), cast(_B, b)

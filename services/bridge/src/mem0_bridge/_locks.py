"""Per-key locks, so two identical adds racing through one bridge cannot both be stored."""

from __future__ import annotations

from collections.abc import AsyncIterator, Hashable
from contextlib import asynccontextmanager

import anyio


class KeyedLocks:
    """One lock per key, made on first use and dropped once nobody holds or awaits it.

    The dedupe check and the record of what was stored are separate ranker calls with a mem0
    add between them; serialising adds of the same text in the same scope closes that window
    for one bridge (replicas behind a load balancer can still race; the ranker's window then
    catches the next repeat).
    """

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

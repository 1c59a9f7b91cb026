"""A bounded LRU cache with a TTL that also coalesces identical calls in flight.

Agents ask the same few questions in bursts; without coalescing, 200 concurrent rewrites of 20
questions would all miss (nothing is cached until the first answer lands) and make 200 LLM calls.
With it, the first caller of a key makes the call and the others await that same result.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

V = TypeVar("V")

CacheResult = Literal["hit", "coalesced", "miss"]


@dataclass(frozen=True)
class _Entry(Generic[V]):
    value: V
    expires: float


class TTLCache(Generic[V]):
    """`get_or_compute(key, compute)` returns the value and whether it was a hit/coalesced/miss.

    Only successes are cached; a failed compute propagates to every caller awaiting it and the
    next caller tries again. `size` 0 disables storing (calls still coalesce).
    """

    def __init__(
        self, size: int, ttl_seconds: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._size = size
        self._ttl = ttl_seconds
        self._clock = clock
        self._entries: OrderedDict[str, _Entry[V]] = OrderedDict()
        self._inflight: dict[str, asyncio.Future[V]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str) -> V | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry.expires <= self._clock():
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return entry.value

    def put(self, key: str, value: V) -> None:
        if self._size <= 0:
            return
        self._entries[key] = _Entry(value, self._clock() + self._ttl)
        self._entries.move_to_end(key)
        while len(self._entries) > self._size:
            self._entries.popitem(last=False)

    async def get_or_compute(
        self, key: str, compute: Callable[[], Awaitable[V]]
    ) -> tuple[V, CacheResult]:
        """The first caller's `compute` runs as its own task, so a caller that gives up (its
        deadline passed) cancels only its own wait, never the call others are waiting on."""
        cached = self.get(key)
        if cached is not None:
            return cached, "hit"
        task = self._inflight.get(key)
        result: CacheResult = "coalesced"
        if task is None:
            task = asyncio.ensure_future(compute())
            self._inflight[key] = task
            task.add_done_callback(lambda done: self._settle(key, done))
            result = "miss"
        return await asyncio.shield(task), result

    def _settle(self, key: str, task: asyncio.Future[V]) -> None:
        del self._inflight[key]
        if task.cancelled():
            return
        if task.exception() is None:  # also marks a failure retrieved if no caller is left
            self.put(key, task.result())

"""Concurrent mention lookups share one query.

Every search reranks, so at load dozens of Rerank calls want mention rows at once. Sent one by
one, each pays a trip to the database thread (SQLite) or server (PostgreSQL) and, worse, a wait
for the GIL while the event loop is busy; batched, one trip serves all of them. A lone call is
not delayed: it runs as soon as the event loop gets to it, and calls arriving while a query
runs are collected for the next one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from mem0_ranker._scoring import MentionRecord

Records = dict[str, MentionRecord]


class CoalescedLookup:
    def __init__(self, fetch: Callable[[list[str]], Awaitable[Records]]) -> None:
        self._fetch = fetch
        self._pending: list[asyncio.Future[Records]] = []
        self._pending_ids: dict[str, None] = {}
        self._leader: asyncio.Task[None] | None = None

    async def __call__(self, memory_ids: Sequence[str]) -> Records:
        """Records of `memory_ids` (the dict may also hold other ids of the same batch)."""
        future: asyncio.Future[Records] = asyncio.get_running_loop().create_future()
        self._pending.append(future)
        self._pending_ids.update(dict.fromkeys(memory_ids))
        if self._leader is None:
            self._leader = asyncio.create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        try:
            while self._pending:
                waiting, self._pending = self._pending, []
                ids, self._pending_ids = list(self._pending_ids), {}
                try:
                    found = await self._fetch(ids)
                except asyncio.CancelledError:
                    for future in waiting:
                        future.cancel()
                    raise
                except Exception as exc:  # handed to every caller of the batch
                    for future in waiting:
                        if not future.done():
                            future.set_exception(exc)
                    continue
                for future in waiting:
                    if not future.done():
                        future.set_result(found)
        finally:
            self._leader = None
            for future in self._pending:  # only left here when cancelled mid-batch
                future.cancel()

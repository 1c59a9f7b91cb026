"""Question rewrites that no search waits for: fetched in the background, kept for next time.

A question embeds far from the statement that answers it, so the judge's Rewrite turns it into
such a statement (HyDE-lite), which the search looks up beside the question. That is an LLM
call, 0.3-2 s on a hosted model, while mem0's search takes tens of milliseconds; a search must
not wait for it. So the first time a question comes, its rewrite is asked for in the
background and kept (`CACHE_SIZE` questions, for `TTL_SECONDS`), and the question's later
searches use it (a search waits for a rewrite not kept yet only with `MEM0_REWRITE_WAIT_MS`,
which the recall benchmark sets). Queries that are not questions are never sent.

`run()` serves the background rewrites, as a task of the bridge's lifespan; without it (a
`MemoryService` used on its own), a search that may wait asks the judge itself.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from dataclasses import dataclass

import anyio
from anyio.abc import ObjectReceiveStream, TaskGroup
from anyio.streams.memory import MemoryObjectSendStream

from mem0_bridge._grpc import PeerFailure
from mem0_bridge._inputs import same_text
from mem0_bridge._judge import JudgeClient
from mem0_common import is_question

logger = logging.getLogger(__name__)

#: Questions whose rewrite is kept.
CACHE_SIZE = 1024
#: How long a rewrite is kept (the judge keeps its own answers as long).
TTL_SECONDS = 3600.0
#: Questions waiting for a background rewrite; further ones are not rewritten this time.
QUEUE_SIZE = 256
#: Background rewrites in flight at once (the judge queues more for its LLM anyway).
CONCURRENT = 8


@dataclass(frozen=True)
class Rewrite:
    """What the judge made of a question: the statement to search, or None (not worth one)."""

    statement: str | None


class Rewrites:
    def __init__(self, judge: JudgeClient, timeout_seconds: float) -> None:
        self._judge = judge
        self._timeout = timeout_seconds
        self._kept: OrderedDict[str, tuple[Rewrite, float]] = OrderedDict()
        self._inflight: dict[str, anyio.Event] = {}
        #: Why the latest rewrite of a question failed, for a search that waited for it.
        self._failures: dict[str, PeerFailure] = {}
        #: The background worker's queue, while `run()` runs.
        self._send: MemoryObjectSendStream[str] | None = None

    @staticmethod
    def worth_asking(query: str) -> bool:
        return is_question(query)

    def kept(self, query: str) -> Rewrite | None:
        """The rewrite kept for `query`, if any."""
        entry = self._kept.get(query)
        if entry is None:
            return None
        rewrite, expires = entry
        if expires <= anyio.current_time():
            del self._kept[query]
            return None
        self._kept.move_to_end(query)
        return rewrite

    def failure(self, query: str) -> PeerFailure | None:
        return self._failures.get(query)

    def request(self, query: str) -> anyio.Event | None:
        """Ask for `query`'s rewrite in the background; the event is set once it is back (or
        failed). None when there is no background worker or its queue is full."""
        waiting = self._inflight.get(query)
        if waiting is not None or self._send is None:
            return waiting
        done = anyio.Event()
        try:
            self._send.send_nowait(query)
        except anyio.WouldBlock:
            logger.warning("question rewrite queue full: %r is searched as asked", query[:80])
            return None
        self._inflight[query] = done
        return done

    async def rewrite_now(self, query: str, deadline: float) -> Rewrite | PeerFailure:
        """Ask the judge and keep what it answers (what a background rewrite does)."""
        answer = await self._judge.rewrite(query, deadline=deadline)
        if isinstance(answer, PeerFailure):
            self._failures[query] = answer
            return answer
        self._failures.pop(query, None)
        rewrite = Rewrite(None if answer is None or same_text(answer, query) else answer)
        self._keep(query, rewrite)
        return rewrite

    def _keep(self, query: str, rewrite: Rewrite) -> None:
        self._kept[query] = (rewrite, anyio.current_time() + TTL_SECONDS)
        self._kept.move_to_end(query)
        while len(self._kept) > CACHE_SIZE:
            self._kept.popitem(last=False)

    async def run(self) -> None:
        """Serve background rewrites until cancelled (a task of the bridge's lifespan)."""
        send, receive = anyio.create_memory_object_stream[str](QUEUE_SIZE)
        slots = anyio.Semaphore(CONCURRENT)
        async with send, receive:
            self._send = send
            try:
                async with anyio.create_task_group() as tasks:
                    await self._serve(receive, tasks, slots)
            finally:
                self._send = None

    async def _serve(
        self, queries: ObjectReceiveStream[str], tasks: TaskGroup, slots: anyio.Semaphore
    ) -> None:
        async for query in queries:
            await slots.acquire()
            tasks.start_soon(self._background, query, slots)

    async def _background(self, query: str, slots: anyio.Semaphore) -> None:
        try:
            if await self._judge.usable() is None:
                await self.rewrite_now(query, self._timeout)
        except Exception:  # a bad rewrite must not end the worker
            logger.exception("background rewrite failed")
        finally:
            slots.release()
            done = self._inflight.pop(query, None)
            if done is not None:
                done.set()

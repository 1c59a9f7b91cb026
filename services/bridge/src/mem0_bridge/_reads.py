"""Memories read by id for one call, each read from mem0 once.

A search's superseded hits and an add's older candidates are followed along their supersede
chains to their fact's current memory. Under load a fact changed back and forth builds chains
of several links, and several hits of one fact share most of theirs: walked one GET per link
per hit, those walks were most of the bridge's requests to mem0. `Reads` keeps what one call
read, and reads a whole level of links at once.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable

from mem0_bridge._concurrency import gather
from mem0_bridge._mem0 import Mem0Client, Memory


class Reads:
    """A memo of `Mem0Client.get` for one call, seeded with the memories the call has already
    read (a search's results): the store may change between calls, so one never outlives the
    call that made it."""

    def __init__(self, mem0: Mem0Client, known: Iterable[Memory] = ()) -> None:
        self._mem0 = mem0
        self._read: dict[str, Memory | None] = {m.id: m for m in known}

    async def get(self, memory_id: str) -> Memory | None:
        """The memory (None when there is none), read once."""
        if memory_id not in self._read:
            self._read[memory_id] = await self._mem0.get(memory_id)
        return self._read[memory_id]

    async def chains(
        self, starts: Iterable[str], *, hops: int, stop: Callable[[Memory], bool]
    ) -> None:
        """Read the memories along the supersede chains that begin at `starts`, one level of
        links at a time with every read of a level at once, until a chain ends (a gap, a loop,
        a current memory, or a memory `stop` ends it at) or after `hops` links. `get` then
        answers a walk along them without waiting on mem0."""

        def onward_of(memory: Memory | None) -> str | None:
            return None if memory is None or stop(memory) else memory.lifetime.onward

        level, seen = set(starts), set[str]()
        for _ in range(hops):
            unread = sorted(i for i in level if i not in self._read)
            read = await gather(*(functools.partial(self._mem0.get, i) for i in unread))
            self._read.update(zip(unread, read, strict=True))
            seen |= level
            onward = (onward_of(self._read[i]) for i in level)
            level = {i for i in onward if i is not None and i not in seen}
            if not level:
                return

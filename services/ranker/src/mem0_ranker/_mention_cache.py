"""Mention rows kept in memory, so reranking hot memories skips the database.

Every search reranks the memories mem0 found, and mem0 finds the same memories again and again,
most of them never reinforced. A rerank that hits the cache for all its candidates never leaves
the event loop; only misses go to the database (through the coalesced lookup), and the answer
for every missed id is cached, "no row" included, since most candidates have none.

Exactness is the writers' job: each write method of a store updates or drops the entries it
touched right after its commit, in the same task. A lookup that was already reading when a
write happened might carry the old row, so the cache keeps a generation number that every write
bumps, and a lookup fills the cache only if no write happened while it read.

- SQLite: one ranker process owns the file, so its own writes are all the writes there are and
  the cache is exact; entries never expire.
- PostgreSQL: other replicas write too and this replica cannot see their writes, so entries
  expire `ttl_seconds` after they were read: another replica's Reinforce or Forget shows here
  at most that late. This replica's own writes show at once.

Entries are evicted least recently used first once `max_entries` is reached.
"""

from __future__ import annotations

import functools
import math
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import cast

from mem0_ranker._coalescing import CoalescedLookup
from mem0_ranker._scoring import MentionRecord

Records = dict[str, MentionRecord]


class MentionCache:
    """Bounded map memory id -> its mention record, or None for "no row"."""

    def __init__(
        self,
        max_entries: int,
        ttl_seconds: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1 (for no cache, give the store None)")
        self.max_entries = max_entries
        self._ttl = math.inf if ttl_seconds is None else ttl_seconds
        self._clock = clock
        self._entries: OrderedDict[str, tuple[MentionRecord | None, float]] = OrderedDict()
        self.generation = 0

    def __len__(self) -> int:
        return len(self._entries)

    def lookup(self, memory_ids: Sequence[str]) -> tuple[Records, list[str]]:
        """The cached records among `memory_ids`, and the ids the cache cannot answer."""
        now = self._clock()
        get = self._entries.get
        touch = self._entries.move_to_end
        # Every id answered and none expired (the common case for hot memories): one pass in C
        # for each step instead of a Python loop over the ids.
        entries = list(map(get, memory_ids))
        if None not in entries:
            hits = cast("list[tuple[MentionRecord | None, float]]", entries)
            if (
                self._ttl == math.inf
                or min((expires for _, expires in hits), default=math.inf) > now
            ):
                deque(map(touch, memory_ids), maxlen=0)
                return {
                    memory_id: record
                    for memory_id, (record, _) in zip(memory_ids, hits, strict=True)
                    if record is not None
                }, []
        found: Records = {}
        missing: list[str] = []
        for memory_id, entry in zip(memory_ids, entries, strict=True):  # looked up above
            if entry is None or entry[1] <= now:
                missing.append(memory_id)
                continue
            touch(memory_id)
            if entry[0] is not None:
                found[memory_id] = entry[0]
        return found, missing

    def fill(
        self, memory_ids: Sequence[str], found: Mapping[str, MentionRecord], since: int
    ) -> None:
        """Cache what one read of `memory_ids` returned, unless a write happened since it began.

        `since` is the generation read before the query was sent.
        """
        if since != self.generation:
            return
        expires = self._clock() + self._ttl
        entries = self._entries
        for memory_id in memory_ids:
            entries[memory_id] = (found.get(memory_id), expires)
            entries.move_to_end(memory_id)
        while len(entries) > self.max_entries:
            entries.popitem(last=False)

    def written(self, memory_id: str, record: MentionRecord) -> None:
        """A write committed this row: later lookups see it without a query."""
        self.generation += 1
        self._entries[memory_id] = (record, self._clock() + self._ttl)
        self._entries.move_to_end(memory_id)
        if len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def forget(self, memory_ids: Iterable[str]) -> None:
        """A write committed the deletion of these rows (cached as "no row" is just as exact,
        but dropping them keeps the cache for memories still in use)."""
        self.generation += 1
        for memory_id in memory_ids:
            self._entries.pop(memory_id, None)

    def clear(self) -> None:
        """A write removed rows this process cannot name (a scope, everything)."""
        self.generation += 1
        self._entries.clear()


class MentionReader:
    """Mention records through the cache (if any), the misses through one coalesced query."""

    def __init__(
        self, fetch: Callable[[list[str]], Awaitable[Records]], cache: MentionCache | None
    ) -> None:
        self._fetch = fetch
        self.cache = cache
        self._lookup = CoalescedLookup(
            fetch if cache is None else functools.partial(self._fetch_and_fill, cache)
        )

    async def __call__(self, memory_ids: Sequence[str]) -> Records:
        if not memory_ids:
            return {}
        if self.cache is None:
            return await self._lookup(memory_ids)
        found, missing = self.cache.lookup(memory_ids)
        if missing:
            fetched = await self._lookup(missing)
            for memory_id in missing:
                record = fetched.get(memory_id)
                if record is not None:
                    found[memory_id] = record
        return found

    def cached(self, memory_ids: Sequence[str]) -> Records | None:
        """The records from the cache alone when it answers every id, else None."""
        if self.cache is None:
            return None
        found, missing = self.cache.lookup(memory_ids)
        return None if missing else found

    async def _fetch_and_fill(self, cache: MentionCache, memory_ids: list[str]) -> Records:
        since = cache.generation
        found = await self._fetch(memory_ids)
        cache.fill(memory_ids, found, since)
        return found

    def written(self, memory_id: str, record: MentionRecord) -> None:
        if self.cache is not None:
            self.cache.written(memory_id, record)

    def forget(self, memory_ids: Iterable[str]) -> None:
        if self.cache is not None:
            self.cache.forget(memory_ids)

    def clear(self) -> None:
        if self.cache is not None:
            self.cache.clear()

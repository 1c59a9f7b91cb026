"""Concurrent mention lookups share one query, and each caller still gets its own answer."""

from __future__ import annotations

import asyncio

import pytest

from mem0_ranker import MentionRecord
from mem0_ranker._coalescing import CoalescedLookup

pytestmark = pytest.mark.anyio


class RecordingFetch:
    """A lookup that answers from a dict, records each batch, and can be held open."""

    def __init__(self, rows: dict[str, MentionRecord]) -> None:
        self.rows = rows
        self.batches: list[list[str]] = []
        self.gate = asyncio.Event()
        self.gate.set()
        self.error: Exception | None = None

    async def __call__(self, ids: list[str]) -> dict[str, MentionRecord]:
        self.batches.append(ids)
        await self.gate.wait()
        if self.error is not None:
            raise self.error
        return {i: self.rows[i] for i in ids if i in self.rows}


ROWS = {f"m{i}": MentionRecord(i, 1000.0 + i) for i in range(10)}


async def test_calls_arriving_together_share_one_query() -> None:
    fetch = RecordingFetch(ROWS)
    lookup = CoalescedLookup(fetch)
    results = await asyncio.gather(lookup(["m1", "m2"]), lookup(["m2", "m3"]), lookup(["x"]))
    assert fetch.batches == [["m1", "m2", "m3", "x"]]
    assert results[0]["m1"] == ROWS["m1"]
    assert results[1]["m3"] == ROWS["m3"]
    assert "x" not in results[2]


async def test_calls_arriving_during_a_query_go_together_in_the_next() -> None:
    fetch = RecordingFetch(ROWS)
    fetch.gate.clear()
    lookup = CoalescedLookup(fetch)
    first = asyncio.create_task(lookup(["m1"]))
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    later = [asyncio.create_task(lookup([f"m{i}"])) for i in (4, 5)]
    await asyncio.sleep(0)
    fetch.gate.set()
    await asyncio.gather(first, *later)
    assert fetch.batches == [["m1"], ["m4", "m5"]]
    assert later[1].result()["m5"] == ROWS["m5"]


async def test_a_failed_query_fails_every_caller_of_its_batch_only() -> None:
    fetch = RecordingFetch(ROWS)
    fetch.error = RuntimeError("database is gone")
    lookup = CoalescedLookup(fetch)
    outcomes = await asyncio.gather(lookup(["m1"]), lookup(["m2"]), return_exceptions=True)
    assert all(isinstance(o, RuntimeError) for o in outcomes)
    fetch.error = None
    assert (await lookup(["m1"]))["m1"] == ROWS["m1"]

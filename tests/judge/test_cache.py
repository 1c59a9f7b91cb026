"""The rewrite cache: LRU bound, TTL, and coalescing of identical calls in flight."""

from __future__ import annotations

import asyncio

import pytest

from mem0_judge import TTLCache


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_least_recently_used_entry_is_evicted() -> None:
    cache = TTLCache[str](2, 60)
    cache.put("a", "A")
    cache.put("b", "B")
    assert cache.get("a") == "A"
    cache.put("c", "C")
    assert cache.get("b") is None
    assert (cache.get("a"), cache.get("c")) == ("A", "C")


def test_an_entry_expires_after_its_ttl() -> None:
    clock = Clock()
    cache = TTLCache[str](10, 5, clock=clock)
    cache.put("a", "A")
    clock.now = 4.9
    assert cache.get("a") == "A"
    clock.now = 5.0
    assert cache.get("a") is None
    assert len(cache) == 0


def test_size_zero_stores_nothing() -> None:
    cache = TTLCache[str](0, 5)
    cache.put("a", "A")
    assert cache.get("a") is None


@pytest.mark.anyio
async def test_concurrent_misses_of_one_key_compute_once() -> None:
    cache = TTLCache[str](10, 60)
    calls = 0
    release = asyncio.Event()

    async def compute() -> str:
        nonlocal calls
        calls += 1
        await release.wait()
        return "value"

    waiting = [asyncio.ensure_future(cache.get_or_compute("k", compute)) for _ in range(5)]
    await asyncio.sleep(0)
    release.set()
    results = await asyncio.gather(*waiting)
    assert calls == 1
    assert sorted(r for _, r in results) == ["coalesced"] * 4 + ["miss"]
    assert await cache.get_or_compute("k", compute) == ("value", "hit")


@pytest.mark.anyio
async def test_a_caller_giving_up_does_not_cancel_the_shared_call() -> None:
    cache = TTLCache[str](10, 60)
    release = asyncio.Event()

    async def compute() -> str:
        await release.wait()
        return "value"

    first = asyncio.ensure_future(cache.get_or_compute("k", compute))
    await asyncio.sleep(0)
    second = asyncio.ensure_future(cache.get_or_compute("k", compute))
    await asyncio.sleep(0)
    first.cancel()
    release.set()
    assert await second == ("value", "coalesced")
    assert cache.get("k") == "value"


@pytest.mark.anyio
async def test_a_failure_reaches_every_waiter_and_is_not_cached() -> None:
    cache = TTLCache[str](10, 60)

    async def fail() -> str:
        await asyncio.sleep(0)
        raise RuntimeError("llm down")

    results = await asyncio.gather(
        cache.get_or_compute("k", fail), cache.get_or_compute("k", fail), return_exceptions=True
    )
    assert [str(r) for r in results] == ["llm down", "llm down"]
    assert cache.get("k") is None

"""The load benchmark waits for the bridge's background reconciling before it checks the store:
a pause between two reconciles is not the end of it."""

from __future__ import annotations

import httpx
import pytest

from bench.load.run import settle

pytestmark = pytest.mark.anyio


def _store(unjudged_reads: int) -> httpx.MockTransport:
    """One memory in load-api, flagged unjudged for its first `unjudged_reads` listings (a
    reconcile that settles it as a fact of its own clears only the flag)."""
    reads = 0

    def handle(request: httpx.Request) -> httpx.Response:
        nonlocal reads
        if request.url.params.get("run_id") != "load-api":
            return httpx.Response(200, json={"results": []})
        reads += 1
        metadata = {"unjudged": True} if reads <= unjudged_reads else {"unjudged": None}
        memory = {"id": "m1", "memory": "The API port is 8080.", "metadata": metadata}
        return httpx.Response(200, json={"results": [memory]})

    return httpx.MockTransport(handle)


async def test_the_store_is_not_settled_while_a_memory_waits_for_the_reconciler() -> None:
    async with httpx.AsyncClient(transport=_store(3), base_url="http://mem0.test") as http:
        settled = await settle(http, "u", quiet=0.0, limit=30.0)
    assert settled.stable
    assert [(m.metadata or {}).get("unjudged") for m in settled.stored] == [None]


async def test_a_reconciler_that_never_finishes_leaves_the_store_unsettled() -> None:
    async with httpx.AsyncClient(transport=_store(1_000), base_url="http://mem0.test") as http:
        settled = await settle(http, "u", quiet=0.0, limit=2.5)
    assert not settled.stable


async def test_a_memory_folded_while_it_waited_does_not_hold_the_store_unsettled() -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        metadata = {"unjudged": True, "folded_into": "m2"}
        folded = {"id": "m1", "memory": "The API port is 8080.", "metadata": metadata}
        return httpx.Response(200, json={"results": [folded]})

    transport = httpx.MockTransport(handle)
    async with httpx.AsyncClient(transport=transport, base_url="http://mem0.test") as http:
        settled = await settle(http, "u", quiet=0.0, limit=30.0)
    assert settled.stable

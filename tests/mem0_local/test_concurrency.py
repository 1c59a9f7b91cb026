"""Nothing acknowledged is lost when adds arrive at once (pgvector and the embedded store)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from mem0_local import Mem0LocalSettings
from tests.mem0_local._server import InProcessServer, add_memories

CONCURRENT_ADDS = 16


def _add_concurrently(client: httpx.Client, user_id: str) -> set[str]:
    texts = [f"Concurrent fact number {i}." for i in range(CONCURRENT_ADDS)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        batches = list(pool.map(lambda text: add_memories(client, user_id, text), texts))
    return {memory_id for batch in batches for memory_id in batch}


def _listed(client: httpx.Client, user_id: str) -> set[str]:
    response = client.get("/memories", params={"user_id": user_id, "top_k": 100})
    return {item["id"] for item in response.json()["results"]}


def test_concurrent_adds_to_pgvector_are_all_kept(llm_client: httpx.Client, user_id: str) -> None:
    acknowledged = _add_concurrently(llm_client, user_id)

    assert len(acknowledged) == CONCURRENT_ADDS
    assert _listed(llm_client, user_id) == acknowledged


def test_concurrent_adds_to_the_embedded_store_are_all_kept(tmp_path: Path) -> None:
    with (
        InProcessServer(Mem0LocalSettings(data_dir=tmp_path)) as server,
        httpx.Client(base_url=server.url, timeout=60) as client,
    ):
        acknowledged = _add_concurrently(client, "u1")

        assert len(acknowledged) == CONCURRENT_ADDS
        assert _listed(client, "u1") == acknowledged

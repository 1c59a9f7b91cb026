"""An OpenAI-compatible embeddings endpoint replaces the local MiniLM when configured."""

from __future__ import annotations

from pathlib import Path

import httpx

from mem0_local import Mem0LocalSettings
from tests.fakes.llm import FakeLLM
from tests.mem0_local._server import InProcessServer, add_memories


def test_configured_embeddings_endpoint_embeds_adds_and_queries(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    settings = Mem0LocalSettings(
        data_dir=tmp_path, embedder_base_url=fake_llm.base_url, embedder_model="fake-embedder"
    )
    with (
        InProcessServer(settings) as server,
        httpx.Client(base_url=server.url, timeout=60) as client,
    ):
        [memory_id] = add_memories(client, "u1", "Embedded far away.")
        found = client.post("/search", json={"query": "embedded far away", "user_id": "u1"})
        again = client.post("/search", json={"query": "embedded far away", "user_id": "u1"})
        embedder = client.get("/config").json()["embedder"]

    embedded = [r["input"] for r in fake_llm.requests if r["_path"] == "/v1/embeddings"]
    # The repeated query's vector came from the cache.
    assert embedded == [["Embedded far away."], ["embedded far away"]]
    assert {r["model"] for r in fake_llm.requests} == {"fake-embedder"}
    assert [r["id"] for r in found.json()["results"]] == [memory_id]
    assert [r["id"] for r in again.json()["results"]] == [memory_id]
    assert embedder["provider"] == "openai-compatible"

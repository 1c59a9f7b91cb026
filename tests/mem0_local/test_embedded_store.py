"""The zero-setup default: no database URL, an on-disk store in the data directory."""

from __future__ import annotations

from pathlib import Path

import httpx

from mem0_local import Mem0LocalSettings
from tests.mem0_local._server import InProcessServer, add_memories


def _search(url: str, user_id: str, query: str) -> list[dict[str, object]]:
    response = httpx.post(
        f"{url}/search", json={"query": query, "user_id": user_id, "threshold": 0.0}, timeout=60
    )
    assert response.status_code == 200, response.text
    results: list[dict[str, object]] = response.json()["results"]
    return results


def test_embedded_store_ranks_the_paraphrased_memory_first(tmp_path: Path) -> None:
    with (
        InProcessServer(Mem0LocalSettings(data_dir=tmp_path)) as server,
        httpx.Client(base_url=server.url, timeout=60) as client,
    ):
        [_, wanted] = add_memories(
            client, "u1", "The invoice service is written in Kotlin.", "My dog is called Rex."
        )

        results = _search(server.url, "u1", "what is the name of my pet")

        assert client.get("/config").json()["vector_store"] == "embedded"
        assert results[0]["id"] == wanted
    assert (tmp_path / "qdrant").is_dir()
    assert (tmp_path / "history.db").is_file()


def test_embedded_store_keeps_memories_across_restarts(tmp_path: Path) -> None:
    settings = Mem0LocalSettings(data_dir=tmp_path)
    with InProcessServer(settings) as first, httpx.Client(base_url=first.url) as client:
        [kept] = add_memories(client, "u1", "Backups run at 2am.")

    with InProcessServer(settings) as second:
        results = _search(second.url, "u1", "when do backups run")

    assert [r["id"] for r in results] == [kept]

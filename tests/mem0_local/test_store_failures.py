"""A vector store that goes away is a 502 `vector_store_unavailable`, not a hang or a 500."""

from __future__ import annotations

from pathlib import Path

import httpx
import psycopg
import pytest
from pydantic import SecretStr

from mem0_local import Mem0LocalSettings
from tests.mem0_local._server import InProcessServer, add_memories
from tests.support.postgres import temporary_database, url


@pytest.mark.postgres
def test_database_gone_is_502_vector_store_unavailable(tmp_path: Path) -> None:
    with temporary_database("mem0local_gone") as database_url:
        settings = Mem0LocalSettings(data_dir=tmp_path, database_url=SecretStr(database_url))
        with (
            InProcessServer(settings) as server,
            httpx.Client(base_url=server.url, timeout=60) as client,
        ):
            add_memories(client, "u1", "Written before the database went away.")
            with psycopg.connect(url("postgres"), autocommit=True) as admin:
                name = database_url.rsplit("/", 1)[1]
                admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')

            response = client.post("/search", json={"query": "anything", "user_id": "u1"})

    assert response.status_code == 502
    assert response.json()["code"] == "vector_store_unavailable"

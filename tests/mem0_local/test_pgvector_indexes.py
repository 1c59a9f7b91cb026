"""mem0-local indexes the payload fields mem0's searches filter on, so a search reads its scope."""

from __future__ import annotations

from pathlib import Path

import httpx
import psycopg
import pytest
from pydantic import SecretStr

from mem0_local import Mem0LocalSettings
from tests.mem0_local._server import InProcessServer, add_memories
from tests.support.postgres import temporary_database

pytestmark = pytest.mark.postgres

#: mem0's own filter, as its pgvector store sends it: the JSON key is a query parameter.
SEARCH = (
    "SELECT id FROM {table} WHERE payload->>%s = %s AND payload->>%s = %s "
    "ORDER BY vector <=> (SELECT vector FROM {table} LIMIT 1) LIMIT 5"
)


@pytest.mark.parametrize(
    "table",
    # A name longer than PostgreSQL keeps of an identifier (63 bytes): the index names must
    # still differ once it is cut.
    ["memories", "memories_of_every_agent_of_the_platform_team_in_the_staging_cluster"],
    ids=["short-name", "long-name"],
)
def test_a_search_filtered_by_user_and_project_reads_them_through_an_index(
    tmp_path: Path, table: str
) -> None:
    with temporary_database("mem0local_indexes") as database_url:
        settings = Mem0LocalSettings(
            data_dir=tmp_path, database_url=SecretStr(database_url), collection_name=table
        )
        with (
            InProcessServer(settings) as server,
            httpx.Client(base_url=server.url, timeout=60) as client,
        ):
            add_memories(client, "u1", "The API port is 8080.")
        with psycopg.connect(database_url, autocommit=True) as conn:
            indexed = {
                row[0]
                for row in conn.execute(
                    "SELECT indexdef FROM pg_indexes WHERE tablename = left(%s, 63)", (table,)
                )
            }
            conn.execute("SET enable_seqscan = off")
            plan = "\n".join(
                row[0]
                for row in conn.execute(
                    "EXPLAIN " + SEARCH.format(table=table), ("user_id", "u1", "run_id", "alpha")
                )
            )
    for field in ("user_id", "agent_id", "run_id"):
        assert any(f"(payload ->> '{field}'::text)" in d for d in indexed), (field, indexed)
    assert any(
        f"Index Cond: ((payload ->> '{field}'::text)" in plan for field in ("user_id", "run_id")
    ), plan

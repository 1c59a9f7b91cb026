"""Per-run PostgreSQL databases on the project's server (provisioned by `make test`)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

HOST = os.environ.get("PGHOST", "127.0.0.1")
PORT = int(os.environ.get("PGPORT", "5432"))
USER = os.environ.get("PGUSER", "postgres")


def url(dbname: str) -> str:
    return f"postgresql://{USER}@{HOST}:{PORT}/{dbname}"


@contextmanager
def temporary_database(prefix: str = "mem0mcp_test", *, vector: bool = True) -> Iterator[str]:
    """Create a uniquely named database (with the `vector` extension), yield its URL, drop it."""
    name = f"{prefix}_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(url("postgres"), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        if vector:
            with psycopg.connect(url(name), autocommit=True) as conn:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        yield url(name)
    finally:
        with psycopg.connect(url("postgres"), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

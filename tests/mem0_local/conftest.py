"""mem0-local servers shared by the whole session (each loads an embedder), and HTTP clients.

Tests isolate themselves with a fresh user id instead of restarting servers.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from mem0_local import Mem0LocalSettings
from tests.fakes.llm import FakeLLM
from tests.mem0_local._server import InProcessServer

API_KEY = "test-api-key"
ADMIN_KEY = "test-admin-key"
RESET_TOKEN = "test-reset-token"  # noqa: S105 - a test fixture value


def _collection() -> str:
    return f"mem0local_{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="session")
def llm_server(
    pg_database: str, _fake_llm_server: FakeLLM, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[InProcessServer]:
    """pgvector, the fake LLM (no retries, so a failure shows at once), auth on, admin key set."""
    settings = Mem0LocalSettings(
        data_dir=tmp_path_factory.mktemp("mem0-local-llm"),
        database_url=SecretStr(pg_database),
        collection_name=_collection(),
        llm_base_url=_fake_llm_server.base_url,
        llm_model="fake-model",
        llm_max_retries=0,
        llm_timeout_seconds=2,
        api_key=SecretStr(API_KEY),
        admin_api_key=SecretStr(ADMIN_KEY),
    )
    with InProcessServer(settings) as server:
        yield server


@pytest.fixture(scope="session")
def plain_server(
    pg_database: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[InProcessServer]:
    """pgvector, no LLM, auth off, only the human's reset token set (no admin key)."""
    settings = Mem0LocalSettings(
        data_dir=tmp_path_factory.mktemp("mem0-local-plain"),
        database_url=SecretStr(pg_database),
        collection_name=_collection(),
        reset_token=SecretStr(RESET_TOKEN),
    )
    with InProcessServer(settings) as server:
        yield server


@pytest.fixture(scope="session")
def embedded_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mem0-local-embedded")


def _client(server: InProcessServer, api_key: str | None = None) -> httpx.Client:
    headers = {"X-API-Key": api_key} if api_key is not None else {}
    return httpx.Client(base_url=server.url, headers=headers, timeout=60)


@pytest.fixture
def llm_client(llm_server: InProcessServer) -> Iterator[httpx.Client]:
    with _client(llm_server, API_KEY) as c:
        yield c


@pytest.fixture
def admin_client(llm_server: InProcessServer) -> Iterator[httpx.Client]:
    with _client(llm_server, ADMIN_KEY) as c:
        yield c


@pytest.fixture
def anonymous_client(llm_server: InProcessServer) -> Iterator[httpx.Client]:
    with _client(llm_server) as c:
        yield c


@pytest.fixture
def plain_client(plain_server: InProcessServer) -> Iterator[httpx.Client]:
    with _client(plain_server) as c:
        yield c


@pytest.fixture
def user_id() -> str:
    return f"user-{uuid.uuid4().hex[:12]}"

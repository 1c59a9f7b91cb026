"""With no LLM configured, adds are stored verbatim and the server says so instead of failing."""

from __future__ import annotations

import httpx
from pydantic import SecretStr

from mem0_local import Mem0LocalSettings, public_config
from tests.mem0_local._server import post_message


def test_infer_true_without_an_llm_stores_the_message_verbatim(
    plain_client: httpx.Client, user_id: str
) -> None:
    response = post_message(
        plain_client, user_id, "I use vim. The API runs on port 9000.", infer=True
    )

    assert response.status_code == 200
    assert [r["memory"] for r in response.json()["results"]] == [
        "I use vim. The API runs on port 9000."
    ]


def test_config_reports_that_infer_is_unavailable(plain_client: httpx.Client) -> None:
    config = plain_client.get("/config").json()

    assert config["llm"] is None
    assert config["infer_available"] is False
    assert config["vector_store"] == "pgvector"
    assert config["embedder"] == {
        "provider": "local",
        "model": "all-MiniLM-L6-v2",
        "base_url": None,
        "dims": 384,
    }


def test_config_never_contains_a_secret() -> None:
    settings = Mem0LocalSettings(
        database_url=SecretStr("postgresql://u:db-secret@127.0.0.1/db"),
        llm_base_url="http://127.0.0.1:1/v1",
        llm_api_key=SecretStr("llm-secret"),
        api_key=SecretStr("api-secret"),
        admin_api_key=SecretStr("admin-secret"),
        reset_token=SecretStr("reset-secret"),
    )

    text = str(public_config(settings))

    assert not [
        s
        for s in ("db-secret", "llm-secret", "api-secret", "admin-secret", "reset-secret")
        if s in text
    ]
    assert "'infer_available': True" in text

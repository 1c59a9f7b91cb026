"""X-API-Key on every route, admin-only routes, and the human-held reset token."""

from __future__ import annotations

import logging

import httpx
import pytest

from tests.mem0_local._server import add_memories
from tests.mem0_local.conftest import RESET_TOKEN


def test_missing_api_key_is_401_with_upstreams_message(anonymous_client: httpx.Client) -> None:
    response = anonymous_client.post("/search", json={"query": "x", "user_id": "u"})

    assert response.status_code == 401
    assert response.json()["detail"].startswith("Authentication required.")


def test_wrong_api_key_is_401(anonymous_client: httpx.Client) -> None:
    response = anonymous_client.get(
        "/memories", params={"user_id": "u"}, headers={"X-API-Key": "wrong"}
    )

    assert response.status_code == 401


def test_admin_key_is_also_an_api_key(admin_client: httpx.Client, user_id: str) -> None:
    assert add_memories(admin_client, user_id, "Admins may add too.")


def test_delete_all_with_the_plain_api_key_is_403_and_deletes_nothing(
    llm_client: httpx.Client, user_id: str
) -> None:
    [kept] = add_memories(llm_client, user_id, "Keep me.")

    response = llm_client.delete("/memories", params={"user_id": user_id})

    assert response.status_code == 403
    assert "X-API-Key" in response.json()["detail"]
    assert llm_client.get(f"/memories/{kept}").status_code == 200


def test_reset_with_the_plain_api_key_is_403(llm_client: httpx.Client, user_id: str) -> None:
    [kept] = add_memories(llm_client, user_id, "Survive the reset attempt.")

    response = llm_client.post("/reset")

    assert response.status_code == 403
    assert llm_client.get(f"/memories/{kept}").status_code == 200


def test_auth_off_accepts_requests_without_a_key(plain_client: httpx.Client, user_id: str) -> None:
    assert add_memories(plain_client, user_id, "No key needed here.")


def test_delete_all_without_an_admin_key_configured_is_403_naming_the_variable(
    plain_client: httpx.Client, user_id: str
) -> None:
    response = plain_client.delete(
        "/memories", params={"user_id": user_id}, headers={"X-Reset-Token": RESET_TOKEN}
    )

    assert response.status_code == 403
    assert "MEM0_LOCAL_ADMIN_API_KEY" in response.json()["detail"]


def test_reset_with_a_wrong_token_is_403_and_changes_nothing(
    plain_client: httpx.Client, user_id: str
) -> None:
    [kept] = add_memories(plain_client, user_id, "Still here after a bad token.")

    response = plain_client.post("/reset", headers={"X-Reset-Token": "guess"})

    assert response.status_code == 403
    assert "X-Reset-Token" in response.json()["detail"]
    assert "guess" not in response.text
    assert plain_client.get(f"/memories/{kept}").status_code == 200


def test_reset_with_the_reset_token_wipes_every_memory(
    plain_client: httpx.Client, user_id: str
) -> None:
    [gone] = add_memories(plain_client, user_id, "Wiped by the reset.")
    [also_gone] = add_memories(plain_client, f"{user_id}-b", "Also wiped.")

    response = plain_client.post("/reset", headers={"X-Reset-Token": RESET_TOKEN})

    assert response.status_code == 200
    assert plain_client.get(f"/memories/{gone}").status_code == 404
    assert plain_client.get(f"/memories/{also_gone}").status_code == 404
    assert add_memories(plain_client, user_id, "Usable again after the reset.")


def test_reset_token_is_never_logged(
    plain_client: httpx.Client, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG):
        plain_client.post("/reset", headers={"X-Reset-Token": "secret-guess-xyz"})

    assert caplog.records
    assert "secret-guess-xyz" not in caplog.text


def test_a_presented_reset_token_is_checked_even_next_to_the_admin_key(
    admin_client: httpx.Client, user_id: str
) -> None:
    [kept] = add_memories(admin_client, user_id, "Not reset by a bad token.")

    response = admin_client.post("/reset", headers={"X-Reset-Token": "guess"})

    assert response.status_code == 403
    assert "MEM0_LOCAL_RESET_TOKEN" in response.json()["detail"]
    assert admin_client.get(f"/memories/{kept}").status_code == 200


def test_reset_with_the_admin_key_wipes_every_memory(
    admin_client: httpx.Client, user_id: str
) -> None:
    [gone] = add_memories(admin_client, user_id, "Wiped by the admin.")

    response = admin_client.post("/reset")

    assert response.status_code == 200
    assert admin_client.get(f"/memories/{gone}").status_code == 404


@pytest.mark.parametrize("path", ["/docs", "/redoc", "/openapi.json"])
def test_the_api_docs_need_the_api_key_when_one_is_set(
    anonymous_client: httpx.Client, path: str
) -> None:
    response = anonymous_client.get(path)

    assert response.status_code == 401


def test_the_openapi_schema_is_served_with_the_api_key(llm_client: httpx.Client) -> None:
    response = llm_client.get("/openapi.json")

    assert response.status_code == 200
    assert "/memories" in response.json()["paths"]
    assert "/openapi.json" not in response.json()["paths"]


@pytest.mark.parametrize("path", ["/docs", "/redoc"])
def test_the_docs_pages_are_served_with_the_api_key(llm_client: httpx.Client, path: str) -> None:
    response = llm_client.get(path)

    assert response.status_code == 200
    assert "/openapi.json" in response.text

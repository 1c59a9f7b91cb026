"""Status codes and error shapes: the official server's, plus 404/400 for unknown/malformed ids."""

from __future__ import annotations

import uuid

import httpx
import pytest

from tests.fakes.llm import FailureKind, FakeLLM
from tests.mem0_local._server import add_memories, post_message

UNKNOWN = str(uuid.uuid4())
#: Every route that takes a memory id in its path.
MEMORY_ID_ROUTES = [
    ("GET", "/memories/{id}"),
    ("PUT", "/memories/{id}"),
    ("DELETE", "/memories/{id}"),
    ("GET", "/memories/{id}/history"),
]


@pytest.mark.parametrize(
    ("kind", "code"),
    [
        ("error500", "provider_unavailable"),
        ("rate_limit", "provider_rate_limited"),
        ("unauthorized", "provider_auth_failed"),
    ],
)
def test_llm_failure_on_add_is_502_with_upstreams_code_and_stores_nothing(
    llm_client: httpx.Client, fake_llm: FakeLLM, user_id: str, kind: FailureKind, code: str
) -> None:
    fake_llm.fail_next(kind)

    response = post_message(llm_client, user_id, "I like tea.")

    assert response.status_code == 502
    body = response.json()
    assert body["code"] == code
    assert body["request_id"] == response.headers["X-Request-ID"]
    assert body["detail"]
    assert llm_client.get("/memories", params={"user_id": user_id}).json()["results"] == []


def test_llm_timeout_is_502_provider_timeout(
    llm_client: httpx.Client, fake_llm: FakeLLM, user_id: str
) -> None:
    fake_llm.fail_next("slow", seconds=4)  # the server's LLM timeout is 2 s

    response = post_message(llm_client, user_id, "I like tea.")

    assert response.status_code == 502
    assert response.json()["code"] == "provider_timeout"


@pytest.mark.parametrize(("method", "path"), MEMORY_ID_ROUTES)
def test_unknown_memory_id_is_404(llm_client: httpx.Client, method: str, path: str) -> None:
    response = llm_client.request(method, path.format(id=UNKNOWN), json={"text": "x"})

    assert response.status_code == 404
    assert UNKNOWN in response.json()["detail"]


@pytest.mark.parametrize(("method", "path"), MEMORY_ID_ROUTES)
def test_non_uuid_memory_id_is_400_naming_the_field(
    llm_client: httpx.Client, method: str, path: str
) -> None:
    response = llm_client.request(method, path.format(id="not-a-uuid"), json={"text": "x"})

    assert response.status_code == 400
    assert "memory_id" in response.json()["detail"]


@pytest.mark.parametrize("path", ["/memories/", "/search/"])
def test_trailing_slash_is_404_not_a_redirect(llm_client: httpx.Client, path: str) -> None:
    response = llm_client.post(path, json={})

    assert response.status_code == 404


def test_bare_string_messages_is_422_naming_the_field(
    llm_client: httpx.Client, user_id: str
) -> None:
    response = llm_client.post("/memories", json={"messages": "I like tea.", "user_id": user_id})

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "messages"]


def test_add_without_any_id_is_400(llm_client: httpx.Client) -> None:
    response = llm_client.post(
        "/memories", json={"messages": [{"role": "user", "content": "orphan"}], "infer": False}
    )

    assert response.status_code == 400
    assert "user_id" in response.json()["detail"]


def test_search_without_any_id_is_400(llm_client: httpx.Client) -> None:
    response = llm_client.post("/search", json={"query": "anything", "filters": {"topic": "x"}})

    assert response.status_code == 400
    assert "user_id" in response.json()["detail"]


def test_list_without_any_id_is_400(llm_client: httpx.Client) -> None:
    assert llm_client.get("/memories").status_code == 400


def test_every_answer_carries_a_generated_request_id(
    llm_client: httpx.Client, anonymous_client: httpx.Client
) -> None:
    answers = [
        llm_client.get("/config"),
        llm_client.get(f"/memories/{UNKNOWN}"),
        llm_client.post("/memories", json={"messages": "bare"}),
        anonymous_client.get("/config"),
        llm_client.get("/no-such-route"),
    ]

    ids = [answer.headers.get("X-Request-ID") for answer in answers]
    assert all(ids), [(a.status_code, a.headers) for a in answers]
    assert len(set(ids)) == len(ids)


def test_an_incoming_request_id_is_echoed(llm_client: httpx.Client, user_id: str) -> None:
    add_memories(llm_client, user_id, "Echo me.")

    response = llm_client.get(
        "/memories", params={"user_id": user_id}, headers={"X-Request-ID": "trace-123"}
    )

    assert response.headers["X-Request-ID"] == "trace-123"

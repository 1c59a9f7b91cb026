"""Input mem0 cannot store, or should not be asked to: a clear 4xx naming the problem, nothing
stored, and never the whole input echoed back or logged."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.mem0_local._server import add_memories

NUL = "a\x00b"
SURROGATE = "a\ud800b"


def _send(client: httpx.Client, method: str, path: str, body: Any) -> httpx.Response:
    """Send `body` as JSON the way any client may: lone surrogates as `\\ud800` escapes."""
    return client.request(
        method, path, content=json.dumps(body), headers={"content-type": "application/json"}
    )


def _add_body(user_id: str, **fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "messages": [{"role": "user", "content": "I drink tea."}],
        "user_id": user_id,
        "infer": False,
    }
    return {**body, **fields}


def _bodies(user_id: str, bad: str) -> list[tuple[str, dict[str, Any], str]]:
    """(path, body, location named in the error) for every text field a body carries."""
    return [
        (
            "/memories",
            _add_body(user_id, messages=[{"role": "user", "content": bad}]),
            "messages[0].content",
        ),
        (
            "/memories",
            _add_body(user_id, messages=[{"role": bad, "content": "x"}]),
            "messages[0].role",
        ),
        ("/memories", _add_body(user_id, run_id=bad), "run_id"),
        ("/memories", _add_body(user_id, agent_id=bad), "agent_id"),
        ("/memories", _add_body(user_id, metadata={"my topic": bad}), "metadata['my topic']"),
        ("/memories", _add_body(user_id, metadata={bad: "x"}), "metadata (a key)"),
        ("/search", {"query": bad, "user_id": user_id}, "query"),
        ("/search", {"query": "tea", "filters": {"user_id": user_id, "k": bad}}, "filters.k"),
    ]


BAD_TEXT = [
    pytest.param(NUL, "a NUL character", id="nul"),
    pytest.param(SURROGATE, "a lone surrogate (U+D800)", id="surrogate"),
]
BODY_FIELDS = range(len(_bodies("u", "x")))


@pytest.mark.parametrize(("bad", "problem"), BAD_TEXT)
@pytest.mark.parametrize("which", BODY_FIELDS)
def test_a_text_field_with_a_nul_or_lone_surrogate_is_400_naming_it_and_stores_nothing(
    plain_client: httpx.Client, user_id: str, bad: str, problem: str, which: int
) -> None:
    path, body, location = _bodies(user_id, bad)[which]

    response = _send(plain_client, "POST", path, body)

    assert response.status_code == 400, response.text
    assert response.json()["detail"].startswith(f"{location}: contains {problem}")
    assert plain_client.get("/memories", params={"user_id": user_id}).json()["results"] == []


@pytest.mark.parametrize(("bad", "problem"), BAD_TEXT)
def test_an_update_with_a_nul_or_lone_surrogate_is_400_and_keeps_the_text(
    plain_client: httpx.Client, user_id: str, bad: str, problem: str
) -> None:
    [memory_id] = add_memories(plain_client, user_id, "I drink tea.")

    response = _send(plain_client, "PUT", f"/memories/{memory_id}", {"text": bad})

    assert response.status_code == 400, response.text
    assert response.json()["detail"].startswith(f"text: contains {problem}")
    assert plain_client.get(f"/memories/{memory_id}").json()["memory"] == "I drink tea."


def test_a_nul_in_a_query_parameter_is_400_naming_it(
    plain_client: httpx.Client, user_id: str
) -> None:
    response = plain_client.get("/memories", params={"user_id": NUL})

    assert response.status_code == 400, response.text
    assert response.json()["detail"].startswith("user_id: contains a NUL character")


@pytest.mark.parametrize(
    ("raw_field", "location"),
    [
        pytest.param('"threshold": NaN', "threshold", id="nan-threshold"),
        pytest.param('"threshold": Infinity', "threshold", id="infinite-threshold"),
        pytest.param('"top_k": 1e999', "top_k", id="overflowing-number"),
        pytest.param('"filters": {"user_id": "u", "n": -Infinity}', "filters.n", id="filter"),
    ],
)
def test_a_number_json_cannot_hold_is_400_naming_the_field(
    plain_client: httpx.Client, raw_field: str, location: str
) -> None:
    body = '{"query": "tea", "user_id": "u", ' + raw_field + "}"

    response = plain_client.post(
        "/search", content=body, headers={"content-type": "application/json"}
    )

    assert response.status_code == 400, response.text
    assert response.json()["detail"].startswith(f"{location}: ")
    assert "not a finite number" in response.json()["detail"]


# --- size -------------------------------------------------------------------------------------


def _huge_add(user_id: str) -> bytes:
    text = "tea " * 300_000  # 1.2 MB, over the default cap of 1 MiB
    return json.dumps(_add_body(user_id, messages=[{"role": "user", "content": text}])).encode()


def test_a_body_over_the_cap_is_413_naming_the_limit_and_stores_nothing(
    plain_client: httpx.Client, user_id: str
) -> None:
    response = plain_client.post(
        "/memories", content=_huge_add(user_id), headers={"content-type": "application/json"}
    )

    assert response.status_code == 413
    detail = response.json()["detail"]
    assert "1048576 bytes" in detail
    assert "MEM0_LOCAL_MAX_REQUEST_BYTES" in detail
    assert plain_client.get("/memories", params={"user_id": user_id}).json()["results"] == []


def test_a_chunked_body_over_the_cap_is_413_too(plain_client: httpx.Client, user_id: str) -> None:
    body = _huge_add(user_id)

    def chunks() -> Iterator[bytes]:  # no Content-Length: the server must count
        for start in range(0, len(body), 65536):
            yield body[start : start + 65536]

    response = plain_client.post(
        "/memories", content=chunks(), headers={"content-type": "application/json"}
    )

    assert response.status_code == 413
    assert plain_client.get("/memories", params={"user_id": user_id}).json()["results"] == []


# --- echoes -----------------------------------------------------------------------------------


def test_a_validation_error_quotes_a_huge_input_cut_short(plain_client: httpx.Client) -> None:
    huge = "u" * 1_000_000

    response = _send(plain_client, "POST", "/search", {"query": "tea", "user_id": huge})

    assert response.status_code == 422
    assert len(response.content) < 2000
    assert "1000000 characters" in response.text


def test_a_huge_malformed_memory_id_is_cut_short_in_the_error_and_the_access_log(
    plain_client: httpx.Client, caplog: pytest.LogCaptureFixture
) -> None:
    huge = "m" * 10_000  # about the longest request line the HTTP server accepts

    with caplog.at_level(logging.INFO, logger="mem0_local.access"):
        response = plain_client.get(f"/memories/{huge}")
        # The server thread writes its access line after the answer has gone out.
        access = _access_lines(caplog)

    assert response.status_code == 400
    assert len(response.content) < 500
    assert access
    assert all(len(line) < 300 for line in access)


def _access_lines(caplog: pytest.LogCaptureFixture, timeout: float = 5.0) -> list[str]:
    """The access log lines captured so far, waiting up to `timeout` for the first one."""
    deadline = time.monotonic() + timeout
    while True:
        found = [r.getMessage() for r in caplog.records if r.name == "mem0_local.access"]
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.01)

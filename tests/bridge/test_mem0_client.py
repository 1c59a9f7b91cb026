"""The mem0 REST client's safety rules, against httpx.MockTransport (no server needed)."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import pytest
from mcp import Client

from mem0_bridge import BridgeSettings, Mem0Client, Mem0Error, create_server
from tests.bridge._calls import call_error

pytestmark = pytest.mark.anyio

Handler = Callable[[httpx.Request], httpx.Response]


class Recorder:
    """A MockTransport that records every request and answers with `handler`."""

    def __init__(self, handler: Handler | None = None) -> None:
        self.requests: list[httpx.Request] = []
        self._handler = handler or (lambda _: httpx.Response(200, json={"results": []}))

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self._handler(request)

    @property
    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self)


def _settings(**values: object) -> BridgeSettings:
    return BridgeSettings.model_validate(
        {
            "api_url": "http://mem0.test",
            "ranker_address": "",
            "judge_address": "",
            "project": "alpha",
            **values,
        }
    )


def _client(recorder: Recorder, **values: object) -> Mem0Client:
    return Mem0Client(_settings(**values), transport=recorder.transport)


async def test_redirects_are_never_followed() -> None:
    recorder = Recorder(lambda _: httpx.Response(307, headers={"location": "/memories"}))
    with pytest.raises(Mem0Error, match="redirect to /memories"):
        await _client(recorder).delete("123e4567-e89b-12d3-a456-426614174000")
    assert len(recorder.requests) == 1


async def test_api_key_is_sent_as_x_api_key() -> None:
    recorder = Recorder()
    await _client(recorder, api_key="k-1").list_memories(user_id="u", run_id="p", top_k=5)
    assert recorder.requests[0].headers["x-api-key"] == "k-1"
    assert "x-reset-token" not in recorder.requests[0].headers


async def test_reset_forwards_the_token_as_x_reset_token() -> None:
    recorder = Recorder(lambda _: httpx.Response(200, json={"message": "reset"}))
    await _client(recorder).reset("human-token")
    request = recorder.requests[0]
    assert (request.method, request.url.path) == ("POST", "/reset")
    assert request.headers["x-reset-token"] == "human-token"


@pytest.mark.parametrize(
    ("infer", "seconds"), [(True, 45.0), (False, 10.0)], ids=["inferring", "verbatim"]
)
async def test_adds_that_infer_get_the_longer_timeout(infer: bool, seconds: float) -> None:
    recorder = Recorder()
    await _client(recorder).add("A fact.", user_id="u", run_id="p", infer=infer, metadata={})
    assert recorder.requests[0].extensions["timeout"]["read"] == seconds
    assert json.loads(recorder.requests[0].content)["infer"] is infer


@pytest.mark.parametrize(
    ("run_id", "expected"),
    [
        ("alpha", {"user_id": "u", "run_id": "alpha"}),
        (["alpha", "global"], {"user_id": "u", "OR": [{"run_id": "alpha"}, {"run_id": "global"}]}),
        (None, {"user_id": "u"}),
    ],
    ids=["one-namespace", "several-namespaces", "every-namespace"],
)
async def test_search_sends_one_request_filtered_to_the_namespaces(
    run_id: str | list[str] | None, expected: dict[str, object]
) -> None:
    recorder = Recorder()
    await _client(recorder).search("q", user_id="u", run_id=run_id, top_k=3)
    assert len(recorder.requests) == 1
    assert json.loads(recorder.requests[0].content)["filters"] == expected


async def test_a_timeout_names_the_setting_to_raise() -> None:
    def hang(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    with pytest.raises(Mem0Error, match="MEM0_TIMEOUT_SECONDS"):
        await _client(Recorder(hang)).search("q", user_id="u", run_id="p", top_k=3)


async def test_an_unreachable_server_names_the_url_setting() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    with pytest.raises(Mem0Error, match=r"unreachable at http://mem0.test.*MEM0_API_URL"):
        await _client(Recorder(refuse)).get("123e4567-e89b-12d3-a456-426614174000")


async def test_an_auth_failure_names_the_api_key_setting() -> None:
    recorder = Recorder(lambda _: httpx.Response(401, json={"detail": "Authentication required"}))
    with pytest.raises(Mem0Error, match="MEM0_API_KEY") as caught:
        await _client(recorder).list_memories(user_id="u", run_id="p", top_k=5)
    assert caught.value.status == 401


@pytest.mark.parametrize(
    ("code", "advice"),
    [
        ("provider_rate_limited", "wait a minute and retry"),
        ("provider_auth_failed", "Retrying will not help"),
        ("vector_store_unavailable", "vector store is unavailable"),
        ("something_new", "failed unexpectedly"),
    ],
)
async def test_provider_failures_map_to_advice(code: str, advice: str) -> None:
    body = {"detail": "upstream failed", "code": code, "request_id": "r1"}
    recorder = Recorder(lambda _: httpx.Response(502, json=body))
    with pytest.raises(Mem0Error, match=advice) as caught:
        await _client(recorder).add("A fact.", user_id="u", run_id="p", infer=True, metadata={})
    assert caught.value.code == code


async def test_a_non_json_answer_is_reported_as_the_wrong_server() -> None:
    recorder = Recorder(lambda _: httpx.Response(200, text="<html>hello</html>"))
    with pytest.raises(Mem0Error, match="not JSON"):
        await _client(recorder).list_memories(user_id="u", run_id="p", top_k=5)


@pytest.mark.parametrize(
    "tool", ["memory_update", "memory_delete", "memory_unpin", "memory_history"]
)
@pytest.mark.parametrize("memory_id", ["../memories", "42", "", "123e4567-e89b-12d3-a456"])
async def test_a_malformed_memory_id_is_refused_before_any_request(
    tool: str, memory_id: str
) -> None:
    recorder = Recorder()
    arguments = {"memory_id": memory_id}
    if tool == "memory_update":
        arguments["text"] = "new text"
    async with Client(create_server(_settings(), mem0_transport=recorder.transport)) as client:
        message = await call_error(client, tool, **arguments)
    assert "memory_id must be a memory's UUID" in message
    assert recorder.requests == []


async def test_reset_without_a_token_sends_nothing() -> None:
    recorder = Recorder()
    settings = _settings(reset_token="the-real-token")  # noqa: S106
    async with Client(create_server(settings, mem0_transport=recorder.transport)) as client:
        message = await call_error(client, "memory_reset", reset_token="  ")  # noqa: S106
    assert "Ask the user" in message
    assert recorder.requests == []


async def test_mem0_errors_reach_the_agent_as_tool_errors() -> None:
    recorder = Recorder(lambda _: httpx.Response(502, json={"code": "datastore_unavailable"}))
    async with Client(create_server(_settings(), mem0_transport=recorder.transport)) as client:
        message = await call_error(client, "memory_list")
    assert "database is unavailable" in message


def _breaks_mid_call(request: httpx.Request) -> httpx.Response:
    raise httpx.RemoteProtocolError("Server disconnected without sending a response.")


async def test_a_write_mem0_received_but_never_answered_has_an_unknown_outcome() -> None:
    recorder = Recorder(_breaks_mid_call)
    with pytest.raises(Mem0Error, match="whether it was applied is unknown") as raised:
        await _client(recorder).add("a fact", user_id="u", run_id="r", infer=False, metadata={})
    assert raised.value.outcome_unknown
    assert "unreachable" not in str(raised.value)


async def test_a_read_cut_mid_call_is_not_called_unreachable() -> None:
    with pytest.raises(Mem0Error, match="stopped answering the search mid-call") as raised:
        await _client(Recorder(_breaks_mid_call)).search("q", user_id="u", run_id="r", top_k=5)
    assert not raised.value.outcome_unknown


async def test_history_events_are_dated_by_their_own_change() -> None:
    rows = [
        {"event": "ADD", "created_at": "2026-01-01T00:00:00Z", "updated_at": None},
        {
            "event": "UPDATE",
            "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-02-01T00:00:00Z",
        },
        {
            "event": "DELETE",
            "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-03-01T00:00:00Z",
        },
    ]
    entries = await _client(Recorder(lambda _: httpx.Response(200, json=rows))).history(
        "123e4567-e89b-12d3-a456-426614174000"
    )
    assert [e.at for e in entries] == [
        "2026-01-01T00:00:00Z",
        "2026-02-01T00:00:00Z",
        "2026-03-01T00:00:00Z",
    ]

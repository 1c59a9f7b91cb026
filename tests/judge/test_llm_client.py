"""The LLM client alone, against httpx.MockTransport: retries, backoff, limits, headers."""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Callable

import httpx
import pytest

from mem0_judge import (
    ChatMessage,
    LLMBadAnswerError,
    LLMClient,
    LLMRejectedError,
    LLMTimeoutError,
    LLMUnavailableError,
)

pytestmark = pytest.mark.anyio

MESSAGES = [ChatMessage("system", "judge"), ChatMessage("user", "data")]
Handler = Callable[[httpx.Request], httpx.Response]


def _completion(content: str) -> httpx.Response:
    return httpx.Response(200, json={"choices": [{"message": {"content": content}}]})


def _client(handler: Handler, sleeps: list[float] | None = None, **options: object) -> LLMClient:
    async def record_sleep(seconds: float) -> None:
        if sleeps is not None:
            sleeps.append(seconds)

    return LLMClient(
        "http://llm.test/v1",
        "judge-model",
        transport=httpx.MockTransport(handler),
        sleep=record_sleep,
        rng=random.Random(7),
        **options,  # type: ignore[arg-type]
    )


def _sequence(*responses: httpx.Response) -> tuple[Handler, list[httpx.Request]]:
    seen: list[httpx.Request] = []
    queue = list(responses)

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return queue.pop(0)

    return handler, seen


async def test_the_request_carries_model_messages_and_json_mode() -> None:
    handler, seen = _sequence(_completion('{"ok": true}'))
    client = _client(handler, api_key="sk-test")
    assert await client.complete_json(MESSAGES, operation="compare") == {"ok": True}
    await client.close()

    [request] = seen
    assert request.url == "http://llm.test/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    body = json.loads(request.content)
    assert body["model"] == "judge-model"
    assert body["messages"] == [
        {"role": "system", "content": "judge"},
        {"role": "user", "content": "data"},
    ]
    assert body["response_format"] == {"type": "json_object"}


async def test_response_format_none_and_no_key_send_neither() -> None:
    handler, seen = _sequence(_completion("{}"))
    client = _client(handler, response_format="none")
    await client.complete_json(MESSAGES, operation="compare")
    await client.close()
    assert "response_format" not in json.loads(seen[0].content)
    assert "authorization" not in seen[0].headers


async def test_a_429_waits_for_its_retry_after_then_succeeds() -> None:
    sleeps: list[float] = []
    handler, seen = _sequence(
        httpx.Response(429, headers={"Retry-After": "1.5"}), _completion('{"a": 1}')
    )
    client = _client(handler, sleeps)
    assert await client.complete_json(MESSAGES, operation="rewrite") == {"a": 1}
    await client.close()
    assert sleeps == [1.5]
    assert len(seen) == 2


async def test_5xx_backoff_is_jittered_exponential_and_bounded() -> None:
    sleeps: list[float] = []
    handler, seen = _sequence(*(httpx.Response(503) for _ in range(4)))
    client = _client(handler, sleeps, max_retries=3)
    with pytest.raises(LLMUnavailableError, match=r"HTTP 503 \(after 4 attempts\)"):
        await client.complete_json(MESSAGES, operation="compare")
    await client.close()
    assert len(seen) == 4
    assert len(sleeps) == 3
    for attempt, pause in enumerate(sleeps):
        assert 0 <= pause <= 0.2 * 2**attempt
    assert len(set(sleeps)) == 3


async def test_a_client_error_is_not_retried() -> None:
    handler, seen = _sequence(httpx.Response(400, json={"error": "bad model"}))
    client = _client(handler)
    with pytest.raises(LLMRejectedError, match="HTTP 400"):
        await client.complete_json(MESSAGES, operation="compare")
    await client.close()
    assert len(seen) == 1


async def test_a_retry_that_would_pass_the_deadline_is_not_attempted() -> None:
    sleeps: list[float] = []
    handler, seen = _sequence(httpx.Response(429, headers={"Retry-After": "30"}))
    client = _client(handler, sleeps)
    with pytest.raises(LLMUnavailableError, match="would pass the caller's deadline"):
        await client.complete_json(MESSAGES, operation="compare", deadline=time.monotonic() + 5)
    await client.close()
    assert sleeps == []
    assert len(seen) == 1


async def test_a_passed_deadline_fails_without_a_request() -> None:
    handler, seen = _sequence()
    client = _client(handler)
    with pytest.raises(LLMTimeoutError):
        await client.complete_json(MESSAGES, operation="compare", deadline=time.monotonic() - 1)
    await client.close()
    assert seen == []


async def test_connection_failures_are_retried_then_unavailable() -> None:
    attempts: list[httpx.Request] = []

    def refuse(request: httpx.Request) -> httpx.Response:
        attempts.append(request)
        raise httpx.ConnectError("connection refused", request=request)

    client = _client(refuse, max_retries=1)
    with pytest.raises(LLMUnavailableError, match="unreachable"):
        await client.complete_json(MESSAGES, operation="compare")
    await client.close()
    assert len(attempts) == 2


async def test_a_completion_without_text_is_a_bad_answer() -> None:
    handler, _ = _sequence(httpx.Response(200, json={"choices": [{"message": {"content": None}}]}))
    client = _client(handler)
    with pytest.raises(LLMBadAnswerError, match="no text content"):
        await client.complete_json(MESSAGES, operation="compare")
    await client.close()


async def test_calls_in_flight_never_exceed_the_concurrency_limit() -> None:
    in_flight = 0
    peak = 0

    async def slow(request: httpx.Request) -> httpx.Response:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return _completion("{}")

    client = LLMClient(
        "http://llm.test/v1", "m", max_concurrency=3, transport=httpx.MockTransport(slow)
    )
    await asyncio.gather(*(client.complete_json(MESSAGES, operation="x") for _ in range(12)))
    await client.close()
    assert peak == 3


SCHEMA = {"type": "object", "properties": {"statement": {"type": "string"}}}


@pytest.mark.parametrize(
    ("response_format", "expected"),
    [
        ("json_object", {"type": "json_object"}),
        # llama.cpp's server and llama-cpp-python: json_object carrying the schema (a grammar).
        ("json_object_schema", {"type": "json_object", "schema": SCHEMA}),
        (
            "json_schema",
            {"type": "json_schema", "json_schema": {"name": "answer", "schema": SCHEMA}},
        ),
    ],
)
async def test_the_schema_is_sent_in_the_configured_response_format(
    response_format: str, expected: dict[str, object]
) -> None:
    handler, seen = _sequence(_completion("{}"))
    client = _client(handler, response_format=response_format)
    await client.complete_json(MESSAGES, operation="rewrite", schema=SCHEMA, max_tokens=64)
    await client.close()
    body = json.loads(seen[0].content)
    assert body["response_format"] == expected
    assert body["max_tokens"] == 64

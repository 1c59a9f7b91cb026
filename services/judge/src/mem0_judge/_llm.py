"""The one HTTP client the judge uses to talk to an OpenAI-compatible chat endpoint.

A single pooled `httpx.AsyncClient`, a semaphore bounding calls in flight (so a burst of agents
queues here instead of tripping the provider's rate limit), bounded retries with full-jitter
exponential backoff on 429/5xx/connection failures, honouring `Retry-After`, and one absolute
deadline per call covering queueing, attempts and backoff, so nothing outlives the caller.

How the answer is constrained to JSON differs between servers, so it is a setting
(`JUDGE_LLM_RESPONSE_FORMAT`, see `ResponseFormat`): OpenAI-style JSON mode, llama.cpp's
`json_object` carrying a `schema` (which it compiles to a grammar), OpenAI structured outputs
(`json_schema`), or nothing for servers that reject the field. Answers are parsed leniently and
validated strictly whatever the form.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import json
import logging
import random
import re
import ssl
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import httpx

from mem0_common import CLIENT_KEEPALIVE_EXPIRY_SECONDS
from mem0_judge._errors import (
    LLMBadAnswerError,
    LLMRejectedError,
    LLMTimeoutError,
    LLMUnavailableError,
)
from mem0_judge._metrics import LLM_LATENCY, LLM_RETRIES

_log = logging.getLogger("mem0_judge.llm")

#: Backoff before retry n (0-based) is uniform in [0, min(cap, base * 2**n)] ("full jitter").
_BACKOFF_BASE_SECONDS = 0.2
_BACKOFF_CAP_SECONDS = 5.0

_REASONING_BLOCK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.DOTALL | re.IGNORECASE)
_CODE_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)

Sleep = Callable[[float], Awaitable[None]]

#: How the request asks for JSON (the `response_format` field):
#: - "json_object": `{"type": "json_object"}`, OpenAI JSON mode; most servers accept it;
#: - "json_object_schema": `{"type": "json_object", "schema": {...}}`, what llama.cpp's server and
#:   llama-cpp-python honour (the schema becomes a grammar; `json_schema` is not understood there);
#: - "json_schema": `{"type": "json_schema", "json_schema": {"name", "schema"}}`, OpenAI
#:   structured outputs (also vLLM, Ollama, newer llama-server);
#: - "none": no field, for endpoints that reject it.
ResponseFormat = Literal["json_object", "json_object_schema", "json_schema", "none"]


@dataclass(frozen=True)
class ChatMessage:
    role: str
    content: str


def extract_json_object(content: str) -> dict[str, Any]:
    """The JSON object in an assistant answer, tolerating reasoning blocks and code fences.

    Models asked for JSON still sometimes wrap it in ```json fences or prefix a <think> block;
    those are stripped, and failing that the outermost `{...}` span is tried.
    """
    text = _REASONING_BLOCK.sub("", content).strip()
    fenced = _CODE_FENCE.search(text)
    if fenced:
        text = fenced.group(1).strip()
    candidates = [text]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            # strict=False: raw newlines inside strings, seen from grammar-constrained llama.cpp
            # answers, are read as text instead of failing the whole answer.
            value = json.loads(candidate, strict=False)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    raise LLMBadAnswerError(f"LLM answer is not a JSON object: {content[:120]!r}")


def retry_after_seconds(value: str | None) -> float | None:
    """`Retry-After` as seconds: either delta-seconds or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


@functools.cache
def _ssl_context(ca_bundle: Path | None) -> ssl.SSLContext:
    """The TLS context for `ca_bundle` (None: certifi's CAs, or SSL_CERT_FILE/SSL_CERT_DIR, as
    httpx's own default), built once per process: loading a CA file takes ~25 ms of CPU, which
    every client (one per judge server started, in tests dozens) would otherwise repeat."""
    if ca_bundle is None:
        return httpx.create_ssl_context()
    return ssl.create_default_context(cafile=str(ca_bundle))


class LLMClient:
    """Chat completions against one endpoint and model; `close()` releases the pool."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        ca_bundle: Path | None = None,
        timeout_seconds: float = 10.0,
        max_retries: int = 2,
        max_concurrency: int = 8,
        response_format: ResponseFormat = "json_object",
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Sleep = asyncio.sleep,
        rng: random.Random | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.AsyncClient(
            base_url=base_url.rstrip("/") + "/",
            headers=headers,
            timeout=httpx.Timeout(timeout_seconds),
            limits=httpx.Limits(
                max_connections=max_concurrency,
                max_keepalive_connections=max_concurrency,
                keepalive_expiry=CLIENT_KEEPALIVE_EXPIRY_SECONDS,
            ),
            verify=_ssl_context(ca_bundle),
            transport=transport,
        )
        self.model = model
        self.timeout_seconds = timeout_seconds
        self.max_retries = max_retries
        self.response_format: ResponseFormat = response_format
        self._slots = asyncio.Semaphore(max_concurrency)
        self._sleep = sleep
        self._rng = rng or random.Random()  # noqa: S311 - jitter, not security

    async def close(self) -> None:
        await self._http.aclose()

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return retry_after
        return self._rng.uniform(0, min(_BACKOFF_CAP_SECONDS, _BACKOFF_BASE_SECONDS * 2**attempt))

    def _response_format(self, schema: dict[str, Any] | None) -> dict[str, Any] | None:
        if self.response_format == "none":
            return None
        if schema is None or self.response_format == "json_object":
            return {"type": "json_object"}
        if self.response_format == "json_object_schema":
            return {"type": "json_object", "schema": schema}
        return {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}

    async def complete_json(
        self,
        messages: Sequence[ChatMessage],
        *,
        operation: str,
        deadline: float | None = None,
        schema: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> dict[str, Any]:
        """Send `messages`, return the answer's JSON object.

        `deadline` is an absolute `time.monotonic()` bound for the whole call, retries included;
        when the next backoff would pass it, the call gives up at once instead of sleeping.
        `schema` is the answer's JSON Schema, sent as the response format asks; `max_tokens`
        bounds the answer, so a model that rambles (small local ones do) stops in time.
        """
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "temperature": 0,
        }
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        response_format = self._response_format(schema)
        if response_format is not None:
            body["response_format"] = response_format
        budget = None if deadline is None else deadline - time.monotonic()
        if budget is not None and budget <= 0:
            raise LLMTimeoutError("no time left before the caller's deadline")
        try:
            async with asyncio.timeout(budget):
                content = await self._post_with_retries(body, operation, deadline)
        except TimeoutError:
            raise LLMTimeoutError("LLM did not answer within the caller's deadline") from None
        return extract_json_object(content)

    async def _post_with_retries(
        self, body: dict[str, Any], operation: str, deadline: float | None
    ) -> str:
        attempt = 0
        while True:
            outcome, retry_after = await self._attempt(body, operation)
            if isinstance(outcome, str):
                return outcome
            failure = outcome
            if attempt >= self.max_retries:
                raise LLMUnavailableError(f"{failure} (after {attempt + 1} attempts)")
            pause = self._backoff(attempt, retry_after)
            if deadline is not None and time.monotonic() + pause >= deadline:
                raise LLMUnavailableError(
                    f"{failure}; the next retry in {pause:.2f}s would pass the caller's deadline"
                )
            LLM_RETRIES.labels(operation).inc()
            _log.info("LLM %s: %s; retrying in %.2fs", operation, failure, pause)
            await self._sleep(pause)
            attempt += 1

    async def _attempt(
        self, body: dict[str, Any], operation: str
    ) -> tuple[str | LLMUnavailableError, float | None]:
        """One HTTP call: the answer's content, or a retryable failure and its Retry-After."""
        async with self._slots:
            start = time.perf_counter()
            try:
                response = await self._http.post("chat/completions", json=body)
            except httpx.TimeoutException:
                raise LLMTimeoutError(
                    f"LLM did not answer within {self.timeout_seconds:g}s"
                ) from None
            except httpx.TransportError as exc:
                return LLMUnavailableError(f"LLM unreachable: {exc!r}"), None
            finally:
                LLM_LATENCY.labels(operation).observe(time.perf_counter() - start)
        status = response.status_code
        if status == 429 or status >= 500:
            return (
                LLMUnavailableError(f"LLM answered HTTP {status}"),
                retry_after_seconds(response.headers.get("retry-after")),
            )
        if status >= 400:
            raise LLMRejectedError(f"LLM rejected the request: HTTP {status} {response.text[:200]}")
        try:
            payload = response.json()
            content = payload["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise LLMBadAnswerError(
                f"LLM answer is not a chat completion: {response.text[:120]!r}"
            ) from None
        if not isinstance(content, str):
            raise LLMBadAnswerError("LLM answer has no text content")
        return content, None

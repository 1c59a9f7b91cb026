"""Failures below the REST layer map to the official server's 502 codes."""

from __future__ import annotations

import sqlite3

import httpx2
import openai
import psycopg
import psycopg_pool
import pytest

from mem0_local._errors import classify

_REQUEST = httpx2.Request("POST", "http://127.0.0.1:1/v1/chat/completions")


def _status_error(cls: type[openai.APIStatusError], status: int) -> openai.APIStatusError:
    return cls("failed", response=httpx2.Response(status, request=_REQUEST), body=None)


def _wrapped(exc: Exception) -> Exception:
    """As mem0 raises it (`raise LLMError(...) from e`): its own error, the provider's as cause."""
    outer = RuntimeError("LLM extraction failed")
    outer.__cause__ = exc
    return outer


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (openai.APITimeoutError(_REQUEST), "provider_timeout"),
        (openai.APIConnectionError(request=_REQUEST), "provider_unavailable"),
        (_status_error(openai.AuthenticationError, 401), "provider_auth_failed"),
        (_status_error(openai.RateLimitError, 429), "provider_rate_limited"),
        (_status_error(openai.BadRequestError, 400), "provider_bad_request"),
        (_status_error(openai.InternalServerError, 503), "provider_unavailable"),
        (psycopg.OperationalError("server closed the connection"), "vector_store_unavailable"),
        (psycopg_pool.PoolTimeout("no connection"), "vector_store_unavailable"),
        (sqlite3.OperationalError("database is locked"), "datastore_unavailable"),
        (KeyError("surprise"), "unknown"),
    ],
)
def test_failure_maps_to_upstreams_code_through_mem0s_wrapping(exc: Exception, code: str) -> None:
    assert classify(_wrapped(exc)).code == code

"""What can go wrong below the REST layer, and the 502 `code` each failure maps to.

The codes are those of mem0's official server, so a client (the bridge) reacts the same way to
either server. mem0 wraps provider errors (`LLMError(...) from e`), so classification walks the
exception chain and looks for the provider's own error type.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Literal

import openai
import psycopg
import psycopg_pool

FailureCode = Literal[
    "provider_auth_failed",
    "provider_rate_limited",
    "provider_timeout",
    "provider_unavailable",
    "provider_bad_request",
    "datastore_unavailable",
    "vector_store_unavailable",
    "unknown",
]


class MemoryNotFoundError(LookupError):
    """No memory (or no history) with this id."""

    def __init__(self, memory_id: str) -> None:
        super().__init__(f"Memory {memory_id} not found")
        self.memory_id = memory_id


class InvalidRequestError(ValueError):
    """A request mem0 itself rejected as invalid (a 400, naming the problem)."""


class UpstreamFailureError(RuntimeError):
    """A provider or store failed: answered as 502 with `code`."""

    def __init__(self, code: FailureCode, detail: str) -> None:
        super().__init__(detail)
        self.code: FailureCode = code
        self.detail = detail


def exception_chain(exc: BaseException) -> Iterator[BaseException]:
    """`exc`, then what caused it (or what it interrupted), and so on: newest first."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


#: Checked in order, first match wins: APITimeoutError is an APIConnectionError, and the
#: specific APIStatusError subclasses come before the status-based fallback in `_code_of`.
_CODES_BY_TYPE: tuple[tuple[tuple[type[BaseException], ...], FailureCode], ...] = (
    ((openai.APITimeoutError,), "provider_timeout"),
    ((openai.APIConnectionError,), "provider_unavailable"),
    ((openai.AuthenticationError, openai.PermissionDeniedError), "provider_auth_failed"),
    ((openai.RateLimitError,), "provider_rate_limited"),
    (
        (psycopg.OperationalError, psycopg.InterfaceError, psycopg_pool.PoolTimeout),
        "vector_store_unavailable",
    ),
    ((sqlite3.OperationalError, sqlite3.DatabaseError), "datastore_unavailable"),
)


def _code_of(exc: BaseException) -> FailureCode | None:
    for types, code in _CODES_BY_TYPE:
        if isinstance(exc, types):
            return code
    if isinstance(exc, openai.APIStatusError):
        return "provider_unavailable" if exc.status_code >= 500 else "provider_bad_request"
    return None


_WHAT_FAILED: dict[FailureCode, str] = {
    "provider_auth_failed": "The model provider rejected the credentials",
    "provider_rate_limited": "The model provider is rate limiting",
    "provider_timeout": "The model provider did not answer in time",
    "provider_unavailable": "The model provider is unavailable",
    "provider_bad_request": "The model provider rejected the request",
    "datastore_unavailable": "The history database is unavailable",
    "vector_store_unavailable": "The vector store is unavailable",
    "unknown": "The memory backend failed",
}


def classify(exc: BaseException) -> UpstreamFailureError:
    """Turn any failure raised by mem0 or its providers into a 502 with upstream's code."""
    for link in exception_chain(exc):
        code = _code_of(link)
        if code is not None:
            return UpstreamFailureError(code, f"{_WHAT_FAILED[code]}: {type(link).__name__}")
    return UpstreamFailureError("unknown", f"{_WHAT_FAILED['unknown']}: {type(exc).__name__}")

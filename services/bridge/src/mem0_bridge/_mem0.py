"""Async client of mem0's REST API, with the safety rules the bridge promises.

Redirects are never followed (a trailing-slash redirect could reroute a DELETE onto the
delete-all route), every request has a timeout, and every failure becomes a `Mem0Error` whose
message tells an agent what to do about it rather than echoing a status code.
"""

from __future__ import annotations

import functools
import itertools
import ssl
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import httpx

from mem0_bridge._lifetime import Lifetime, parse_time
from mem0_bridge._settings import BridgeSettings
from mem0_common import CLIENT_KEEPALIVE_EXPIRY_SECONDS
from mem0mcp.contract import MAX_ID_CHARS, max_items
from mem0mcp.ranker.v1 import ranker_pb2

#: mem0's REST server caps GET /memories at 1000 items.
LIST_CAP = 1000
#: The metadata key under which a memory names the memories it was stored close to.
RELATED_KEY = "related_ids"
#: As many as the ranker takes per candidate.
MAX_RELATED = max_items(ranker_pb2.Candidate, "related_ids")

#: What mem0's 502 `code` field means, phrased as what the agent can do about it.
_PROVIDER_CODES = {
    "provider_auth_failed": "mem0's LLM or embedder rejected its credentials; the operator "
    "must fix the mem0 server's provider key. Retrying will not help.",
    "provider_rate_limited": "mem0's LLM provider is rate limiting; wait a minute and retry.",
    "provider_timeout": "mem0's LLM provider timed out; retry, or add with fewer facts at once.",
    "provider_unavailable": "mem0's LLM provider is unreachable; retry later or tell the user.",
    "provider_bad_request": "mem0's LLM provider refused the request; rephrase the text "
    "(shorter, plain sentences) and retry.",
    "datastore_unavailable": "mem0's database is unavailable; retry later or tell the user.",
    "vector_store_unavailable": "mem0's vector store is unavailable; retry later or tell the user.",
    "unknown": "mem0 failed unexpectedly; retry once, then tell the user.",
}


class Mem0Error(Exception):
    """A mem0 call failed; `str()` is a message an agent can act on."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str | None = None,
        outcome_unknown: bool = False,
    ):
        super().__init__(message)
        self.status = status
        self.code = code
        #: The request reached mem0 but no answer came back: a write may or may not be applied.
        self.outcome_unknown = outcome_unknown


def newest_time(created_at: str | None, updated_at: str | None) -> datetime | None:
    times = [t for t in (parse_time(created_at), parse_time(updated_at)) if t is not None]
    return max(times) if times else None


@dataclass(frozen=True)
class Memory:
    """One memory as mem0 returns it (search hits carry a score, listings do not)."""

    id: str
    text: str
    run_id: str | None
    user_id: str | None
    created_at: str | None
    updated_at: str | None
    score: float | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    #: The semantic part of `score` (1 - cosine distance to the query), when the search was
    #: asked to `explain` itself: on a fixed scale, where `score` is divided down whenever any
    #: keyword or entity hit exists in the scope.
    similarity: float | None = None
    #: The sum of the signals before mem0 divides it by the signals that fired for the query
    #: (`score_details.raw_score`): comparable across searches, where `score` is not.
    raw_score: float | None = None

    @functools.cached_property
    def related_ids(self) -> tuple[str, ...]:
        """The memories this one was stored close to (`RELATED_KEY` in its metadata, written by
        the bridge on add); anything else found there is ignored, as mem0 holds whatever any
        client wrote."""
        value = self.metadata.get(RELATED_KEY)
        if not isinstance(value, list):
            return ()
        found = (v for v in value if isinstance(v, str) and 0 < len(v) <= MAX_ID_CHARS)
        return tuple(itertools.islice(found, MAX_RELATED))

    @functools.cached_property
    def lifetime(self) -> Lifetime:
        """When the memory's value held, and what superseded or absorbed it (`_lifetime`)."""
        return Lifetime.of(self.metadata, self.created_at)

    @property
    def active_at(self) -> float:
        """Epoch seconds of the memory's newest update (0 when mem0 gave no time)."""
        newest = newest_time(self.created_at, self.updated_at)
        return newest.timestamp() if newest is not None else 0.0

    @property
    def similarity_to_query(self) -> float:
        """The semantic similarity when mem0 gave it, else the blended score (0 for none)."""
        if self.similarity is not None:
            return self.similarity
        return self.score or 0.0

    @classmethod
    def from_api(cls, item: Mapping[str, Any]) -> Memory:
        score = item.get("score")
        details = item.get("score_details")
        details = details if isinstance(details, Mapping) else {}
        semantic, raw = details.get("semantic_score"), details.get("raw_score")
        return cls(
            id=str(item["id"]),
            text=str(item.get("memory") or item.get("text") or ""),
            run_id=item.get("run_id"),
            user_id=item.get("user_id"),
            created_at=item.get("created_at"),
            updated_at=item.get("updated_at"),
            score=float(score) if isinstance(score, int | float) else None,
            metadata=item.get("metadata") or {},
            similarity=float(semantic) if isinstance(semantic, int | float) else None,
            raw_score=float(raw) if isinstance(raw, int | float) else None,
        )


@dataclass(frozen=True)
class HistoryEntry:
    event: str
    old_memory: str | None
    new_memory: str | None
    #: When this event happened: mem0 stamps an ADD with the memory's creation time and an
    #: UPDATE or DELETE with the time of the change (`updated_at`), keeping `created_at` as
    #: the memory's own creation time on every row.
    at: str | None

    @classmethod
    def from_api(cls, item: Mapping[str, Any]) -> HistoryEntry:
        event = str(item.get("event", ""))
        created, updated = item.get("created_at"), item.get("updated_at")
        at = created if event == "ADD" else (updated or created)
        return cls(
            event=event,
            old_memory=item.get("old_memory"),
            new_memory=item.get("new_memory"),
            at=str(at) if at else None,
        )


def _verify(settings: BridgeSettings) -> ssl.SSLContext | bool:
    if settings.ca_bundle is not None:
        return ssl.create_default_context(cafile=str(settings.ca_bundle))
    return not settings.insecure_tls


class Mem0Client:
    """mem0 REST calls; one instance per process, sharing one connection pool."""

    def __init__(
        self, settings: BridgeSettings, *, transport: httpx.AsyncBaseTransport | None = None
    ) -> None:
        headers = {"Accept": "application/json"}
        if settings.api_key:
            headers["X-API-Key"] = settings.api_key
        self._settings = settings
        self._http = httpx.AsyncClient(
            base_url=settings.api_url,
            headers=headers,
            follow_redirects=False,
            timeout=settings.timeout_seconds,
            verify=_verify(settings),
            transport=transport,
            limits=httpx.Limits(
                max_connections=100,
                max_keepalive_connections=20,
                keepalive_expiry=CLIENT_KEEPALIVE_EXPIRY_SECONDS,
            ),
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    @property
    def base_url(self) -> str:
        return self._settings.api_url

    async def _request(
        self,
        method: str,
        path: str,
        *,
        what: str,
        json: Any = None,
        params: Mapping[str, str | int] | None = None,
        headers: Mapping[str, str] | None = None,
        seconds: float | None = None,
    ) -> Any:
        # Whether an unanswered request may have changed something (a search is a POST too).
        mutates = method != "GET" and path != "/search"
        try:
            response = await self._http.request(
                method,
                path,
                json=json,
                params=params,
                headers=headers,
                timeout=seconds if seconds is not None else httpx.USE_CLIENT_DEFAULT,
            )
        except _NOT_SENT as exc:
            raise Mem0Error(
                f"mem0 is unreachable at {self.base_url} ({type(exc).__name__}); check that the "
                "mem0 server runs and that MEM0_API_URL points at it. Nothing was changed."
            ) from exc
        except httpx.TimeoutException as exc:
            waited = seconds if seconds is not None else self._settings.timeout_seconds
            unknown = (
                ": whether it was applied is unknown; check with memory_search before retrying"
                if mutates
                else ""
            )
            raise Mem0Error(
                f"mem0 did not answer {what} within {waited:g} s{unknown}. Retry later, or raise "
                "MEM0_TIMEOUT_SECONDS / MEM0_ADD_TIMEOUT_SECONDS if the server is just slow.",
                outcome_unknown=mutates,
            ) from exc
        except httpx.TransportError as exc:
            # Sent, but the connection broke before an answer: a write may have been applied.
            if not mutates:
                message = f"mem0 stopped answering {what} mid-call ({type(exc).__name__}); retry."
            else:
                message = (
                    f"mem0 received {what} but the connection broke before it answered "
                    f"({type(exc).__name__}): whether it was applied is unknown. Check with "
                    "memory_search or memory_list before retrying."
                )
            raise Mem0Error(message, outcome_unknown=mutates) from exc
        if response.is_success:
            try:
                return response.json()
            except ValueError as exc:
                raise Mem0Error(
                    f"mem0 answered {what} with a body that is not JSON; check that MEM0_API_URL "
                    "points at a mem0 REST server."
                ) from exc
        raise _error_for(response, what)

    async def add(
        self, text: str, *, user_id: str, run_id: str, infer: bool, metadata: Mapping[str, Any]
    ) -> list[tuple[str, str, str]]:
        """Store `text`; returns (id, memory text, event) for each memory mem0 reports."""
        body = {
            "messages": [{"role": "user", "content": text}],
            "user_id": user_id,
            "run_id": run_id,
            "infer": infer,
            "metadata": dict(metadata),
        }
        seconds = self._settings.add_timeout_seconds if infer else self._settings.timeout_seconds
        answer = await self._request(
            "POST", "/memories", what="the add", json=body, seconds=seconds
        )
        results = answer.get("results", []) if isinstance(answer, dict) else answer
        return [
            (str(r["id"]), str(r.get("memory", "")), str(r.get("event", "ADD")))
            for r in results or []
            if isinstance(r, dict) and "id" in r
        ]

    async def search(
        self,
        query: str,
        *,
        user_id: str,
        run_id: str | Sequence[str] | None,
        top_k: int,
    ) -> list[Memory]:
        """Search one namespace, several (one query, an `OR` over their run_ids), or all.

        One search over several namespaces embeds the query once and scores every hit on the
        same scale, where a search per namespace would pay the embedding each time. Every search
        asks mem0 to `explain` each hit's score: the breakdown fills `Memory.similarity` and
        `Memory.raw_score`, the scales the verdict guard and the merge of searches rely on.
        """
        filters: dict[str, Any] = {"user_id": user_id}
        run_ids = [run_id] if isinstance(run_id, str) else list(run_id or [])
        if len(run_ids) == 1:
            filters["run_id"] = run_ids[0]
        elif run_ids:
            filters["OR"] = [{"run_id": r} for r in run_ids]
        answer = await self._request(
            "POST",
            "/search",
            what="the search",
            json={"query": query, "filters": filters, "top_k": top_k, "explain": True},
        )
        return _memories(answer)

    async def list_memories(self, *, user_id: str, run_id: str | None, top_k: int) -> list[Memory]:
        params: dict[str, str | int] = {"user_id": user_id, "top_k": top_k}
        if run_id is not None:
            params["run_id"] = run_id
        answer = await self._request("GET", "/memories", what="the listing", params=params)
        return _memories(answer)

    async def get(self, memory_id: str) -> Memory | None:
        """The memory, or None when there is none: mem0's official server answers an unknown id
        with 200 and `null`, mem0-local with 404; both mean the same to every caller."""
        try:
            answer = await self._request("GET", f"/memories/{memory_id}", what="the lookup")
        except Mem0Error as exc:
            if exc.status == 404:
                return None
            raise
        return Memory.from_api(answer) if isinstance(answer, dict) and answer.get("id") else None

    async def update(
        self, memory_id: str, text: str | None = None, *, metadata: Mapping[str, Any] | None = None
    ) -> None:
        """Rewrite the text, merge `metadata` into the memory's own (mem0 merges key by key),
        or both in one request."""
        body: dict[str, Any] = {}
        if text is not None:
            body["text"] = text
        if metadata is not None:
            body["metadata"] = dict(metadata)
        if not body:
            raise ValueError("update() needs a text or metadata")
        await self._request("PUT", f"/memories/{memory_id}", what="the update", json=body)

    async def delete(self, memory_id: str) -> None:
        await self._request("DELETE", f"/memories/{memory_id}", what="the delete")

    async def history(self, memory_id: str) -> list[HistoryEntry]:
        answer = await self._request(
            "GET", f"/memories/{memory_id}/history", what="the history lookup"
        )
        entries = answer.get("results", []) if isinstance(answer, dict) else answer
        return [HistoryEntry.from_api(e) for e in entries or [] if isinstance(e, dict)]

    async def reset(self, reset_token: str) -> None:
        """Wipe the store; the token is forwarded, never stored, and checked by the server."""
        await self._request(
            "POST", "/reset", what="the reset", headers={"X-Reset-Token": reset_token}
        )

    async def ping(self) -> None:
        """Cheapest authenticated call that proves mem0 answers (no embedding, no LLM)."""
        await self._request(
            "GET",
            "/memories",
            what="the readiness probe",
            params={"user_id": self._settings.default_user_id, "top_k": 1},
        )


#: Failures before the request left this process: nothing reached mem0.
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.UnsupportedProtocol)


def _memories(answer: Any) -> list[Memory]:
    items: Sequence[Any] = answer.get("results", []) if isinstance(answer, dict) else answer or []
    return [Memory.from_api(item) for item in items if isinstance(item, dict) and "id" in item]


def _detail(response: httpx.Response) -> tuple[str, str | None]:
    try:
        body = response.json()
    except ValueError:
        return response.text[:200], None
    if isinstance(body, dict):
        detail = body.get("detail", body.get("message", ""))
        code = body.get("code")
        return (str(detail) if detail else ""), (str(code) if code else None)
    return str(body)[:200], None


def _error_for(response: httpx.Response, what: str) -> Mem0Error:
    status = response.status_code
    detail, code = _detail(response)
    if response.is_redirect:
        location = response.headers.get("location", "?")
        message = (
            f"mem0 answered {what} with a redirect to {location}, which the bridge never follows "
            "(a redirected DELETE could hit the delete-all route); check MEM0_API_URL."
        )
    elif status in (401, 403):
        message = (
            f"mem0 refused {what} (HTTP {status}): the API key is missing or wrong; the operator "
            "must set MEM0_API_KEY to a key the mem0 server accepts."
        )
    elif status == 404:
        message = f"mem0 found nothing for {what} (HTTP 404){': ' + detail if detail else ''}."
    elif status in (400, 409, 422):
        message = f"mem0 rejected {what} as invalid (HTTP {status}): {detail or 'no detail'}."
    elif code is not None:
        advice = _PROVIDER_CODES.get(code, _PROVIDER_CODES["unknown"])
        message = f"mem0 failed {what} ({code}): {advice}"
    else:
        message = (
            f"mem0 failed {what} (HTTP {status}){': ' + detail if detail else ''}; retry once, "
            "then tell the user the memory server is failing."
        )
    return Mem0Error(message, status=status, code=code)

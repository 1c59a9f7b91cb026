"""FakeMem0: an in-memory fake of mem0's REST API behind an httpx MockTransport.

For the bridge core's fast tests only (the full-stack tests run the real mem0ai library). It
keeps what the bridge relies on: ids, metadata as added and merged by updates, run_id/user_id
filters (one id or an `OR` of run_ids), history events with their own times, 404 for unknown
ids. Search scores by word overlap (Jaccard), deterministic and good enough to make close texts
candidates of each other; with `explain` that score is also each hit's
`score_details.semantic_score`, as mem0's would be.
"""

from __future__ import annotations

import itertools
import json
import re
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

_WORDS = re.compile(r"\w+")
_EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORDS.findall(text)}


@dataclass
class _Memory:
    id: str
    text: str
    user_id: str
    run_id: str
    created_at: str
    updated_at: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class FakeMem0:
    memories: dict[str, _Memory] = field(default_factory=dict)
    history: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    requests: list[httpx.Request] = field(default_factory=list)
    #: How an unknown id is answered: 200 with `null` (mem0's official server) or 404
    #: (mem0-local).
    unknown_id_status: int = 200
    #: What a hit's `score` is divided by, as mem0 divides its blended score by the signals
    #: that fired (a keyword hit halves it); `score_details.semantic_score` stays undivided.
    score_divisor: float = 1.0
    #: Each event one minute after the last, so every event has its own time.
    _ticks: itertools.count[int] = field(default_factory=itertools.count)

    @property
    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self._handle)

    def _now(self) -> str:
        return (_EPOCH + timedelta(minutes=next(self._ticks))).isoformat()

    def texts(self, run_id: str) -> list[str]:
        """Every memory's text in `run_id`, superseded and folded ones included."""
        return sorted(m.text for m in self.memories.values() if m.run_id == run_id)

    def current_texts(self, run_id: str) -> list[str]:
        """The texts of the memories in `run_id` that hold their fact's value now: neither
        superseded nor folded into another memory (the bridge's metadata says which)."""
        return sorted(
            m.text
            for m in self.memories.values()
            if m.run_id == run_id
            and not m.metadata.get("superseded_by")
            and not m.metadata.get("folded_into")
        )

    def _item(self, memory: _Memory, score: float | None = None) -> dict[str, Any]:
        return {
            "id": memory.id,
            "memory": memory.text,
            "user_id": memory.user_id,
            "run_id": memory.run_id,
            "created_at": memory.created_at,
            "updated_at": memory.updated_at,
            "metadata": memory.metadata,
            "score": score,
        }

    def _event(self, memory: _Memory, event: str, old: str | None, new: str | None) -> None:
        now = self._now()
        self.history.setdefault(memory.id, []).append(
            {
                "memory_id": memory.id,
                "event": event,
                "old_memory": old,
                "new_memory": new,
                "created_at": memory.created_at,
                "updated_at": None if event == "ADD" else now,
            }
        )

    def _handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        path = request.url.path
        body = json.loads(request.content) if request.content else {}
        if request.method == "POST" and path == "/memories":
            return self._add(body)
        if request.method == "POST" and path == "/search":
            return self._search(body)
        if request.method == "GET" and path == "/memories":
            run_id = request.url.params.get("run_id")
            found = [m for m in self.memories.values() if run_id is None or m.run_id == run_id]
            return httpx.Response(200, json={"results": [self._item(m) for m in found]})
        if request.method == "POST" and path == "/reset":
            self.memories.clear()
        match = re.fullmatch(r"/memories/([^/]+)(/history)?", path)
        if match is None:
            return httpx.Response(200 if path == "/reset" else 404, json={"message": path})
        if match.group(2):
            return httpx.Response(200, json=self.history.get(match.group(1), []))
        return self._one(request.method, match.group(1), body)

    def _one(self, method: str, memory_id: str, body: dict[str, Any]) -> httpx.Response:
        memory = self.memories.get(memory_id)
        if method == "GET":
            if memory is None:
                return httpx.Response(
                    self.unknown_id_status,
                    content=b"null",
                    headers={"content-type": "application/json"},
                )
            return httpx.Response(200, json=self._item(memory))
        if memory is None:
            return httpx.Response(404, json={"detail": "Memory not found"})
        if method == "PUT":
            # As mem0 does: the text if given, metadata merged key by key, always an event.
            old, memory.updated_at = memory.text, self._now()
            memory.text = body.get("text", memory.text)
            memory.metadata.update(body.get("metadata") or {})
            self._event(memory, "UPDATE", old, memory.text)
            return httpx.Response(200, json={"message": "updated"})
        del self.memories[memory_id]
        self._event(memory, "DELETE", memory.text, None)
        return httpx.Response(200, json={"message": "deleted"})

    def _add(self, body: dict[str, Any]) -> httpx.Response:
        text = body["messages"][0]["content"]
        memory = _Memory(
            str(uuid.uuid4()),
            text,
            body["user_id"],
            body["run_id"],
            self._now(),
            metadata=dict(body.get("metadata") or {}),
        )
        self.memories[memory.id] = memory
        self._event(memory, "ADD", None, text)
        return httpx.Response(
            200, json={"results": [{"id": memory.id, "memory": text, "event": "ADD"}]}
        )

    def _search(self, body: dict[str, Any]) -> httpx.Response:
        filters = body["filters"]
        run_ids = (
            {filters["run_id"]}
            if "run_id" in filters
            else {f["run_id"] for f in filters.get("OR", [])} or None
        )
        query = _words(body["query"])
        scored = []
        for memory in self.memories.values():
            if memory.user_id != filters["user_id"]:
                continue
            if run_ids is not None and memory.run_id not in run_ids:
                continue
            words = _words(memory.text)
            score = len(query & words) / len(query | words) if query | words else 0.0
            if score > 0:
                scored.append((score, memory))
        scored.sort(key=lambda pair: -pair[0])
        top = scored[: body.get("top_k", 20)]
        items = [self._item(m, s / self.score_divisor) for s, m in top]
        if body.get("explain"):
            for item, (semantic, _) in zip(items, top, strict=True):
                item["score_details"] = {"semantic_score": semantic}
        return httpx.Response(200, json={"results": items})

"""memory_list and memory_recent: a scope's memories without a query."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING

from mem0_bridge._concurrency import gather
from mem0_bridge._mem0 import LIST_CAP, Memory
from mem0_bridge._models import ListResult
from mem0_bridge._render import to_hit
from mem0_bridge._scopes import is_pin_namespace

if TYPE_CHECKING:
    from mem0_bridge._service import MemoryService


async def _memories(
    service: MemoryService, namespaces: Sequence[str] | None, top_k: int
) -> list[Memory]:
    """The scope's memories, pins and folded restatements left out (the memory a restatement
    was folded into lists the fact)."""
    if namespaces is None:
        found = [await service.list_one(None, LIST_CAP)]
    else:
        found = await gather(*(functools.partial(service.list_one, ns, top_k) for ns in namespaces))
    return [
        memory
        for memories in found
        for memory in memories
        if not is_pin_namespace(memory.run_id) and memory.lifetime.folded_into is None
    ]


async def list_scope(
    service: MemoryService, namespaces: Sequence[str] | None, limit: int
) -> ListResult:
    memories = await _memories(service, namespaces, min(limit, LIST_CAP))
    notes = []
    if len(memories) > limit:
        notes.append(f"showing {limit} of {len(memories)}+; use memory_search to recall")
    return ListResult(
        namespaces=list(namespaces) if namespaces is not None else None,
        hits=[to_hit(m, score=None) for m in memories[:limit]],
        notes=notes,
    )


async def recent(
    service: MemoryService, namespaces: Sequence[str] | None, limit: int
) -> ListResult:
    # mem0 lists in no particular order, so fetch what the server allows and sort here.
    memories = await _memories(service, namespaces, LIST_CAP)
    memories.sort(key=lambda m: m.active_at, reverse=True)
    return ListResult(
        namespaces=list(namespaces) if namespaces is not None else None,
        hits=[to_hit(m, score=None) for m in memories[:limit]],
        notes=[],
    )

"""memory_list and memory_recent: a scope's memories without a query."""

from __future__ import annotations

import functools
from collections.abc import Sequence

from mem0_bridge._core import LIST_CAP, Core, activity_time, gather, to_hit
from mem0_bridge._mem0 import Memory
from mem0_bridge._models import ListResult
from mem0_bridge._scopes import is_pin_namespace


async def _memories(core: Core, namespaces: Sequence[str] | None, top_k: int) -> list[Memory]:
    """The scope's memories, pins and folded restatements left out (the memory a restatement
    was folded into lists the fact)."""
    if namespaces is None:
        found = [await core.list_one(None, LIST_CAP)]
    else:
        found = await gather(*(functools.partial(core.list_one, ns, top_k) for ns in namespaces))
    return [
        memory
        for memories in found
        for memory in memories
        if not is_pin_namespace(memory.run_id) and memory.lifetime.folded_into is None
    ]


async def list_scope(core: Core, namespaces: Sequence[str] | None, limit: int) -> ListResult:
    memories = await _memories(core, namespaces, min(limit, LIST_CAP))
    notes = []
    if len(memories) > limit:
        notes.append(f"showing {limit} of {len(memories)}+; use memory_search to recall")
    return ListResult(
        namespaces=list(namespaces) if namespaces is not None else None,
        hits=[to_hit(m, score=None) for m in memories[:limit]],
        notes=notes,
    )


async def recent(core: Core, namespaces: Sequence[str] | None, limit: int) -> ListResult:
    # mem0 lists in no particular order, so fetch what the server allows and sort here.
    memories = await _memories(core, namespaces, LIST_CAP)
    memories.sort(key=activity_time, reverse=True)
    return ListResult(
        namespaces=list(namespaces) if namespaces is not None else None,
        hits=[to_hit(m, score=None) for m in memories[:limit]],
        notes=[],
    )

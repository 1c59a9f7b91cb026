"""One memory by id: memory_update, memory_delete, memory_history, memory_unpin and
memory_reinstate.

A by-id call reaches a memory only when it belongs to this bridge's user and lives in a
namespace the caller may use (`readable`); any other id answers exactly like an unknown one, so
ids of other tenants reveal nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from mem0_bridge._errors import BridgeError
from mem0_bridge._folding import current_successor, outdate
from mem0_bridge._grpc import skipped
from mem0_bridge._inputs import check_memory_id, check_text
from mem0_bridge._lifetime import rfc3339
from mem0_bridge._mem0 import Memory
from mem0_bridge._models import ChangeResult, HistoryEvent, HistoryResult, Span
from mem0_bridge._scopes import is_pin_namespace

if TYPE_CHECKING:
    from mem0_bridge._service import MemoryService

#: Which namespaces a caller may reach by id.
Readable = Callable[[str], bool]


def _unknown(memory_id: str) -> BridgeError:
    return BridgeError(
        f"No memory has id {memory_id}; it may have been deleted. Use memory_search or "
        "memory_list to find the current id."
    )


async def own(service: MemoryService, memory_id: str, readable: Readable) -> Memory:
    """The memory, if this caller may reach it; else the unknown-id error."""
    memory = await service.mem0.get(memory_id)
    if (
        memory is None
        or memory.user_id != service.user_id
        or not memory.run_id
        or not readable(memory.run_id)
    ):
        raise _unknown(memory_id)
    return memory


async def _ordinary(
    service: MemoryService, memory_id: str, readable: Readable, verb: str, notes: list[str]
) -> Memory:
    """The ordinary memory `memory_id` names; for a restatement folded into another memory,
    that memory (the one that holds the fact now), with a note saying so."""
    memory = await own(service, memory_id, readable)
    if is_pin_namespace(memory.run_id):
        raise BridgeError(
            f"{memory_id} is a pin; pins are stored verbatim and are not {verb} by id. Use "
            "memory_unpin to remove it (and memory_pin to pin the new wording)."
        )
    into = memory.lifetime.folded_into
    if into is None:
        return memory
    try:
        survivor = await own(service, into, readable)
    except BridgeError:
        return memory  # the memory it was folded into is gone: it answers for itself
    notes.append(f"{memory_id} was folded into {into}, which holds the fact now; this acted on it")
    return survivor


async def unpin(service: MemoryService, memory_id: str, readable: Readable) -> ChangeResult:
    memory_id = check_memory_id(memory_id)
    memory = await own(service, memory_id, readable)
    if not is_pin_namespace(memory.run_id):
        raise BridgeError(
            f"{memory_id} is not a pin (it lives in {memory.run_id!r}); memory_unpin only "
            "removes pins. Use memory_delete to delete an ordinary memory."
        )
    await service.mem0.delete(memory_id)
    return ChangeResult(
        action="unpinned", memory_id=memory_id, namespace=memory.run_id, text=memory.text, notes=[]
    )


async def update(
    service: MemoryService, memory_id: str, text: str, readable: Readable
) -> ChangeResult:
    memory_id = check_memory_id(memory_id)
    text = check_text(text)
    notes: list[str] = []
    memory = await _ordinary(service, memory_id, readable, "updated", notes)
    memory_id = memory.id
    namespace = memory.run_id or ""
    rscope = service.rscope(namespace)
    async with service.scope_locks.hold(rscope):
        await service.mem0.update(memory_id, text)
        # The memory no longer holds its old text: no dedupe record may vouch for it.
        failure = await service.ranker.record_stored(rscope, text, memory_id, replaces=True)
    return ChangeResult(
        action="updated",
        memory_id=memory_id,
        namespace=namespace,
        text=text,
        previous_text=memory.text,
        notes=[*notes, *skipped(failure, "the new text was not recorded for dedupe")],
    )


async def delete(service: MemoryService, memory_id: str, readable: Readable) -> ChangeResult:
    """Delete one memory; the older values it had superseded become current again, so that
    deleting a wrong change leaves the fact with its previous value."""
    memory_id = check_memory_id(memory_id)
    notes: list[str] = []
    memory = await _ordinary(service, memory_id, readable, "deleted", notes)
    async with service.scope_locks.hold(service.rscope(memory.run_id or "")):
        await service.mem0.delete(memory.id)
        failure = await service.ranker.forget([memory.id])
        life = memory.lifetime
        if life.current:
            for restored in await _superseded_by(service, memory, life.supersedes):
                await service.mem0.update(
                    restored.id, metadata=restored.lifetime.reinstated(service.now())
                )
                notes.append(f"{restored.id} holds the fact again: {restored.text}")
    return ChangeResult(
        action="deleted",
        memory_id=memory.id,
        namespace=memory.run_id,
        text=memory.text,
        notes=[*notes, *skipped(failure, "its mention and dedupe records remain")],
    )


async def _superseded_by(
    service: MemoryService, memory: Memory, ids: Sequence[str]
) -> list[Memory]:
    """Those of `ids` that `memory` superseded and that still say so."""
    found = [await service.mem0.get(i) for i in ids]
    return [
        m
        for m in found
        if m is not None and m.run_id == memory.run_id and m.lifetime.superseded_by == memory.id
    ]


async def reinstate(service: MemoryService, memory_id: str, readable: Readable) -> ChangeResult:
    """Make a superseded (or folded) memory current again: undo a change the judge got wrong.
    The memory that had superseded it is marked superseded by it in turn, with its wordings."""
    memory_id = check_memory_id(memory_id)
    notes: list[str] = []
    memory = await own(service, memory_id, readable)
    if is_pin_namespace(memory.run_id):
        raise BridgeError(f"{memory_id} is a pin; pins are always current.")
    life = memory.lifetime
    if life.current:
        return ChangeResult(
            action="reinstated",
            memory_id=memory_id,
            namespace=memory.run_id,
            text=memory.text,
            notes=["it was current already; nothing changed"],
        )
    async with service.scope_locks.hold(service.rscope(memory.run_id or "")):
        at = service.now()
        successor = await current_successor(service, memory)
        replacing = [] if successor is None else [successor.id]
        await service.mem0.update(memory_id, metadata=life.reinstated(at, replacing=replacing))
        # With the successor's wordings, which hold its value: left current, they would
        # stand beside the reinstated memory as the fact's value.
        if successor is not None:
            if await outdate(service, successor, memory_id, at):
                notes.append(f"{successor.id} is superseded by it now: {successor.text}")
            else:
                notes.append(
                    f"{successor.id} could not be marked superseded by it (mem0 refused) and "
                    f"is current too: {successor.text}"
                )
    return ChangeResult(
        action="reinstated",
        memory_id=memory_id,
        namespace=memory.run_id,
        text=memory.text,
        notes=notes,
    )


async def history(service: MemoryService, memory_id: str, readable: Readable) -> HistoryResult:
    """How one memory's text changed, and when its value held (its validity spans)."""
    memory_id = check_memory_id(memory_id)
    memory = await own(service, memory_id, readable)
    entries = await service.mem0.history(memory_id)
    if not entries:
        raise _unknown(memory_id)
    life = memory.lifetime
    notes = []
    if life.folded_into is not None:
        notes.append(f"folded into {life.folded_into}, which holds this fact now")
    elif life.superseded_by is not None:
        notes.append(f"superseded by {life.superseded_by}, which holds the newer value")
    return HistoryResult(
        memory_id=memory_id,
        events=[
            HistoryEvent(event=e.event, old_text=e.old_memory, new_text=e.new_memory, at=e.at)
            for e in entries
            # A lifetime mark rewrites the metadata only: no event of the text's history.
            if not (e.event == "UPDATE" and e.old_memory == e.new_memory)
        ],
        current=life.current,
        validity=[
            Span(valid_from=rfc3339(start), valid_until=None if end is None else rfc3339(end))
            for start, end in life.spans
        ],
        superseded_by=life.superseded_by,
        supersedes=list(life.supersedes),
        folded_into=life.folded_into,
        notes=notes,
    )

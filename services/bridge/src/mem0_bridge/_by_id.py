"""One memory by id: memory_update, memory_delete, memory_history and memory_unpin.

A by-id call reaches a memory only when it belongs to this bridge's user and lives in a
namespace the caller may use (`readable`); any other id answers exactly like an unknown one, so
ids of other tenants reveal nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mem0_bridge._errors import BridgeError
from mem0_bridge._grpc import skipped
from mem0_bridge._inputs import check_memory_id, check_text
from mem0_bridge._mem0 import Memory
from mem0_bridge._models import ChangeResult, HistoryEvent, HistoryResult
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
    service: MemoryService, memory_id: str, readable: Readable, verb: str
) -> Memory:
    memory = await own(service, memory_id, readable)
    if is_pin_namespace(memory.run_id):
        raise BridgeError(
            f"{memory_id} is a pin; pins are stored verbatim and are not {verb} by id. Use "
            "memory_unpin to remove it (and memory_pin to pin the new wording)."
        )
    return memory


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
    memory = await _ordinary(service, memory_id, readable, "updated")
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
        notes=skipped(failure, "the new text was not recorded for dedupe"),
    )


async def delete(service: MemoryService, memory_id: str, readable: Readable) -> ChangeResult:
    memory_id = check_memory_id(memory_id)
    memory = await _ordinary(service, memory_id, readable, "deleted")
    async with service.scope_locks.hold(service.rscope(memory.run_id or "")):
        await service.mem0.delete(memory_id)
        failure = await service.ranker.forget([memory_id])
    return ChangeResult(
        action="deleted",
        memory_id=memory_id,
        namespace=memory.run_id,
        text=memory.text,
        notes=skipped(failure, "its mention and dedupe records remain"),
    )


async def history(service: MemoryService, memory_id: str, readable: Readable) -> HistoryResult:
    memory_id = check_memory_id(memory_id)
    await own(service, memory_id, readable)
    entries = await service.mem0.history(memory_id)
    if not entries:
        raise _unknown(memory_id)
    return HistoryResult(
        memory_id=memory_id,
        events=[
            HistoryEvent(event=e.event, old_text=e.old_memory, new_text=e.new_memory, at=e.at)
            for e in entries
        ],
    )

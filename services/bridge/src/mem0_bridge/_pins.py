"""memory_pin and memory_pins: standing rules, stored verbatim, never searched (memory_unpin
removes one by id, in `_by_id`)."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from mem0_bridge._concurrency import gather
from mem0_bridge._errors import BridgeError
from mem0_bridge._inputs import check_text, same_text
from mem0_bridge._mem0 import Memory
from mem0_bridge._models import Pin, PinResult, PinsResult
from mem0_bridge._render import to_pin

if TYPE_CHECKING:
    from mem0_bridge._service import MemoryService


async def pin(service: MemoryService, text: str, namespace: str) -> PinResult:
    """Pin `text` in the pin namespace `namespace`, unless the same text is pinned there."""
    text = check_text(text)
    async with service.scope_locks.hold(service.rscope(namespace)):
        existing = await service.list_one(namespace)
        same = next((m for m in existing if same_text(m.text, text)), None)
        if same is not None:
            return PinResult(action="already_pinned", pin=to_pin(same))
        stored = await service.mem0.add(
            text,
            user_id=service.user_id,
            run_id=namespace,
            infer=False,
            metadata={"source": "mem0-bridge", "pinned": True},
        )
    if not stored:
        raise BridgeError(
            "mem0 did not store the pin (no id came back); retry, and tell the user if it "
            "happens again."
        )
    memory_id, memory, _ = stored[0]
    return PinResult(
        action="pinned",
        pin=Pin(id=memory_id, text=memory or text, namespace=namespace, created_at=None),
    )


async def pins(
    service: MemoryService,
    global_namespace: str | None,
    local_namespace: str | None,
    project: str | None,
) -> PinsResult:
    """The pins of both namespaces (either may be None: not readable or not known)."""

    async def of(namespace: str | None) -> list[Memory]:
        return [] if namespace is None else await service.list_one(namespace)

    global_pins, local_pins = await gather(
        functools.partial(of, global_namespace), functools.partial(of, local_namespace)
    )
    notes = []
    if local_namespace is None and project is None:
        notes.append(
            'no project known, so only global pins are shown; pass project="<repository '
            "name>\" to get this project's pins too"
        )
    return PinsResult(
        project=project,
        global_pins=[to_pin(m) for m in sorted(global_pins, key=lambda m: m.active_at)],
        local_pins=[to_pin(m) for m in sorted(local_pins, key=lambda m: m.active_at)],
        notes=notes,
    )

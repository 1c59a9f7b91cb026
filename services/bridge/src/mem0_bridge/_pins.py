"""memory_pin, memory_pins and memory_unpin: standing rules, stored verbatim, never searched."""

from __future__ import annotations

import functools

from mem0_bridge._core import Core, activity_time, gather, to_pin
from mem0_bridge._errors import BridgeError
from mem0_bridge._inputs import check_text, same_text
from mem0_bridge._mem0 import Memory
from mem0_bridge._models import Pin, PinResult, PinsResult


async def pin(core: Core, text: str, namespace: str) -> PinResult:
    """Pin `text` in the pin namespace `namespace`, unless the same text is pinned there."""
    text = check_text(text)
    async with core.scope_locks.hold(core.rscope(namespace)):
        existing = await core.list_one(namespace)
        same = next((m for m in existing if same_text(m.text, text)), None)
        if same is not None:
            return PinResult(action="already_pinned", pin=to_pin(same))
        stored = await core.mem0.add(
            text,
            user_id=core.user_id,
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
    core: Core, global_namespace: str | None, local_namespace: str | None, project: str | None
) -> PinsResult:
    """The pins of both namespaces (either may be None: not readable or not known)."""

    async def of(namespace: str | None) -> list[Memory]:
        return [] if namespace is None else await core.list_one(namespace)

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
        global_pins=[to_pin(m) for m in sorted(global_pins, key=activity_time)],
        local_pins=[to_pin(m) for m in sorted(local_pins, key=activity_time)],
        notes=notes,
    )

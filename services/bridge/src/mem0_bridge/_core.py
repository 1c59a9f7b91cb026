"""What every memory operation works with: the clients, the user, and per-scope ordering.

One `Core` per bridge process, shared by the operations (`_adding`, `_searching`, `_listing`,
`_pins`, `_by_id`) and the background reconciler.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TypeVar, cast

import anyio

from mem0_bridge._judge import JudgeClient
from mem0_bridge._lifetime import newest_time, rfc3339
from mem0_bridge._locks import KeyedLocks
from mem0_bridge._mem0 import Mem0Client, Memory
from mem0_bridge._models import Hit, Pin
from mem0_bridge._ranker import RankerClient
from mem0_bridge._render import format_age
from mem0_bridge._scopes import ranker_scope
from mem0_bridge._settings import BridgeSettings

_T = TypeVar("_T")
_A = TypeVar("_A")
_B = TypeVar("_B")

#: mem0's REST server caps GET /memories at 1000 items.
LIST_CAP = 1000


@dataclass
class Core:
    settings: BridgeSettings
    mem0: Mem0Client
    ranker: RankerClient
    judge: JudgeClient
    #: Held while a memory of a scope is being added, reconciled or rewritten, so that writes
    #: in one scope see each other (a restatement racing an add is judged against it); adds
    #: in different scopes run concurrently.
    scope_locks: KeyedLocks = field(default_factory=KeyedLocks)
    #: Epoch seconds now: `time.time`, or the benchmarks' test clock (`test_clock_file`).
    clock: Callable[[], float] = time.time

    def now(self) -> datetime:
        """The current time, as validity spans record it."""
        return datetime.fromtimestamp(self.clock(), UTC)

    @property
    def user_id(self) -> str:
        return self.settings.default_user_id

    def rscope(self, namespace: str) -> str:
        """The ranker's scope of a namespace of this bridge's user."""
        return ranker_scope(self.user_id, namespace)

    async def list_one(self, namespace: str | None, top_k: int = LIST_CAP) -> list[Memory]:
        return await self.mem0.list_memories(user_id=self.user_id, run_id=namespace, top_k=top_k)


async def gather(*calls: Callable[[], Awaitable[_T]]) -> list[_T]:
    """Run `calls` concurrently; a failure is raised as itself, not as an exception group.

    The caller turns a `Mem0Error` into the agent's message, and a group would hide it.
    """
    results: list[_T | None] = [None] * len(calls)
    errors: list[Exception] = []

    async def run(index: int, call: Callable[[], Awaitable[_T]]) -> None:
        try:
            results[index] = await call()
        except Exception as exc:  # re-raised below, unwrapped
            errors.append(exc)

    async with anyio.create_task_group() as tasks:
        for index, call in enumerate(calls):
            tasks.start_soon(run, index, call)
    if errors:
        raise errors[0]
    return cast(list[_T], results)


async def both(
    first: Callable[[], Awaitable[_A]], second: Callable[[], Awaitable[_B]]
) -> tuple[_A, _B]:
    """`gather` for two calls of different result types."""
    a, b = await gather(cast(Callable[[], Awaitable[object]], first), second)
    return cast(_A, a), cast(_B, b)


def to_hit(memory: Memory, *, score: float | None, mentions: int | None = None) -> Hit:
    life = memory.lifetime
    return Hit(
        id=memory.id,
        text=memory.text,
        namespace=memory.run_id,
        score=score,
        similarity=memory.score,
        mentions=mentions,
        age=format_age(memory.created_at, memory.updated_at),
        created_at=memory.created_at,
        updated_at=memory.updated_at,
        current=life.current,
        valid_from=None if life.valid_from is None else rfc3339(life.valid_from),
        valid_until=None if life.valid_until is None else rfc3339(life.valid_until),
        superseded_by=life.superseded_by,
    )


def to_pin(memory: Memory) -> Pin:
    return Pin(
        id=memory.id,
        text=memory.text,
        namespace=memory.run_id or "",
        created_at=memory.created_at,
    )


def activity_time(memory: Memory) -> float:
    """Epoch seconds of a memory's newest update (0 when mem0 gave no time)."""
    newest = newest_time(memory.created_at, memory.updated_at)
    return newest.timestamp() if newest is not None else 0.0

"""The background reconciler: judges, later, the facts stored while no verdict could be had.

An add that could not be judged (judge down, too slow, a broken call) is stored and marked
pending with the ranker, which keeps the queue durably for every bridge replica. This task
leases a few pending memories at a time, oldest first, and judges each against the memories of
its scope stored before it, exactly as the add would have: a restatement reinforces the older
memory (taking its words if they add a detail) and is folded into it (marked, not deleted, so
the id the agent was given keeps answering), a change marks the older value superseded by it,
and a new fact stays. It runs without any client call, and only
while the judge can give verdicts.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field

import anyio

from mem0_bridge._adding import candidates, verdicts_on
from mem0_bridge._core import Core
from mem0_bridge._grpc import PeerFailure
from mem0_bridge._lifetime import RESTATES, newest_time
from mem0_bridge._mem0 import Memory
from mem0_bridge._metrics import RECONCILED
from mem0_bridge._ranker import PendingMemory
from mem0_bridge._reconcile import (
    Applied,
    apply,
    count_echo,
    decide,
    mark,
    supersede,
    superseding_metadata,
)

logger = logging.getLogger(__name__)

#: Memories leased per round; small, so a slow judge holds few leases at once.
BATCH = 8
#: How long a lease lasts: a bridge that dies mid-round frees its memories after this.
LEASE_SECONDS = 30.0
#: Pause between rounds that found nothing to do (or could not judge).
IDLE_SECONDS = 1.0


@dataclass
class ReconcilerStats:
    """What the reconciler did since this bridge started (for selftest and /readyz)."""

    outcomes: Counter[str] = field(default_factory=Counter)
    last_error: str | None = None


class Reconciler:
    def __init__(self, core: Core) -> None:
        self._core = core
        self.stats = ReconcilerStats()

    async def run(self) -> None:
        """Reconcile forever (until cancelled), resting while there is nothing to do."""
        while True:
            try:
                done = await self.run_once()
            except Exception as exc:  # one bad round must not end reconciling for good
                logger.exception("reconcile round failed")
                self.stats.last_error = f"{type(exc).__name__}: {exc}"
                done = 0
            if not done:
                await anyio.sleep(IDLE_SECONDS)

    async def run_once(self) -> int:
        """One round: lease a batch and reconcile it; the number of memories settled."""
        core = self._core
        if await core.judge.usable() is not None:
            return 0
        claimed = await core.ranker.claim_pending(BATCH, LEASE_SECONDS)
        if isinstance(claimed, PeerFailure):
            return 0
        settled = 0
        for index, pending in enumerate(claimed):
            outcome = await self._reconcile(pending)
            if outcome is None:  # no verdict now: hand the rest back, to be tried again
                for unsettled in claimed[index:]:
                    await core.ranker.mark_pending(
                        unsettled.scope, unsettled.memory_id, unsettled.reason
                    )
                break
            RECONCILED.labels(outcome).inc()
            self.stats.outcomes[outcome] += 1
            settled += 1
        return settled

    async def _reconcile(self, pending: PendingMemory) -> str | None:
        """Settle one pending memory; its outcome, or None when the judge could not answer."""
        core = self._core
        async with core.scope_locks.hold(pending.scope):
            memory = await core.mem0.get(pending.memory_id)
            if memory is None or memory.run_id is None:
                await core.ranker.resolve_pending([pending.memory_id])
                return "gone"
            outcome = await self._judged(memory, memory.run_id)
            if outcome is not None:
                await core.ranker.resolve_pending([pending.memory_id])
            return outcome

    async def _judged(self, memory: Memory, namespace: str) -> str | None:
        """Judge `memory` against the memories stored before it, as its add would have been,
        and record the outcome as of the time it was stored."""
        core = self._core
        if not memory.lifetime.current:
            return "new"  # already superseded or folded by a later add: nothing left to do
        older = [
            c
            for c in await candidates(core, memory.text, namespace)
            if c.id != memory.id and _stored_before(c, memory)
        ]
        if not older:
            return "new"
        verdicts = await verdicts_on(core, memory.text, older)
        if isinstance(verdicts, PeerFailure):
            return None
        decision = decide(memory.text, older, verdicts, core.settings)
        at = memory.lifetime.valid_from or core.now()
        if decision.kind is None or decision.survivor is None:
            applied = Applied(memory)
            await supersede(core, decision.superseded, memory.id, at, applied)
            own = {**superseding_metadata(decision)}
            echo = await count_echo(core, decision, namespace)
            if echo.memory_id is not None:
                own[RESTATES] = echo.memory_id
            if own:
                await mark(core, memory, own, "with what it replaces")
            return "changed" if applied.superseded else "new"
        # The older memory keeps the fact (and its id and history); the pending one is folded
        # into it, so its id, which the agent was given, keeps answering.
        applied = await apply(core, decision, memory.text, namespace, at)
        await mark(core, memory, memory.lifetime.folded(applied.survivor.id, at), "folded")
        await core.ranker.fold(core.rscope(namespace), applied.survivor.id, [memory.id])
        return "restated" if decision.kind == "same" and not applied.superseded else "changed"


def _stored_before(candidate: Memory, memory: Memory) -> bool:
    """Was `candidate` created before `memory`? A pending memory is judged only against those,
    as its add would have been; ties (and missing times) count as before."""
    mine = newest_time(memory.created_at, None)
    theirs = newest_time(candidate.created_at, None)
    return mine is None or theirs is None or theirs <= mine

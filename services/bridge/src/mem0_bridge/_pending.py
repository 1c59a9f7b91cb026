"""The background reconciler: judges, later, the facts stored while no verdict could be had.

An add that could not be judged (judge down, too slow, a broken call) is stored and marked
pending with the ranker, which keeps the queue durably for every bridge replica. This task
leases a few pending memories at a time, oldest first, and judges each against the memories of
its scope stored before it, exactly as the add would have: a restatement reinforces the older
memory (taking its words if they add a detail) and is folded into it (marked, not deleted, so
the id the agent was given keeps answering), a change marks the older value superseded by it,
and a new fact stays. A memory said after it (stored later, made current again by a change
back, or restated: `stated_at`) is later: it is asked whether it replaces the pending one, and
is never replaced by it. It runs without any client call, and only while the judge can give
verdicts.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING

import anyio

from mem0_bridge import _folding as folding
from mem0_bridge._grpc import PeerFailure
from mem0_bridge._judge import Verdict
from mem0_bridge._lifetime import RESTATES, UNJUDGED, parse_time, said_by
from mem0_bridge._mem0 import Memory
from mem0_bridge._metrics import RECONCILED
from mem0_bridge._ranker import PendingMemory
from mem0_bridge._wording import name_overlap

if TYPE_CHECKING:
    from mem0_bridge._service import MemoryService

logger = logging.getLogger(__name__)

#: Memories leased per round; small, so a slow judge holds few leases at once.
BATCH = 8
#: How long a lease lasts: a bridge that dies mid-round frees its memories after this.
LEASE_SECONDS = 30.0
#: Pause between rounds that found nothing to do (or could not judge).
IDLE_SECONDS = 1.0
#: Later current memories a pending one is judged against, closest first.
LATER_ASKED = 2
#: How many of mem0's nearest, per candidate shown, a pending memory's candidates are chosen
#: from: more than an add's (`folding.CANDIDATE_OVERFETCH`), since this is background work and
#: an outage stores many sentences of one shape, which crowd a fact's other wordings out.
RECONCILE_OVERFETCH = 40


@dataclass
class ReconcilerStats:
    """What the reconciler did since this bridge started (for selftest and /readyz)."""

    outcomes: Counter[str] = field(default_factory=Counter)
    last_error: str | None = None


class Reconciler:
    def __init__(self, service: MemoryService) -> None:
        self._service = service
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
        service = self._service
        if await service.judge.usable() is not None:
            return 0
        claimed = await service.ranker.claim_pending(BATCH, LEASE_SECONDS)
        if isinstance(claimed, PeerFailure):
            return 0
        settled = 0
        for index, pending in enumerate(claimed):
            outcome = await self._reconcile(pending)
            if outcome is None:  # no verdict now: hand the rest back, to be tried again
                for unsettled in claimed[index:]:
                    await service.ranker.mark_pending(
                        unsettled.scope, unsettled.memory_id, unsettled.reason
                    )
                break
            RECONCILED.labels(outcome).inc()
            self.stats.outcomes[outcome] += 1
            settled += 1
        return settled

    async def _reconcile(self, pending: PendingMemory) -> str | None:
        """Settle one pending memory; its outcome, or None when the judge could not answer.

        The verdicts are asked for before the scope's lock is taken, so that a slow LLM holds
        no add of the scope meanwhile (an add waits for the lock, not for the judge); under the
        lock they are acted on if what they judged is still what mem0 holds, and asked for
        again otherwise.
        """
        service = self._service
        early = await self._early_verdicts(pending.memory_id)
        async with service.scope_locks.hold(pending.scope):
            memory = await service.mem0.get(pending.memory_id)
            if memory is None or memory.run_id is None:
                await service.ranker.resolve_pending([pending.memory_id])
                return "gone"
            if memory.lifetime.superseded_by is not None:
                outcome = await self._replaced_while_waiting(memory, memory.run_id)
            else:
                outcome = await self._judged(memory, memory.run_id, early)
            if outcome is not None:
                if memory.lifetime.unjudged:  # marks merge key by key: it is still set
                    await folding.mark(service, memory, {UNJUDGED: None}, "as judged")
                await service.ranker.resolve_pending([pending.memory_id])
            return outcome

    async def _candidates(self, memory: Memory, namespace: str) -> list[Memory]:
        """The candidates of `memory` (as its add would have been shown), less itself."""
        found = await folding.candidates(
            self._service,
            memory.text,
            namespace,
            leaving_out=memory.id,
            overfetch=RECONCILE_OVERFETCH,
        )
        return [c for c in found if c.id != memory.id]

    async def _fold(self, memory: Memory, into: str, namespace: str, at: datetime) -> None:
        """Fold `memory` into `into` and carry its mentions over."""
        service = self._service
        await folding.fold(service, memory, into, at)
        await service.ranker.fold(service.rscope(namespace), into, [memory.id])

    async def _outdated(
        self, memory: Memory, namespace: str, later: list[Memory], early: _Verdicts | None
    ) -> str | PeerFailure | None:
        """Settle `memory` against `later`, the current memories stored after it, if one of
        them restates or replaces its value (an add made while it waited, judged without it):
        it is then folded into, worded as, or superseded by that later memory, as of when that
        one was stored, and never made to replace it. The outcome; None when none did."""
        service = self._service
        for newer in _later_asked(memory, later):
            judged = _judged_by_later(memory, newer)
            known = early.by_later(judged, newer) if early is not None else None
            verdicts = await _or_asked(service, known, newer.text, [judged])
            if isinstance(verdicts, PeerFailure):
                return verdicts
            at = newer.lifetime.said_at or service.now()  # when it was said after `memory`
            if folding.judged_changed(newer.text, judged, verdicts, service.settings):
                # With its wordings: a value reconciled before it may restate it already.
                await folding.outdate(service, memory, newer.id, at)
                return "changed"
            if verdicts.get(memory.id) is not Verdict.SAME:
                continue
            if await folding.restates_through(service, newer, memory.id):
                pass  # stored as a wording of it already (or of one of its wordings)
            elif folding.plausibly_one_fact(
                newer.text, judged, service.settings.verdict_similarity_floor
            ):
                await self._fold(memory, newer.id, namespace, at)
            else:
                await folding.link_wordings(service, [memory], newer)
            return "restated"
        return None

    async def _replaces_older(
        self, memory: Memory, older: list[Memory], later: list[Memory], early: _Verdicts | None
    ) -> None:
        """Mark the older values `memory` changed superseded, as its add would have, now that a
        later memory restating it speaks for its value (`_outdated`): that one's own judge may
        not have been shown them (other facts' sentences of its shape crowd them out), and an
        older value left current would stand beside the latest. Where one was replaced by a
        value said later still, that value overtakes the one `memory` says, with its wordings.
        Nothing when the judge cannot answer: the older values stay as they are."""
        service = self._service
        known = early.on(memory, older) if early is not None else None
        verdicts = await _or_asked(service, known, memory.text, older)
        if isinstance(verdicts, PeerFailure):
            return
        decision = folding.decide(memory.text, older, verdicts, service.settings)
        await self._worded_as_older(memory, decision)
        if not decision.superseded:
            return
        held = await service.mem0.get(memory.id)
        if held is None:
            return
        speaker = held.lifetime.folded_into or held.lifetime.restates or held.id
        # What speaks for its value, or was said after it, is never replaced by it.
        saying = {memory.id, speaker} | {
            c.id for c in later if c.lifetime.restates in (memory.id, speaker)
        }
        said_after = {c.id for c in later} - saying
        decision = replace(decision, spared=decision.spared | saying | said_after)
        at = memory.lifetime.valid_from or service.now()
        await folding.supersede(service, decision, speaker, at, folding.Applied(memory))
        # An older value it replaces, replaced since by a value said after it: that value is
        # the fact's latest, and overtakes what speaks for this one.
        overtaking = [
            successor
            for replaced in decision.superseded
            if not replaced.lifetime.current
            and (successor := await folding.current_successor(service, replaced)) is not None
            and successor.id in said_after
        ]
        await _overtaken(service, speaker, overtaking)

    async def _worded_as_older(self, memory: Memory, decision: folding.Decision) -> None:
        """Link `memory`, restated by a later statement, as a wording of the older current
        memory the judge calls the same value (`decision`'s survivor or echo), as its add would
        have: left alone, it stands beside that memory as a second current one of the fact."""
        service = self._service
        older = decision.survivor if decision.kind == "same" else decision.echoed
        if older is None or not older.lifetime.current or older.lifetime.restates is not None:
            return
        held = await service.mem0.get(memory.id)
        if held is None or not held.lifetime.current or held.lifetime.restates is not None:
            return
        # `older` restates nothing, so this link closes no ring of wordings.
        await folding.link_wordings(service, [held], older)

    async def _replaced_while_waiting(self, memory: Memory, namespace: str) -> str | None:
        """Settle `memory`, superseded by a later add while it waited. That add judged it
        and replaced it, and with it no value but the closest one's: the older current values
        `memory` replaces (or restates) are marked superseded now, by it and as of when it was
        stored (or, restating it, with it), so that the fact's chain leads to its current
        memory. The outcome; None when the judge could not answer."""
        service = self._service
        close = await self._candidates(memory, namespace)
        replacing = {s.id async for s in folding.successors(service, memory)}
        later, before = _around(close, memory)
        older = [c for c in before if c.lifetime.current and c.id not in replacing]
        if not older:
            return "new"
        verdicts = await folding.verdicts_on(service, memory.text, older)
        if isinstance(verdicts, PeerFailure):
            return None
        decision = folding.decide(memory.text, older, verdicts, service.settings)
        # What replaced it, or was said after it, is never replaced by it (nor as a wording).
        kept = replacing | {c.id for c in later}
        decision = replace(decision, spared=decision.spared | kept)
        applied = folding.Applied(memory)
        at = memory.lifetime.valid_from or service.now()
        await folding.supersede(service, decision, memory.id, at, applied)
        successor, until = memory.lifetime.superseded_by, memory.lifetime.valid_until
        # The value it restates was replaced with it, and with that value its wordings (unless
        # said again since).
        if (
            decision.kind == "same"
            and decision.survivor is not None
            and successor
            and until
            and await folding.outdate(service, decision.survivor, successor, until)
        ):
            applied.superseded.append(decision.survivor.id)
        return "changed" if applied.superseded else "new"

    async def _early_verdicts(self, memory_id: str) -> _Verdicts | None:
        """The verdicts on a pending memory, asked for without holding its scope's lock, as
        the locked step asks for them: by each later memory until one settles it, then on the
        older memories unless it was replaced. One at a time: this is background work, and
        must not crowd the LLM that adds and searches wait on. None when there is nothing to
        judge now (the locked step finds out why)."""
        service = self._service
        memory = await service.mem0.get(memory_id)
        if memory is None or memory.run_id is None or not memory.lifetime.current:
            return None
        close = await self._candidates(memory, memory.run_id)
        later, older = _around(close, memory)
        by_later: list[tuple[_State, folding.Verdicts]] = []
        for newer in _later_asked(memory, later):
            judged = _judged_by_later(memory, newer)
            answer = await folding.verdicts_on(service, newer.text, [judged])
            if isinstance(answer, PeerFailure):
                break
            by_later.append((_judged_state(judged, [newer]), answer))
            if folding.judged_changed(newer.text, judged, answer, service.settings):
                return _Verdicts(_judged_state(memory, older), None, by_later)
            if answer.get(memory.id) is Verdict.SAME:
                break
        on_older = await folding.verdicts_on(service, memory.text, older) if older else None
        return _Verdicts(
            _judged_state(memory, older),
            None if isinstance(on_older, PeerFailure) else on_older,
            by_later,
        )

    async def _judged(self, memory: Memory, namespace: str, early: _Verdicts | None) -> str | None:
        """Judge `memory` against the memories stored before it, as its add would have been,
        and record the outcome as of the time it was stored; `early` verdicts are used when
        they are about what mem0 holds now."""
        service = self._service
        if not memory.lifetime.current:
            return "new"  # folded into a later memory, which speaks for it
        close = await self._candidates(memory, namespace)
        later, older = _around(close, memory)
        outdated = await self._outdated(memory, namespace, later, early)
        if outdated == "restated" and older:
            await self._replaces_older(memory, older, later, early)
        if outdated is not None:
            return None if isinstance(outdated, PeerFailure) else outdated
        if not older:
            return "new"
        known = early.on(memory, older) if early is not None else None
        verdicts = await _or_asked(service, known, memory.text, older)
        if isinstance(verdicts, PeerFailure):
            return None
        decision = folding.decide(memory.text, older, verdicts, service.settings)
        at = memory.lifetime.valid_from or service.now()
        if decision.kind is None or decision.survivor is None:
            applied = folding.Applied(memory)
            await folding.supersede(service, decision, memory.id, at, applied)
            own = {**folding.superseding_metadata(decision)}
            echo = await folding.count_echo(service, decision, namespace)
            if (
                echo.memory_id is not None
                and decision.echoed is not None
                # linked the other way already, directly or through another wording
                and not await folding.restates_through(service, decision.echoed, memory.id)
            ):
                own[RESTATES] = echo.memory_id
                echoed = decision.echoed
                # Its own wordings (values reconciled before it, linked to it as a later
                # statement) go with it: left restating it, they would be wordings of a
                # wording, and a change named on one would not reach the fact's memory.
                handed = await folding.current_wordings(
                    service, memory.lifetime.wordings, {memory.id}
                )
                await folding.link_wordings(service, handed, echoed, listed=[memory.id])
            if own:
                await folding.mark(service, memory, own, "with what it replaces")
            overtaken = await _overtaken(service, memory.id, applied.later)
            return "changed" if applied.superseded or overtaken else "new"
        # The older memory keeps the fact (and its id and history); the pending one is folded
        # into it, so its id, which the agent was given, keeps answering.
        applied = await folding.apply(service, decision, memory.text, namespace, at)
        await self._fold(memory, applied.survivor.id, namespace, at)
        # The pending memory itself may be a later statement met there (restated while it
        # waited): folded into the survivor, it says the survivor's value, not a later one.
        later = [m for m in applied.later if m.id != memory.id]
        overtaken = await _overtaken(service, applied.survivor.id, later)
        restated = decision.kind == "same" and not applied.superseded and not overtaken
        return "restated" if restated else "changed"


async def _overtaken(service: MemoryService, memory_id: str, later: list[Memory]) -> bool:
    """Mark the memory (holding a value reconciled late) superseded by the newest of `later`,
    the fact's current memories that began to hold after it (met through a value it replaces),
    as of when that one began, with its wordings; whether it was."""
    if not later:
        return False
    newest = max(later, key=lambda m: m.lifetime.said_at or service.now())
    at = newest.lifetime.said_at or service.now()
    held = await service.mem0.get(memory_id)  # as marked meanwhile (revived, say)
    if held is None or not held.lifetime.current:
        return False
    # With its wordings, which say its value; not when it was said again after `newest`.
    return await folding.outdate(service, held, newest.id, at)


#: What a verdict depends on (`_judged_state`): each memory's id, text and metadata.
_State = list[tuple[str, str, object]]


async def _or_asked(
    service: MemoryService, known: folding.Verdicts | None, text: str, judged: list[Memory]
) -> folding.Verdicts | PeerFailure:
    """`known` (verdicts asked before the scope's lock, on what mem0 still holds), else the
    judge's verdicts on `judged` for `text`, asked now."""
    return known if known is not None else await folding.verdicts_on(service, text, judged)


@dataclass(frozen=True)
class _Verdicts:
    """Verdicts asked for a pending memory before its scope's lock was taken, each with what
    it judged (`_judged_state`): on the memories before it, and by each later memory asked
    (`_outdated`). Under the lock one is used only while mem0 still holds what it judged."""

    state: _State
    verdicts: folding.Verdicts | None
    later: list[tuple[_State, folding.Verdicts]]

    def on(self, memory: Memory, older: list[Memory]) -> folding.Verdicts | None:
        """The verdicts on `memory` against `older`, if they judged those."""
        return self.verdicts if self.state == _judged_state(memory, older) else None

    def by_later(self, judged: Memory, newer: Memory) -> folding.Verdicts | None:
        """The verdicts of `newer` on `judged`, if they were asked of those."""
        state = _judged_state(judged, [newer])
        return next((verdicts for asked, verdicts in self.later if asked == state), None)


def _later_asked(memory: Memory, later: list[Memory]) -> list[Memory]:
    """The later memories `memory` is judged against, its own fact's first (the most rare
    words in common): other facts' sentences of the same shape are often closer, and only
    the first few are asked."""
    shared = name_overlap(memory.text, [c.text for c in later])
    ranked = [c for _, c in sorted(zip(shared, later, strict=True), key=lambda p: -p[0])]
    return ranked[:LATER_ASKED]


def _judged_by_later(memory: Memory, newer: Memory) -> Memory:
    """`memory` as the later `newer` judges it: the search ran with `memory` as its query, so
    its similarity to `newer` is the same either way round, as the guards want it on the
    memory judged."""
    return replace(memory, similarity=newer.similarity_to_query)


def _judged_state(memory: Memory, older: list[Memory]) -> _State:
    """What a verdict on `memory` against `older` depends on: each one's id, text and metadata
    (its lifetime among them), in mem0's order."""
    return [(m.id, m.text, dict(m.metadata)) for m in (memory, *older)]


def _around(close: list[Memory], memory: Memory) -> tuple[list[Memory], list[Memory]]:
    """`close` split into the current memories said after `memory` (stored after it, or made
    current again after it by a change back) and the memories before it, as its add found
    them, less those restating it: values reconciled before it that were linked to it as a
    later statement of theirs say its value through it, and are no other memory for it to
    restate or replace."""
    later = [c for c in close if c.lifetime.current and not _held_before(c, memory)]
    older = [
        c
        for c in close
        if _stored_before(c, memory) and c not in later and c.lifetime.restates != memory.id
    ]
    return later, older


def _held_before(candidate: Memory, memory: Memory) -> bool:
    """Has `candidate` held its value since before `memory` was stated? Stored before it, and
    neither made current again (a change back) nor stated again (a restatement) after it."""
    if not _stored_before(candidate, memory):
        return False
    return said_by(candidate.lifetime.said_at, memory.lifetime.valid_from)


def _stored_before(candidate: Memory, memory: Memory) -> bool:
    """Was `candidate` created before `memory`? A pending memory is judged only against those,
    as its add would have been; ties (and missing times) count as before."""
    mine = parse_time(memory.created_at)
    theirs = parse_time(candidate.created_at)
    return mine is None or theirs is None or theirs <= mine

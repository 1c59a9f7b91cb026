"""memory_add: store a fact unless it is already there, and keep one current memory per fact.

The steps, each returning what it found: an exact duplicate of a current memory recorded
recently (no mem0 write); the closest stored memories of the scope, judged; the verdicts turned
into one current memory per fact (`_folding`: a restatement reinforces, a change is stored and
supersedes the older value, a change-back makes the older memory current again); else a new
memory. A fact stored without a verdict (judge down, slow, or a broken call) is marked pending
with the ranker, and the background reconciler judges it later.

All of it runs under the scope's lock, so two adds of one scope see each other: a restatement
arriving while another add of the same scope is being reconciled is judged against it.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from mem0_bridge._concurrency import both
from mem0_bridge._grpc import PeerFailure, skipped
from mem0_bridge._inputs import check_text, same_text
from mem0_bridge._judge import Verdict
from mem0_bridge._lifetime import fresh
from mem0_bridge._mem0 import MAX_RELATED, RELATED_KEY, Memory
from mem0_bridge._metrics import UNJUDGED_ADDS
from mem0_bridge._models import AddAction, AddResult

if TYPE_CHECKING:
    from mem0_bridge._service import MemoryService
from mem0_bridge._folding import (
    Applied,
    Decision,
    Verdicts,
    apply,
    candidates,
    count_echo,
    decide,
    mark,
    supersede,
    verdicts_on,
)


@dataclass
class _Fact:
    text: str
    namespace: str
    rscope: str
    notes: list[str] = field(default_factory=list)
    #: Stored memories close enough to this fact to be versions of it (see `related`).
    related: list[str] = field(default_factory=list)
    #: Whether the ranker answered the duplicate check: then the record of what this add
    #: stores is left for after the answer (`_stored`).
    ranker_answered: bool = False

    def result(self, action: AddAction, ids: list[str], **extra: object) -> AddResult:
        return AddResult.model_validate(
            {
                "action": action,
                "memory_ids": ids,
                "namespace": self.namespace,
                "notes": self.notes,
                **extra,
            }
        )


async def add(service: MemoryService, text: str, namespace: str) -> AddResult:
    """Store `text` in `namespace` (already resolved): duplicate, reinforce, update, else add."""
    fact = _Fact(check_text(text), namespace, service.rscope(namespace))
    async with service.scope_locks.hold(fact.rscope):
        # The dedupe record and the close memories are asked for at once: the search is
        # wasted only on an exact repeat, and every other add saves a round trip.
        found, close = await both(
            functools.partial(service.ranker.check_duplicate, fact.rscope, fact.text),
            functools.partial(candidates, service, fact.text, fact.namespace),
        )
        fact.ranker_answered = not isinstance(found, PeerFailure)
        duplicate = await _recent_duplicate(service, fact, found)
        if duplicate is not None:
            return fact.result("duplicate", [duplicate.id], memories=[duplicate.text])
        return await _reconciled_or_stored(service, fact, close)


async def _recent_duplicate(
    service: MemoryService, fact: _Fact, found: str | PeerFailure | None
) -> Memory | None:
    """The memory the same text became within the dedupe window (`found`, the ranker's
    record), if it still holds that text.

    The ranker's record only says what a memory held when it was recorded; the memory may have
    been updated or deleted since, so mem0 is asked what it holds now before answering
    `duplicate` (a record that no longer holds is replaced when this add stores the text).
    """
    if isinstance(found, PeerFailure):
        fact.notes += skipped(found, "the add was not checked for exact duplicates")
        return None
    if found is None:
        return None
    memory = await service.mem0.get(found)
    if (
        memory is None
        or memory.run_id != fact.namespace
        or not same_text(memory.text, fact.text)
        or not memory.lifetime.current  # said again after a change: a change-back
    ):
        return None
    return memory


def related(service: MemoryService, close: Sequence[Memory]) -> list[str]:
    """The candidates a new memory is stored as related to: close enough (semantic similarity
    at least `MEM0_RELATED_SIMILARITY_FLOOR`) to be another version of the same fact, so that
    the ranker may let the newer outrank the older by recency, and only them."""
    floor = service.settings.related_similarity_floor
    return [c.id for c in close if c.similarity_to_query >= floor][:MAX_RELATED]


async def _reconciled_or_stored(
    service: MemoryService, fact: _Fact, close: list[Memory]
) -> AddResult:
    fact.related = related(service, close)
    exact = next((c for c in close if same_text(c.text, fact.text)), None)
    others = [c for c in close if c is not exact]
    verdicts = Verdicts()
    if others:
        # A slow judge must not hold the add: past the budget the fact is stored and queued,
        # and the reconciler judges it as this add would have (it never deletes a fact).
        budget = service.settings.verdict_budget_ms / 1000
        judged = await verdicts_on(service, fact.text, others, budget=budget)
        if isinstance(judged, PeerFailure):
            # Stored and queued even when an exact copy exists: one of the unjudged memories may
            # hold a newer value of this fact (a change made while the judge was away), and
            # only a later verdict can tell which value is the latest.
            if not judged.off:
                fact.notes.append(
                    judged.note(
                        "the add was stored unreconciled; it is reconciled when the judge answers"
                    )
                )
                return await _stored(
                    service, fact, Decision(None), pending_reason=judged.note("no verdict")
                )
        else:
            verdicts = judged
    if exact is not None:
        # Restated after the dedupe window: a reconfirmation, which is what mentions count.
        await service.ranker.record_stored(fact.rscope, fact.text, exact.id)
        verdicts = replace(verdicts, of={**verdicts.of, exact.id: Verdict.SAME})
        # The very text, whatever score mem0 gave it (a keyword hit rescales every score).
        close = [replace(exact, score=1.0, similarity=1.0), *others]
    decision = decide(fact.text, close, verdicts, service.settings)
    if decision.kind is None or decision.survivor is None:
        return await _stored(service, fact, decision, pending_reason=None)
    applied = await apply(service, decision, fact.text, fact.namespace, service.now())
    fact.notes.extend(applied.notes)
    survivor = applied.survivor
    if decision.kind == "revive":
        fact.notes.append(f"{survivor.id} holds this value again: it is current once more")
    replaced = next((m.text for m in decision.superseded if m.id in applied.superseded), None)
    return fact.result(
        "updated" if decision.kind == "revive" else "reinforced",
        [survivor.id],
        memories=[fact.text if applied.rewritten else survivor.text],
        previous_text=survivor.text if applied.rewritten else replaced,
        mentions=applied.mentions,
        folded_ids=applied.folded,
        superseded_ids=applied.superseded,
    )


async def _record(
    service: MemoryService, fact: _Fact, added: list[tuple[str, str]]
) -> PeerFailure | None:
    """Record what mem0 confirmed it stored: the input text (what a repeat call sends) and each
    stored memory's own text, so that either repeated is seen as a duplicate."""
    failure = await service.ranker.record_stored(fact.rscope, fact.text, added[0][0])
    for memory_id, memory in added:
        if memory and not same_text(memory, fact.text):
            await service.ranker.record_stored(fact.rscope, memory, memory_id)
    return failure


async def _queue(
    service: MemoryService, fact: _Fact, added: list[tuple[str, str]], reason: str
) -> PeerFailure | None:
    """Queue the stored memories for the reconciler, stored without the verdict they needed
    (`reason`: why); the first failure, if any."""
    UNJUDGED_ADDS.inc()
    for memory_id, _ in added:
        marked = await service.ranker.mark_pending(fact.rscope, memory_id, reason)
        if marked is not None:
            return marked
    return None


async def _stored(
    service: MemoryService, fact: _Fact, decision: Decision, *, pending_reason: str | None
) -> AddResult:
    """Add through mem0 as a new current memory, record what it stored with the ranker, mark
    the memories it replaces superseded, and mark it pending when it was stored without the
    verdict it needed."""
    at = service.now()
    echo = decision.echoed
    stored = await service.mem0.add(
        fact.text,
        user_id=service.user_id,
        run_id=fact.namespace,
        infer=service.settings.infer,
        metadata={
            "source": "mem0-bridge",
            **({RELATED_KEY: fact.related} if fact.related else {}),
            **fresh(
                at,
                supersedes=[m.id for m in decision.superseded],
                restates=None if echo is None else echo.id,
                unjudged=pending_reason is not None,
            ),
        },
    )
    added = [(memory_id, memory) for memory_id, memory, event in stored if event == "ADD"]
    if not added:
        return fact.result("unchanged", [], memories=[])
    recording = functools.partial(_record, service, fact, added)
    failure = marked = None
    if pending_reason is None and fact.ranker_answered:
        # The agent's answer does not wait for the record: the scope's next writer does
        # (`ScopeLocks.defer`). When the ranker failed the duplicate check, the record is made
        # here, so that the answer says whether it failed too.
        service.scope_locks.defer(fact.rscope, recording)
    elif pending_reason is None:
        failure = await recording()
    else:
        # Recorded and queued at once, both before the scope's lease is given back.
        queuing = functools.partial(_queue, service, fact, added, pending_reason)
        failure, marked = await both(recording, queuing)
    fact.notes += skipped(failure, "the add was not recorded for dedupe")
    fact.notes += skipped(marked, "the add could not be queued for reconciling")
    applied = Applied(Memory(added[0][0], fact.text, fact.namespace, service.user_id, None, None))
    await supersede(service, decision, added[0][0], at, applied)
    fact.notes.extend(applied.notes)
    echoed = await count_echo(service, decision, fact.namespace)
    fact.notes.extend(echoed.notes)
    if echo is not None:
        await mark(service, echo, echo.lifetime.worded(added[0][0]), "with its new wording")
    return fact.result(
        "updated" if applied.superseded else "added",
        [i for i, _ in added],
        memories=[m or fact.text for _, m in added],
        previous_text=decision.superseded[0].text if applied.superseded else None,
        superseded_ids=applied.superseded,
        restates=echoed.memory_id,
    )

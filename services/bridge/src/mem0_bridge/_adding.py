"""memory_add: store a fact unless it is already there, and keep one current memory per fact.

The steps, each returning what it found: an exact duplicate of a current memory recorded
recently (no mem0 write); the closest stored memories of the scope, judged; the verdicts turned
into one current memory per fact (`_reconcile`: a restatement reinforces, a change is stored and
supersedes the older value, a change-back makes the older memory current again); else a new
memory. A fact stored without a verdict (judge down, slow, or a broken call) is marked pending
with the ranker, and the background reconciler judges it later.

All of it runs under the scope's lock, so two adds of one scope see each other: a restatement
arriving while another add of the same scope is being reconciled is judged against it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from mem0_bridge._core import Core
from mem0_bridge._grpc import PeerFailure, skipped
from mem0_bridge._inputs import check_text, same_text
from mem0_bridge._judge import Verdict
from mem0_bridge._lifetime import fresh
from mem0_bridge._mem0 import MAX_RELATED, RELATED_KEY, Memory
from mem0_bridge._metrics import UNJUDGED_ADDS
from mem0_bridge._models import AddAction, AddResult
from mem0_bridge._reconcile import Applied, Decision, apply, count_echo, decide, supersede
from mem0mcp.contract import MAX_COMPARE_CANDIDATES


@dataclass
class _Fact:
    text: str
    namespace: str
    rscope: str
    notes: list[str] = field(default_factory=list)
    #: Stored memories close enough to this fact to be versions of it (see `related`).
    related: list[str] = field(default_factory=list)

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


async def add(core: Core, text: str, namespace: str) -> AddResult:
    """Store `text` in `namespace` (already resolved): duplicate, reinforce, update, else add."""
    fact = _Fact(check_text(text), namespace, core.rscope(namespace))
    async with core.scope_locks.hold(fact.rscope):
        duplicate = await _recent_duplicate(core, fact)
        if duplicate is not None:
            return fact.result("duplicate", [duplicate.id], memories=[duplicate.text])
        return await _reconciled_or_stored(core, fact)


async def _recent_duplicate(core: Core, fact: _Fact) -> Memory | None:
    """The memory the same text became within the dedupe window, if it still holds that text.

    The ranker's record only says what a memory held when it was recorded; the memory may have
    been updated or deleted since, so mem0 is asked what it holds now before answering
    `duplicate` (a record that no longer holds is replaced when this add stores the text).
    """
    found = await core.ranker.check_duplicate(fact.rscope, fact.text)
    if isinstance(found, PeerFailure):
        fact.notes += skipped(found, "the add was not checked for exact duplicates")
        return None
    if found is None:
        return None
    memory = await core.mem0.get(found)
    if (
        memory is None
        or memory.run_id != fact.namespace
        or not same_text(memory.text, fact.text)
        or not memory.lifetime.current  # said again after a change: a change-back
    ):
        return None
    return memory


async def candidates(core: Core, text: str, namespace: str) -> list[Memory]:
    """The memories of `namespace` close enough to `text` to be shown to the judge; folded
    memories are left out (the memory they were folded into speaks for them)."""
    found = await core.mem0.search(
        text,
        user_id=core.user_id,
        run_id=namespace,
        top_k=min(core.settings.judge_max_candidates, MAX_COMPARE_CANDIDATES),
    )
    floor = core.settings.reinforcement_prefilter_threshold
    return [c for c in found if (c.score or 0.0) >= floor and c.lifetime.folded_into is None]


def related(core: Core, close: Sequence[Memory]) -> list[str]:
    """The candidates a new memory is stored as related to: close enough (semantic similarity
    at least `MEM0_RELATED_SIMILARITY_FLOOR`) to be another version of the same fact, so that
    the ranker may let the newer outrank the older by recency, and only them."""
    floor = core.settings.related_similarity_floor
    return [c.id for c in close if c.similarity_to_query >= floor][:MAX_RELATED]


async def _reconciled_or_stored(core: Core, fact: _Fact) -> AddResult:
    close = await candidates(core, fact.text, fact.namespace)
    fact.related = related(core, close)
    exact = next((c for c in close if same_text(c.text, fact.text)), None)
    others = [c for c in close if c is not exact]
    verdicts: dict[str, Verdict] = {}
    if others:
        judged = await verdicts_on(core, fact.text, others)
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
                    core, fact, Decision(None), pending_reason=judged.note("no verdict")
                )
        else:
            verdicts = judged
    if exact is not None:
        # Restated after the dedupe window: a reconfirmation, which is what mentions count.
        await core.ranker.record_stored(fact.rscope, fact.text, exact.id)
        verdicts[exact.id] = Verdict.SAME
        # The very text, whatever score mem0 gave it (a keyword hit rescales every score).
        close = [replace(exact, score=1.0, similarity=1.0), *others]
    decision = decide(fact.text, close, verdicts, core.settings)
    if decision.kind is None or decision.survivor is None:
        return await _stored(core, fact, decision, pending_reason=None)
    applied = await apply(core, decision, fact.text, fact.namespace, core.now())
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


async def verdicts_on(
    core: Core, text: str, close: list[Memory]
) -> dict[str, Verdict] | PeerFailure:
    """The judge's verdicts on `close`, or why there are none (off, no LLM, down, a bug)."""
    unusable = await core.judge.usable()
    if unusable is not None:
        return unusable
    return await core.judge.compare(text, [(c.id, c.text) for c in close])


async def _stored(
    core: Core, fact: _Fact, decision: Decision, *, pending_reason: str | None
) -> AddResult:
    """Add through mem0 as a new current memory, record what it stored with the ranker, mark
    the memories it replaces superseded, and mark it pending when it was stored without the
    verdict it needed."""
    at = core.now()
    echo = decision.echoed
    stored = await core.mem0.add(
        fact.text,
        user_id=core.user_id,
        run_id=fact.namespace,
        infer=core.settings.infer,
        metadata={
            "source": "mem0-bridge",
            **({RELATED_KEY: fact.related} if fact.related else {}),
            **fresh(
                at,
                supersedes=[m.id for m in decision.superseded],
                restates=None if echo is None else echo.id,
            ),
        },
    )
    added = [(memory_id, memory) for memory_id, memory, event in stored if event == "ADD"]
    if not added:
        return fact.result("unchanged", [], memories=[])
    # Recorded only now that mem0 confirmed the add: the input text (what a repeat call sends)
    # and each stored memory's own text, so either repeated is seen as a duplicate.
    failure = await core.ranker.record_stored(fact.rscope, fact.text, added[0][0])
    for memory_id, memory in added:
        if memory and not same_text(memory, fact.text):
            await core.ranker.record_stored(fact.rscope, memory, memory_id)
    fact.notes += skipped(failure, "the add was not recorded for dedupe")
    if pending_reason is not None:
        UNJUDGED_ADDS.inc()
        for memory_id, _ in added:
            marked = await core.ranker.mark_pending(fact.rscope, memory_id, pending_reason)
            if marked is not None:
                fact.notes += skipped(marked, "the add could not be queued for reconciling")
                break
    applied = Applied(Memory(added[0][0], fact.text, fact.namespace, core.user_id, None, None))
    await supersede(core, decision.superseded, added[0][0], at, applied)
    fact.notes.extend(applied.notes)
    echoed = await count_echo(core, decision, fact.namespace)
    fact.notes.extend(echoed.notes)
    return fact.result(
        "updated" if applied.superseded else "added",
        [i for i, _ in added],
        memories=[m or fact.text for _, m in added],
        previous_text=decision.superseded[0].text if applied.superseded else None,
        superseded_ids=applied.superseded,
        restates=echoed.memory_id,
    )

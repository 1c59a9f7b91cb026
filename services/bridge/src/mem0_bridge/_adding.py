"""memory_add: store a fact unless it is already there.

The steps, each returning what it found: an exact duplicate recorded recently (no mem0 write);
the closest stored memories of the scope, judged; the verdicts folded into one memory per fact
(`_reconcile`); else a new memory. A fact stored without a verdict (judge down, slow, or a
broken call) is marked pending with the ranker, and the background reconciler judges it later.

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
from mem0_bridge._mem0 import MAX_RELATED, RELATED_KEY, Memory
from mem0_bridge._metrics import UNJUDGED_ADDS
from mem0_bridge._models import AddAction, AddResult
from mem0_bridge._reconcile import apply, count_echo, decide
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
    if memory is None or memory.run_id != fact.namespace or not same_text(memory.text, fact.text):
        return None
    return memory


async def candidates(core: Core, text: str, namespace: str) -> list[Memory]:
    """The memories of `namespace` close enough to `text` to be shown to the judge."""
    found = await core.mem0.search(
        text,
        user_id=core.user_id,
        run_id=namespace,
        top_k=min(core.settings.judge_max_candidates, MAX_COMPARE_CANDIDATES),
    )
    floor = core.settings.reinforcement_prefilter_threshold
    return [c for c in found if (c.score or 0.0) >= floor]


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
                return await _stored(core, fact, pending_reason=judged.note("no verdict"))
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
        stored = await _stored(core, fact, pending_reason=None)
        if stored.action == "added":
            echo = await count_echo(core, decision, fact.namespace)
            stored.restates = echo.memory_id
            stored.notes.extend(echo.notes)
        return stored
    folded = await apply(core, decision, fact.text, fact.namespace)
    fact.notes.extend(folded.notes)
    survivor = folded.survivor
    if decision.kind == "supersedes":
        return fact.result(
            "updated",
            [survivor.id],
            memories=[fact.text],
            previous_text=survivor.text,
            mentions=folded.mentions,
            folded_ids=folded.removed,
        )
    return fact.result(
        "reinforced",
        [survivor.id],
        memories=[fact.text if folded.rewritten else survivor.text],
        previous_text=survivor.text if folded.rewritten else None,
        mentions=folded.mentions,
        folded_ids=folded.removed,
    )


async def verdicts_on(
    core: Core, text: str, close: list[Memory]
) -> dict[str, Verdict] | PeerFailure:
    """The judge's verdicts on `close`, or why there are none (off, no LLM, down, a bug)."""
    unusable = await core.judge.usable()
    if unusable is not None:
        return unusable
    return await core.judge.compare(text, [(c.id, c.text) for c in close])


async def _stored(core: Core, fact: _Fact, *, pending_reason: str | None) -> AddResult:
    """Add through mem0, record what it stored with the ranker, and mark it pending when it
    was stored without the verdict it needed."""
    stored = await core.mem0.add(
        fact.text,
        user_id=core.user_id,
        run_id=fact.namespace,
        infer=core.settings.infer,
        metadata={"source": "mem0-bridge", **({RELATED_KEY: fact.related} if fact.related else {})},
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
    fact.notes += skipped(failure, "the add was not recorded for exact dedupe")
    if pending_reason is not None:
        UNJUDGED_ADDS.inc()
        for memory_id, _ in added:
            marked = await core.ranker.mark_pending(fact.rscope, memory_id, pending_reason)
            if marked is not None:
                fact.notes += skipped(marked, "the add could not be queued for reconciling")
                break
    return fact.result("added", [i for i, _ in added], memories=[m or fact.text for _, m in added])

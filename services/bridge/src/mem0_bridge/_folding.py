"""Reconciling a fact with the close memories of its scope, on add and in the background: the
candidates, the judge's verdicts on them, and the verdicts folded into one memory per fact.

Every candidate the judge names is folded: a restatement keeps the closest SAME memory and
removes the other copies (SAME and SUPERSEDES alike: an older value of a restated fact is
stale); a change rewrites the closest SUPERSEDES memory in place (same id, history kept) and
removes the other old values. Removed memories are deleted through mem0 (their history records
it) and their mentions are carried over to the survivor.

A verdict is acted on only where the pair is plausibly one fact, since a wrong SAME or
SUPERSEDES destroys a fact while a wrong UNRELATED only leaves a duplicate that ranking copes
with: their semantic similarity (mem0's cosine part of the score) reaches
`MEM0_VERDICT_SIMILARITY_FLOOR`, or they use the same words apart from their values
(`_wording`). A SAME kept apart counts as a mention of the memory it echoes (`Decision.echoed`)
while the pair is still close (`MEM0_ECHO_SIMILARITY_FLOOR`) and the new statement names no
value or name the memory lacks (else it may be a change taken for a restatement).

A change rewrites the memory to the new statement; a restatement keeps the stored words unless
the new statement names a value or name they lack (`_wording.adds_details`), so nothing said is
dropped. mem0's history keeps every earlier text.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, NamedTuple

from mem0_bridge._grpc import PeerFailure, skipped
from mem0_bridge._inputs import same_text
from mem0_bridge._judge import Verdict
from mem0_bridge._mem0 import Mem0Error, Memory
from mem0_bridge._settings import BridgeSettings
from mem0_bridge._wording import adds_details, differs_only_in_values
from mem0mcp.contract import MAX_COMPARE_CANDIDATES

if TYPE_CHECKING:
    from mem0_bridge._service import MemoryService

logger = logging.getLogger(__name__)


async def candidates(service: MemoryService, text: str, namespace: str) -> list[Memory]:
    """The memories of `namespace` close enough to `text` to be shown to the judge."""
    found = await service.mem0.search(
        text,
        user_id=service.user_id,
        run_id=namespace,
        top_k=min(service.settings.judge_max_candidates, MAX_COMPARE_CANDIDATES),
    )
    floor = service.settings.reinforcement_prefilter_threshold
    return [c for c in found if (c.score or 0.0) >= floor]


async def verdicts_on(
    service: MemoryService, text: str, close: list[Memory]
) -> dict[str, Verdict] | PeerFailure:
    """The judge's verdicts on `close`, or why there are none (off, no LLM, down, a bug)."""
    unusable = await service.judge.usable()
    if unusable is not None:
        return unusable
    return await service.judge.compare(text, [(c.id, c.text) for c in close])


@dataclass(frozen=True)
class Decision:
    """What the verdicts mean: keep `survivor` (reinforced, or rewritten to the new text) and
    remove `removed`; `kind` None means the fact is stored as new, and `echoed` is then the
    memory it was judged to restate but kept apart from (a mention of it, see the module doc)."""

    kind: Literal["same", "supersedes"] | None
    survivor: Memory | None = None
    removed: tuple[Memory, ...] = ()
    echoed: Memory | None = None


def plausibly_one_fact(text: str, candidate: Memory, floor: float) -> bool:
    """May a SAME or SUPERSEDES verdict on `candidate` for the new `text` be acted on?"""
    return candidate.similarity_to_query >= floor or differs_only_in_values(text, candidate.text)


def decide(
    text: str,
    candidates: Sequence[Memory],
    verdicts: Mapping[str, Verdict],
    settings: BridgeSettings,
) -> Decision:
    """The decision for verdicts on `candidates` (closest first, as mem0 ranked them) about the
    new fact `text`; a verdict on a pair that is not plausibly one fact is not acted on, and a
    SAME kept apart is an echo only from the echo floor up."""
    floor = settings.verdict_similarity_floor
    plausible = [c for c in candidates if plausibly_one_fact(text, c, floor)]
    same = [c for c in plausible if verdicts.get(c.id) is Verdict.SAME]
    older = [c for c in plausible if verdicts.get(c.id) is Verdict.SUPERSEDES]
    if same:
        return Decision("same", same[0], tuple(same[1:] + older))
    if older:
        return Decision("supersedes", older[0], tuple(older[1:]))
    echoed = next(
        (
            c
            for c in candidates
            if verdicts.get(c.id) is Verdict.SAME
            and c.similarity_to_query >= settings.echo_similarity_floor
            and not adds_details(text, c.text)
        ),
        None,
    )
    return Decision(None, echoed=echoed)


@dataclass
class Folded:
    """What applying a decision did."""

    survivor: Memory
    #: Whether the survivor now says the new text (a change, or a restatement with new details).
    rewritten: bool = False
    #: Ids actually removed (a copy someone else deleted first is not listed).
    removed: list[str] = field(default_factory=list)
    mentions: int | None = None
    notes: list[str] = field(default_factory=list)


async def apply(service: MemoryService, decision: Decision, text: str, namespace: str) -> Folded:
    """Carry out a same/supersedes decision for the fact `text` in `namespace`.

    The caller holds the namespace's scope lock. A mem0 failure while rewriting the survivor
    propagates (nothing else was changed yet); one while removing a copy leaves that copy in
    place, with a note, and the rest done.
    """
    survivor = decision.survivor
    if survivor is None or decision.kind is None:
        raise ValueError("apply() needs a same or supersedes decision")
    rscope = service.rscope(namespace)
    folded = Folded(survivor)
    takes_new_text = decision.kind == "supersedes" or adds_details(text, survivor.text)
    if takes_new_text and not same_text(survivor.text, text):
        await service.mem0.update(survivor.id, text)
        folded.rewritten = True
        failure = await service.ranker.record_stored(rscope, text, survivor.id, replaces=True)
        folded.notes += skipped(failure, "the new text was not recorded for dedupe")
    for copy in decision.removed:
        try:
            await service.mem0.delete(copy.id)
        except Mem0Error as exc:
            if exc.status != 404:  # 404: already gone, which is what removing wanted
                logger.warning("could not remove copy %s of %s: %s", copy.id, survivor.id, exc)
                folded.notes.append(f"copy {copy.id} could not be removed: {exc}")
                continue
        folded.removed.append(copy.id)
    if folded.removed:
        carried = await service.ranker.fold(rscope, survivor.id, folded.removed)
        folded.notes += skipped(carried, "mentions of the removed copies were lost")
        if not isinstance(carried, PeerFailure):
            folded.mentions = carried
    if decision.kind == "same":
        reinforced = await service.ranker.reinforce(rscope, survivor.id)
        folded.notes += skipped(reinforced, "the mention was not counted")
        if not isinstance(reinforced, PeerFailure):
            folded.mentions = reinforced.mentions
            if not reinforced.counted:
                folded.notes.append("mention already counted recently (debounced)")
    return folded


class Echo(NamedTuple):
    """What counting an echo did: the memory it counted as restated (None when there was none
    or the ranker could not be reached), and the notes to pass on."""

    memory_id: str | None
    notes: list[str]


async def count_echo(service: MemoryService, decision: Decision, namespace: str) -> Echo:
    """Count a kept-apart restatement as a mention of the memory it echoes. The echoed memory
    is left as it is: only its mentions and freshness change."""
    echoed = decision.echoed
    if echoed is None:
        return Echo(None, [])
    reinforced = await service.ranker.reinforce(service.rscope(namespace), echoed.id)
    if isinstance(reinforced, PeerFailure):
        return Echo(None, skipped(reinforced, "the mention of the restated memory was not counted"))
    counted = (
        "counted as a mention of it" if reinforced.counted else "its mention was counted lately"
    )
    return Echo(
        echoed.id,
        [
            f"stored as its own memory: the judge took it for a restatement of {echoed.id}, too "
            f"unlike it to merge; {counted}"
        ],
    )

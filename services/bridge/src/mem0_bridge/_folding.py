"""Reconciling a fact with the close memories of its scope, on add and in the background: the
candidates, the judge's verdicts on them, and the verdicts turned into one current memory per
fact.

Nothing a verdict does destroys a fact. A change (SUPERSEDES) is stored as its own memory and
the memories holding the older value are marked superseded by it (`_lifetime`): search ranks
them below it, `as_of` and history still show them, and a wrong verdict is undone by stating
the fact again or by `memory_reinstate`. A restatement (SAME) reinforces the memory it restates;
other current copies of that value are folded into it (marked, never deleted, so their ids keep
answering). A restatement of a value that was superseded (a change-back: A, B, A again) makes
that older memory current again and supersedes the value it had been replaced by.

Guards stay only where a wrong verdict would hide a fact from search. A SAME folds or revives
only when the pair is plausibly one fact: semantic similarity (mem0's cosine part of the score)
at least `verdict_similarity_floor`, or the same words apart from their values (`_wording`).
A SAME further apart is kept as its own memory, a wording of the one it restates (`restates`,
shown as one hit per fact) when it names no value or name the memory lacks, and counts as a
mention of it from `echo_similarity_floor` up. A SUPERSEDES demotes one memory per add, the
closest one the judge names (with copies of its value, and other current values it names that
it calls one fact with that one): a statement changes one fact, and a judge wrong on a share of
pairs would otherwise demote other facts of the same subject. Under
`supersede_similarity_floor` (down to `confirmed_supersede_floor`) a SUPERSEDES counts only when
the judge gives it again asked the other way round (`verdicts_on`): changes are often said in
words far from the old value's, and two independent wrong answers on one look-alike pair are
rare. A change replaces the wordings of the memory it demotes too, except those the judge, asked
about them, calls another fact: a wording link is a SAME that may be wrong (`_apart`).

A restatement keeps the stored words (they matched the queries so far) unless the new statement
names a value or name the stored one lacks (`_wording.adds_details`): then the memory takes the
new words, so a change the judge took for SAME drops nothing; mem0's history keeps every text.
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import AsyncIterator, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Literal

import anyio
import grpc

from mem0_bridge._concurrency import gather
from mem0_bridge._grpc import PeerFailure, skipped
from mem0_bridge._inputs import same_text
from mem0_bridge._judge import Verdict
from mem0_bridge._lifetime import RESTATES, SUPERSEDES, WORDINGS, said_by
from mem0_bridge._mem0 import Mem0Error, Memory
from mem0_bridge._reads import Reads
from mem0_bridge._settings import BridgeSettings
from mem0_bridge._wording import (
    adds_details,
    details,
    differs_only_in_values,
    name_overlap,
    same_values,
)
from mem0mcp.contract import MAX_COMPARE_CANDIDATES, normalise_text

if TYPE_CHECKING:
    from mem0_bridge._service import MemoryService

logger = logging.getLogger(__name__)


#: Candidates fetched per one shown to the judge, so that a fact's current memory is found
#: below its own older values and other facts' sentences of the same shape.
CANDIDATE_OVERFETCH = 8


async def candidates(
    service: MemoryService,
    text: str,
    namespace: str,
    *,
    leaving_out: str | None = None,
    overfetch: int = CANDIDATE_OVERFETCH,
) -> list[Memory]:
    """The memories of `namespace` close enough to `text` to be shown to the judge, at most
    `judge_max_candidates`, closest first, chosen by `_precedence` among `overfetch` times as
    many of mem0's nearest (a fact's older values, and similar sentences of other facts, must
    not crowd its current memory out); folded memories are left out (the memory they were
    folded into speaks for them), and so is `leaving_out` (a stored statement judged later,
    which would take the first place from the others)."""
    shown = min(service.settings.judge_max_candidates, MAX_COMPARE_CANDIDATES)
    found = await service.mem0.search(
        text, user_id=service.user_id, run_id=namespace, top_k=shown * overfetch
    )
    floor = service.settings.reinforcement_prefilter_threshold
    close = [
        c
        for c in found
        if c.similarity_to_query >= floor and c.lifetime.folded_into is None and c.id != leaving_out
    ]
    heads = _heads(found)
    overlap = name_overlap(text, [c.text for c in found], [heads[c.id] for c in found])
    rank = _fused_ranks(found, overlap, heads)
    namesakes = _namesakes(found, overlap, heads)
    ordered = sorted(close, key=lambda c: _precedence(text, c, rank, heads, namesakes))
    ordered = _values_in_turn(text, ordered, heads, namesakes)
    chosen = {c.id for c in _first_texts(ordered, shown)}
    return await _reaching(service, [c for c in close if c.id in chosen], heads, found)


def _values_in_turn(
    text: str, ordered: Sequence[Memory], heads: Mapping[str, str], namesakes: Container[str]
) -> list[Memory]:
    """`ordered` with the current memories of the fact the statement names (`_namesakes`)
    taken one value at a time: each value they hold (`details`) gets a place before any gets
    a second. A fact said again and again while the judge was away holds several current
    memories of one value; they must not take every place from a current memory of another
    value, which a change has to replace (copies of the statement's value are reconciled)."""
    named = [
        c
        for c in ordered
        if heads[c.id] == c.id and c.id in namesakes and not same_text(c.text, text)
    ]
    if len(named) < 2:
        return list(ordered)
    turns: dict[frozenset[str], int] = {}
    turn: dict[str, int] = {}
    for memory in named:
        value = details(memory.text)
        turn[memory.id] = turns[value] = turns.get(value, -1) + 1
    in_turn = iter(sorted(named, key=lambda c: turn[c.id]))  # stable: rank within a turn
    return [next(in_turn) if c.id in turn else c for c in ordered]


def _first_texts(ordered: Sequence[Memory], places: int) -> list[Memory]:
    """The memories of `ordered` holding its first `places` texts, with every copy of them:
    the judge is shown a text once (`JudgeClient.compare`), so copies of one sentence (a fact
    said again in the same words while the judge was away) take one place between them and
    leave the others to the fact's other memories."""
    texts: set[str] = set()
    kept: list[Memory] = []
    for memory in ordered:
        key = normalise_text(memory.text)
        if key not in texts and len(texts) < places:
            texts.add(key)
        if key in texts:
            kept.append(memory)
    return kept


#: Links of older candidates' chains read at once before they are followed (the walk goes on
#: one read at a time past them).
CHAIN_PREFETCH_HOPS = 8


async def _reaching(
    service: MemoryService,
    chosen: Sequence[Memory],
    heads: Mapping[str, str],
    found: Sequence[Memory],
) -> list[Memory]:
    """`chosen`, each older value whose fact's current memory is not among them (not fetched,
    or fetched too far from the statement to be a candidate) followed by that current memory,
    scored as the older value was. The judge must see what the fact holds now: a restatement of
    the value it holds, found only as an older value too far from the statement to revive,
    would be stored beside it. Chains are followed from their last `found` memory, and each
    link read once."""
    by_id = {c.id: c for c in found}
    shown = {c.id for c in chosen}
    # Per older value, the last found link of its chain, walked on from there unless the
    # memory that link stands for is shown anyway.
    walked = {
        memory.id: end
        for memory in chosen
        if not memory.lifetime.current
        and ((end := by_id[heads[memory.id]]) is memory or end.id not in shown)
    }
    reads = Reads(service.mem0, found)
    await reads.chains(
        [onward for end in walked.values() if (onward := end.lifetime.onward) is not None],
        hops=CHAIN_PREFETCH_HOPS,
        stop=lambda m: m.run_id != chosen[0].run_id,
    )
    reaching: list[Memory] = []
    room = MAX_COMPARE_CANDIDATES - len({normalise_text(c.text) for c in chosen})
    for memory in chosen:
        reaching.append(memory)
        head = walked.get(memory.id)
        if head is None or room <= 0:
            continue
        successor = head if head.lifetime.current else await current_successor(service, head, reads)
        if successor is None or successor.id in shown:
            continue
        shown.add(successor.id)
        room -= 1
        reaching.append(
            replace(
                successor,
                score=memory.score,
                similarity=memory.similarity,
                raw_score=memory.raw_score,
            )
        )
    return reaching


def _heads(found: Sequence[Memory]) -> dict[str, str]:
    """For each found memory, the found memory that stands for its fact's current value: the
    last one reached by following what replaced it (`superseded_by`, `folded_into`) among the
    found. That is the current memory when it was found too; else the newest older value found,
    whose successors ranked too low to be fetched (a fact's current memory worded apart from a
    change, under other facts' sentences shaped like it)."""
    by_id = {c.id: c for c in found}
    heads: dict[str, str] = {}
    for memory in found:
        head, seen = memory, {memory.id}
        while (onward := head.lifetime.onward) in by_id:
            if onward in seen:
                break  # a ring of links (never made on purpose): stop where it closes
            seen.add(onward)
            head = by_id[onward]
        heads[memory.id] = head.id
    return heads


#: Reciprocal-rank fusion's damping: how little the very first places of either order outweigh
#: the next ones.
FUSION_DAMPING = 5


def _fused_ranks(
    found: Sequence[Memory], overlap: Sequence[float], heads: Mapping[str, str]
) -> dict[str, float]:
    """Each found memory's place (lower first) in two orders fused by reciprocal rank: mem0's,
    and by the rare words it shares with the statement (`overlap`, from `name_overlap`), so
    that other facts' sentences of the same shape do not crowd out the fact named. In each
    order the memory that stands for a fact's current value (`_heads`) takes the best place of
    its older values (the statement most likely changes the fact whose past it matches)."""
    by_names = sorted(range(len(found)), key=lambda i: -overlap[i])
    orders = (
        {c.id: i for i, c in enumerate(found)},
        {found[i].id: place for place, i in enumerate(by_names)},
    )
    for order in orders:
        for memory_id, head in heads.items():
            order[head] = min(order[head], order[memory_id])
    return {c.id: -sum(1 / (FUSION_DAMPING + order[c.id]) for order in orders) for c in found}


#: The share of the best overlap of rare words (`name_overlap`) a memory must reach to be taken
#: for a memory of the fact the statement names (`_namesakes`).
NAMESAKE_SHARE = 0.5


def _namesakes(
    found: Sequence[Memory], overlap: Sequence[float], heads: Mapping[str, str]
) -> frozenset[str]:
    """The found memories that share the statement's rare words about as much as the best one
    does (`NAMESAKE_SHARE`), and the memories standing for their facts' current values
    (`_heads`): most likely the fact the statement names. Other facts' sentences of its very
    shape can match it better in mem0's order, and by their shared shape words in the other;
    they must not take the judge's places from that fact's current memories."""
    best = max(overlap, default=0.0)
    if best <= 0:
        return frozenset()
    named = {
        c.id for c, shared in zip(found, overlap, strict=True) if shared >= NAMESAKE_SHARE * best
    }
    return frozenset(named | {heads[memory_id] for memory_id in named})


def _precedence(
    text: str,
    candidate: Memory,
    rank: Mapping[str, float],
    heads: Mapping[str, str],
    namesakes: Container[str],
) -> tuple[bool, bool, bool, float]:
    """Which candidates the judge sees first: the very text (a repeat, or a change back to
    it), then the memories that stand for a fact's current value (`_heads`: a verdict on an
    older value reaches the current memory that replaced it), then older values; in each
    group the fact the statement names first (`_namesakes`), then by `rank` (`_fused_ranks`)."""
    return (
        not same_text(candidate.text, text),
        heads[candidate.id] != candidate.id,
        candidate.id not in namesakes,
        rank[candidate.id],
    )


#: Why an add did not wait for the judge (as a deadline the call could not have met).
TOO_SLOW = PeerFailure(
    "judge",
    grpc.StatusCode.DEADLINE_EXCEEDED,
    "its latest verdicts took longer than an add waits (MEM0_VERDICT_BUDGET_MS)",
)
#: The id the new statement goes by when the judge is asked the other way round.
NEW_STATEMENT_ID = "new"


@dataclass(frozen=True)
class Verdicts:
    """The judge's verdict per candidate id, and which of its SUPERSEDES it gave again when
    asked the other way round (the stored memory as the new fact, the new statement as the
    memory): a change said in other words is acted on only so confirmed, since no similarity
    tells it apart from a look-alike fact that one wrong verdict would demote."""

    of: Mapping[str, Verdict] = field(default_factory=dict)
    confirmed: frozenset[str] = frozenset()
    #: Current memories called superseded beside the closest one so called, and then called
    #: the same fact as that one (`_kin`): the fact held two current values, and a change
    #: replaces both.
    kin: frozenset[str] = frozenset()
    #: Memories linked as wordings to one the statement replaces, shown to the judge only then,
    #: that it calls another fact or this value (`_apart`): the change stops at the link.
    apart: frozenset[str] = frozenset()

    def get(self, memory_id: str) -> Verdict | None:
        return self.of.get(memory_id)


async def verdicts_on(
    service: MemoryService, text: str, close: list[Memory], *, budget: float | None = None
) -> Verdicts | PeerFailure:
    """The judge's verdicts on `close`, or why there are none (off, no LLM, down, a bug, or,
    with a `budget` in seconds, too slow: not asked while its latest verdicts took longer,
    and cut at the budget otherwise). A SUPERSEDES on a memory too unlike `text` to trust
    (under `supersede_similarity_floor`, from `confirmed_supersede_floor` up) is asked again
    the other way round, within the same budget."""
    judge = service.judge
    unusable = await judge.usable()
    if unusable is not None:
        return unusable
    started = anyio.current_time()
    if budget is not None:
        recent = judge.recent_compare_seconds()
        if budget <= 0 or (recent is not None and recent > budget):
            return TOO_SLOW
    first = await judge.compare(text, [(c.id, c.text) for c in close], deadline=budget)
    if isinstance(first, PeerFailure):
        return first
    settings = service.settings
    floor, lowest = settings.supersede_similarity_floor, settings.confirmed_supersede_floor
    doubtful = [
        c
        for c in close
        if first.get(c.id) is Verdict.SUPERSEDES
        and not plausibly_one_fact(text, c, floor)
        and c.similarity_to_query >= lowest
    ]

    def remaining() -> float | None:
        return None if budget is None else budget - (anyio.current_time() - started)

    confirmed: frozenset[str] = frozenset()
    if doubtful:
        answer = await _confirmed(service, text, doubtful, remaining())
        if isinstance(answer, PeerFailure):
            return answer
        confirmed = answer
    verdicts = Verdicts(first, confirmed)
    verdicts = replace(verdicts, kin=await _kin(service, text, close, verdicts, remaining()))
    return replace(verdicts, apart=await _apart(service, text, close, verdicts, remaining()))


async def _confirmed(
    service: MemoryService, text: str, doubtful: list[Memory], left: float | None
) -> frozenset[str] | PeerFailure:
    """Which of `doubtful` (each called superseded by `text`) the judge calls a change again
    when asked the other way round, within `left` seconds (None: the client's deadline)."""
    if left is not None and left <= 0:
        return TOO_SLOW
    compare = service.judge.compare
    again = await gather(
        *(
            functools.partial(compare, c.text, [(NEW_STATEMENT_ID, text)], deadline=left)
            for c in doubtful
        )
    )
    confirmed: set[str] = set()
    for candidate, answer in zip(doubtful, again, strict=True):
        if isinstance(answer, PeerFailure):
            return answer
        if answer.get(NEW_STATEMENT_ID) is Verdict.SUPERSEDES:
            confirmed.add(candidate.id)
    return frozenset(confirmed)


async def _kin(
    service: MemoryService, text: str, close: list[Memory], verdicts: Verdicts, left: float | None
) -> frozenset[str]:
    """Which current memories the judge called superseded by `text`, beside the closest one so
    called and not copies of its value, it calls the same fact as that closest one when asked
    (the closest as the new fact). A fact holds two current values after a value stored
    unjudged (the judge away) was not shown to a later change's judge; the next change names
    both, and must replace both. Other facts named by a wrong verdict stay: the judge would
    have to be wrong twice. Nothing when the judge cannot answer in `left` seconds."""
    settings = service.settings
    named = _named_changed(text, close, verdicts, settings)
    if len(named) < 2:
        return frozenset()
    closest = named[0]
    others = [c for c in named[1:] if c.lifetime.current and not _copy(text, c, closest, settings)]
    if not others or (left is not None and left <= 0):
        return frozenset()
    answer = await service.judge.compare(
        closest.text, [(c.id, c.text) for c in others], deadline=left
    )
    if isinstance(answer, PeerFailure):
        return frozenset()
    return frozenset(c.id for c in others if answer.get(c.id) in {Verdict.SAME, Verdict.SUPERSEDES})


async def _apart(
    service: MemoryService, text: str, close: list[Memory], verdicts: Verdicts, left: float | None
) -> frozenset[str]:
    """Which current memories linked as wordings to one `text` replaces, and not among `close`,
    the judge calls another fact or this value when asked about them. A wording link is a SAME
    too unlike to merge, possibly a wrong verdict's; carried across it unasked, a change would
    demote another fact on that one mistake. Nothing when the judge cannot answer in `left`
    seconds: the change then replaces every wording, as the links say."""
    shown = {c.id for c in close}
    replaced = _replaced(text, close, verdicts, service.settings)
    linked = dict.fromkeys(
        link for memory in replaced for link in memory.lifetime.wording_links if link not in shown
    )
    if not linked or (left is not None and left <= 0):
        return frozenset()
    began = anyio.current_time()
    try:
        found = await gather(*(functools.partial(service.mem0.get, link) for link in linked))
    except Mem0Error:
        return frozenset()
    scopes = {memory.run_id for memory in replaced}
    others = [m for m in found if m is not None and m.lifetime.current and m.run_id in scopes][
        :MAX_COMPARE_CANDIDATES
    ]
    if left is not None:
        left -= anyio.current_time() - began
    if not others or (left is not None and left <= 0):
        return frozenset()
    answer = await service.judge.compare(text, [(m.id, m.text) for m in others], deadline=left)
    if isinstance(answer, PeerFailure):
        return frozenset()
    return frozenset(m.id for m in others if answer.get(m.id) in {Verdict.SAME, Verdict.UNRELATED})


@dataclass(frozen=True)
class Decision:
    """What the verdicts mean for the new statement.

    - `same`: `survivor` (current) holds this value already: reinforce it, fold `folded` into it;
    - `revive`: `survivor` held this value before and was superseded: make it current again;
    - None: store the statement as a new memory (`echoed`: the memory it restates, kept apart).
    In every case the current memories in `superseded` hold an older value and are marked
    superseded by the fact's current memory.
    """

    kind: Literal["same", "revive"] | None
    survivor: Memory | None = None
    folded: tuple[Memory, ...] = ()
    superseded: tuple[Memory, ...] = ()
    echoed: Memory | None = None
    #: Whether the echo counts as a mention of `echoed` (close enough to trust the SAME that
    #: far; a wording link alone only groups the two in search).
    echo_counted: bool = False
    #: `same` and `revive`: current memories the judge found saying this value in other words,
    #: linked as wordings of the survivor (or of `worded`) so that the fact keeps one current
    #: memory.
    wordings: tuple[Memory, ...] = ()
    #: `same`: the memory the survivor restates, which `wordings` restate too (None: the
    #: survivor).
    worded: Memory | None = None
    #: Every candidate the judge called a restatement (it holds this value) or unrelated (it
    #: holds another fact): none of them is superseded, not even as the current successor of an
    #: older value named in `superseded` (the link from that value may be a wrong verdict's).
    spared: frozenset[str] = frozenset()


def plausibly_one_fact(text: str, candidate: Memory, floor: float) -> bool:
    """May a verdict on `candidate` for the new `text` be acted on, at this similarity floor?"""
    return candidate.similarity_to_query >= floor or differs_only_in_values(text, candidate.text)


def judged_changed(
    text: str, candidate: Memory, verdicts: Verdicts, settings: BridgeSettings
) -> bool:
    """Does the judge's SUPERSEDES on `candidate` count: the pair plausibly one fact at the
    supersede floor, or the verdict given again when asked the other way round?"""
    return verdicts.get(candidate.id) is Verdict.SUPERSEDES and (
        candidate.id in verdicts.confirmed
        or plausibly_one_fact(text, candidate, settings.supersede_similarity_floor)
    )


def decide(
    text: str,
    candidates: Sequence[Memory],
    verdicts: Verdicts,
    settings: BridgeSettings,
) -> Decision:
    """The decision for verdicts on `candidates` (closest first, as mem0 ranked them, folded
    memories left out) about the new fact `text` (see the module doc for the guards)."""
    same = [
        c
        for c in candidates
        if verdicts.get(c.id) is Verdict.SAME
        and plausibly_one_fact(text, c, settings.verdict_similarity_floor)
    ]
    older = _replaced(text, candidates, verdicts, settings)
    spared = verdicts.apart | {
        c.id for c in candidates if verdicts.get(c.id) in {Verdict.SAME, Verdict.UNRELATED}
    }
    current = [c for c in same if c.lifetime.current]
    # Current memories the judge calls this value in other words, too far apart to merge.
    restating = tuple(
        c
        for c in candidates
        if verdicts.get(c.id) is Verdict.SAME
        and c.lifetime.current
        and not adds_details(text, c.text)
    )
    if current:
        survivor = current[0]
        # The others that say its value stay apart, as wordings of the fact's primary memory
        # (the survivor, or the one it restates): left unlinked, a change that replaces the
        # survivor would leave them current beside it. Only under a primary that restates
        # nothing, and only those that restate nothing: a link may then never close a ring of
        # wordings (a fact with no primary memory).
        primary = _primary(survivor, candidates)
        wordings = (
            tuple(
                c
                for c in restating
                if c not in current
                and c.id != primary.id
                and c.lifetime.restates is None
                and c.id not in primary.lifetime.wordings
            )
            if primary is not None
            else ()
        )
        return Decision(
            "same",
            survivor,
            tuple(current[1:]),
            older,
            wordings=wordings,
            worded=primary if primary is not survivor else None,
            spared=spared,
        )
    revivable = [c for c in same if not adds_details(text, c.text)]
    if revivable:
        return Decision("revive", revivable[0], superseded=older, wordings=restating, spared=spared)
    # The one whose value was said last: a copy said earlier (stored earlier, or stored
    # unjudged and not said since) may be one that a reconcile of a value stored meanwhile is
    # about to supersede, which would leave this wording on its own beside the other copy.
    echoed = max(restating, key=_said, default=None)
    counted = echoed is not None and echoed.similarity_to_query >= settings.echo_similarity_floor
    return Decision(None, superseded=older, echoed=echoed, echo_counted=counted, spared=spared)


def _primary(survivor: Memory, candidates: Sequence[Memory]) -> Memory | None:
    """The memory the survivor's other wordings restate: the survivor when it restates
    nothing, else the current candidate it restates, if that one restates nothing."""
    restated = survivor.lifetime.restates
    if restated is None:
        return survivor
    return next(
        (
            c
            for c in candidates
            if c.id == restated and c.lifetime.current and c.lifetime.restates is None
        ),
        None,
    )


def _said(memory: Memory) -> float:
    """When `memory`'s value was last said (it began to hold, or was stated again), as epoch
    seconds (-inf when unknown)."""
    said = memory.lifetime.said_at
    return -math.inf if said is None else said.timestamp()


def _replaced(
    text: str,
    candidates: Sequence[Memory],
    verdicts: Verdicts,
    settings: BridgeSettings,
) -> tuple[Memory, ...]:
    """The memories the new statement replaces: the closest one the judge calls superseded
    (when that one was replaced already, `supersede` marks the memory that replaced it), and
    other copies of that same older value; a further SUPERSEDES only where the
    pair is plausibly one fact, or the judge called the two one fact (`Verdicts.kin`). One
    statement changes one fact: with a judge wrong on a share of
    pairs, acting on every SUPERSEDES among the candidates (often other facts of the same
    subject) would demote several facts per add."""
    named = _named_changed(text, candidates, verdicts, settings)
    if not named:
        return ()
    closest = named[0]
    return (
        closest,
        *(c for c in named[1:] if _copy(text, c, closest, settings) or c.id in verdicts.kin),
    )


def _named_changed(
    text: str, candidates: Sequence[Memory], verdicts: Verdicts, settings: BridgeSettings
) -> list[Memory]:
    """The candidates whose SUPERSEDES counts (`judged_changed`), closest first."""
    return [c for c in candidates if judged_changed(text, c, verdicts, settings)]


def _copy(text: str, candidate: Memory, closest: Memory, settings: BridgeSettings) -> bool:
    """Is `candidate` a copy of `closest`'s value, to be replaced with it by `text`: the same
    values, or so close to `text` that it is plausibly the same fact?"""
    return same_values(candidate.text, closest.text) or plausibly_one_fact(
        text, candidate, settings.verdict_similarity_floor
    )


@dataclass
class Applied:
    """What carrying out a decision did."""

    #: The fact's current memory.
    survivor: Memory
    #: Whether the survivor now says the new text (a restatement with new details).
    rewritten: bool = False
    folded: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    #: Current memories reached through a value replaced that began to hold theirs after the
    #: time of the change (a later change, met by a value reconciled late): never replaced.
    later: list[Memory] = field(default_factory=list)
    mentions: int | None = None
    notes: list[str] = field(default_factory=list)


async def mark(
    service: MemoryService, memory: Memory, metadata: Mapping[str, object], what: str
) -> bool:
    """Merge lifetime `metadata` into `memory`; False (logged) when mem0 refused, for notes.
    A memory deleted meanwhile (404) needs no mark."""
    try:
        await service.mem0.update(memory.id, metadata=metadata)
    except Mem0Error as exc:
        if exc.status == 404:
            return True
        logger.warning("could not mark %s %s: %s", memory.id, what, exc)
        return False
    return True


async def fold(service: MemoryService, memory: Memory, into: str, at: datetime) -> bool:
    """Mark `memory` folded into `into` from `at` on, and make the current wordings that
    restate it restate `into` instead (they say the value `into` now speaks for), listed among
    `into`'s wordings (a change that replaces `into` replaces them through that list); False
    when mem0 refused the mark."""
    if not await mark(service, memory, memory.lifetime.folded(into, at), "folded"):
        return False
    survivor = await service.mem0.get(into)
    above = set() if survivor is None else await restated(service, survivor)
    moved: list[str] = []
    for wording_id in memory.lifetime.wordings:
        wording = None if wording_id == into else await service.mem0.get(wording_id)
        if (
            wording is None
            or not wording.lifetime.current
            or wording.lifetime.restates != memory.id
        ):
            continue
        if wording.id in above:
            # `into` says its value through this wording already: restating `into`, it would
            # close a ring; it stands for the fact instead, as the memory it restated did.
            await mark(service, wording, {RESTATES: None}, "as the fact's memory")
        elif await mark(service, wording, {RESTATES: into}, "as a wording"):
            moved.append(wording.id)
    if survivor is None:
        return True
    handed: dict[str, object] = {}
    if moved:
        handed = survivor.lifetime.worded(*moved)
    said = memory.lifetime.stated_at
    if said is not None and (survivor.lifetime.said_at is None or said > survivor.lifetime.said_at):
        handed.update(survivor.lifetime.stated(said))  # its value was said then, in other words
    if survivor.lifetime.restates == memory.id:
        # `into` was a wording of this memory, which no longer answers: it restates what this
        # one restated, or nothing (never itself, nor one of its own wordings: no ring).
        onward = memory.lifetime.restates
        if onward == into or onward in survivor.lifetime.wordings or onward in moved:
            onward = None
        handed[RESTATES] = onward
    if handed:
        await mark(service, survivor, handed, "with the wordings folded into it")
    return True


async def supersede(
    service: MemoryService, decision: Decision, survivor_id: str, at: datetime, applied: Applied
) -> None:
    """Mark each of `decision.superseded` superseded by `survivor_id` from `at` on, and with
    it the current memories of its fact in other words (the wordings linked to it either way,
    `restates` and `wordings`): they held the same value. A memory superseded already stands
    for the value that replaced it: that one is marked, unless the judge called it a
    restatement of the new statement (the value it holds is the new one already) or unrelated
    to it (it holds another fact, linked to the older value by a wrong verdict)."""
    await _supersede(service, decision.superseded, survivor_id, at, applied, spared=decision.spared)


async def outdate(service: MemoryService, memory: Memory, by: str, at: datetime) -> bool:
    """Mark `memory` superseded by the later memory `by` as of `at`, with its current wordings
    (`supersede` for one memory no verdict named); whether it was marked."""
    applied = Applied(memory)
    await _supersede(service, [memory], by, at, applied, spared=frozenset())
    return bool(applied.superseded)


async def _supersede(
    service: MemoryService,
    older: Sequence[Memory],
    survivor_id: str,
    at: datetime,
    applied: Applied,
    *,
    spared: frozenset[str],
) -> None:
    done = {survivor_id, *spared}
    for named in older:
        memory = named if named.lifetime.current else await current_successor(service, named)
        if memory is None or memory.id in done:
            continue
        done.add(memory.id)
        if _said_after(memory, at):
            applied.later.append(memory)
            continue
        if await mark(service, memory, memory.lifetime.superseded(survivor_id, at), "superseded"):
            applied.superseded.append(memory.id)
        else:
            applied.notes.append(f"{memory.id} could not be marked superseded; it stays current")
            continue
        replaced = [memory]
        await _supersede_wordings(
            service, memory, survivor_id, at, done=done, applied=applied, replaced=replaced
        )
        await _rehome_wordings(service, replaced)


async def _rehome_wordings(service: MemoryService, replaced: Sequence[Memory]) -> None:
    """Point the wordings that still restate one of `replaced` (the memories one change just
    replaced through their links) and are current (said after the change, or another fact) at
    one memory: the first memory a replaced one restated that is current and primary; else the
    first of them restates nothing and the others restate it. A wording must not restate a
    memory that no longer holds the value: the fact would show it as a second current memory.
    Run once after the whole walk, so that however far the links reached, the fact is left
    with one memory standing for it, not one per level."""
    gone = {m.id for m in replaced}
    named = [w for m in replaced for w in m.lifetime.wordings if w not in gone]
    restating = await current_wordings(service, named, gone)
    if not restating:
        return
    primary = None
    for onward in dict.fromkeys(m.lifetime.restates for m in replaced):
        if onward is None or onward in gone:
            continue
        held = await service.mem0.get(onward)
        if held is not None and held.lifetime.current and held.lifetime.restates is None:
            primary = held
            break
    if primary is None:
        primary, *moved = restating
        await mark(service, primary, {RESTATES: None}, "as its fact's current memory")
    else:
        moved = [w for w in restating if w.id != primary.id]
    await link_wordings(service, moved, primary)


async def link_wordings(
    service: MemoryService,
    wordings: Sequence[Memory],
    primary: Memory,
    *,
    listed: Sequence[str] = (),
) -> None:
    """Link `wordings` to `primary` both ways: each restates it, and its `wordings` list names
    them, with `listed` (ids whose own side of the link is written elsewhere). A wording that
    `primary` itself restates, directly or further on, is left as it is: the link would close
    a ring of wordings with no memory standing for the fact."""
    above = await restated(service, primary)
    linked = [w for w in wordings if w.id not in above]
    for wording in linked:
        await mark(service, wording, {RESTATES: primary.id}, "as a wording")
    named = [*listed, *(w.id for w in linked)]
    if named:
        await mark(service, primary, primary.lifetime.worded(*named), "with its wordings")


async def current_wordings(
    service: MemoryService, named: Iterable[str], of: Container[str]
) -> list[Memory]:
    """The memories among `named` (wording ids, as a memory's metadata lists them) that are
    current and still restate one of `of`, as mem0 holds them now, each once."""
    found = await gather(*(functools.partial(service.mem0.get, i) for i in dict.fromkeys(named)))
    return [w for w in found if w is not None and w.lifetime.current and w.lifetime.restates in of]


def _said_after(memory: Memory, at: datetime) -> bool:
    """Was `memory`'s value said after `at` (it began to hold, or was stated again)? It cannot
    be replaced as of `at` then: a value reconciled late never replaces a later statement."""
    return not said_by(memory.lifetime.said_at, at)


async def _supersede_wordings(
    service: MemoryService,
    memory: Memory,
    survivor_id: str,
    at: datetime,
    *,
    done: set[str],
    applied: Applied,
    replaced: list[Memory],
) -> None:
    """Mark superseded the current wordings of `memory`'s fact, through their links either way
    (a change that named one wording replaces the value every wording of it holds); each one
    marked is added to `replaced`."""
    waiting = [*memory.lifetime.wording_links]
    while waiting:
        kin_id = waiting.pop()
        if kin_id in done:
            continue
        done.add(kin_id)
        kin = await service.mem0.get(kin_id)
        if kin is None or kin.run_id != memory.run_id or not kin.lifetime.current:
            continue
        if _said_after(kin, at):
            applied.later.append(kin)
        elif await mark(service, kin, kin.lifetime.superseded(survivor_id, at), "too"):
            replaced.append(kin)
            waiting += kin.lifetime.wording_links


async def apply(
    service: MemoryService, decision: Decision, text: str, namespace: str, at: datetime
) -> Applied:
    """Carry out a `same` or `revive` decision for the fact `text` in `namespace`, as of `at`.

    The caller holds the namespace's scope lock. A mem0 failure on the survivor propagates
    (nothing else was changed yet); one while marking another memory leaves that memory as it
    was, with a note, and the rest done.
    """
    survivor = decision.survivor
    if survivor is None or decision.kind is None:
        raise ValueError("apply() needs a same or revive decision")
    rscope = service.rscope(namespace)
    applied = Applied(survivor)
    older = [*decision.superseded]
    if decision.kind == "revive":
        older += await _successor(service, survivor, namespace, {m.id for m in older})
    metadata = _survivor_metadata(decision, survivor, older, at)
    if decision.kind == "same":
        # When its value was last said: a value stored unjudged before this restatement and
        # reconciled after it is older than this value, not newer (`_pending`).
        metadata = {**(metadata or {}), **survivor.lifetime.stated(at)}
    rewrite = adds_details(text, survivor.text) and not same_text(survivor.text, text)
    if rewrite or metadata is not None:
        await service.mem0.update(survivor.id, text if rewrite else None, metadata=metadata)
    if rewrite:
        applied.rewritten = True
        failure = await service.ranker.record_stored(rscope, text, survivor.id, replaces=True)
        applied.notes += skipped(failure, "the new text was not recorded for dedupe")
    primary = decision.worded or survivor
    for wording in decision.wordings:
        await mark(service, wording, {RESTATES: primary.id}, "as a wording")
    if decision.worded is not None and decision.wordings:
        worded = primary.lifetime.worded(*(w.id for w in decision.wordings))
        await mark(service, primary, worded, "with its wordings")
    for copy in decision.folded:
        if await fold(service, copy, survivor.id, at):
            applied.folded.append(copy.id)
        else:
            applied.notes.append(f"copy {copy.id} could not be folded into {survivor.id}")
    await _supersede(service, older, survivor.id, at, applied, spared=decision.spared)
    await _count_mentions(service, rscope, applied)
    return applied


def _survivor_metadata(
    decision: Decision, survivor: Memory, older: Sequence[Memory], at: datetime
) -> dict[str, object] | None:
    """What the survivor's metadata must say now: current again (a change-back), what it
    replaces, and its new wordings; None when nothing about its lifetime changes."""
    replacing = [m.id for m in older]
    metadata: dict[str, object] = {}
    if decision.kind == "revive" or replacing:
        metadata = survivor.lifetime.reinstated(at, replacing=replacing)
    if decision.wordings and decision.worded is None:
        known = survivor.lifetime.wordings
        metadata[WORDINGS] = [*known, *(w.id for w in decision.wordings if w.id not in known)]
        if decision.kind == "revive":
            # They restate it now, so it restates nothing: a link onward could lead back to
            # one of them, and a fact whose wordings restate each other in a ring has no
            # primary one.
            metadata[RESTATES] = None
    return metadata or None


async def _count_mentions(service: MemoryService, rscope: str, applied: Applied) -> None:
    """Carry the folded copies' mentions over to the survivor and count this statement."""
    survivor_id = applied.survivor.id
    if applied.folded:
        carried = await service.ranker.fold(rscope, survivor_id, applied.folded)
        applied.notes += skipped(carried, "mentions of the folded copies were not carried over")
        if not isinstance(carried, PeerFailure):
            applied.mentions = carried
    reinforced = await service.ranker.reinforce(rscope, survivor_id)
    applied.notes += skipped(reinforced, "the mention was not counted")
    if not isinstance(reinforced, PeerFailure):
        applied.mentions = reinforced.mentions
        if not reinforced.counted:
            applied.notes.append("mention already counted recently (debounced)")


async def _successor(
    service: MemoryService, revived: Memory, namespace: str, known: set[str]
) -> list[Memory]:
    """The current memory that replaced `revived` (directly or through later changes), when the
    judge did not name it: a change-back supersedes the value it returns from, even when that
    was not a candidate."""
    successor = await current_successor(service, revived)
    if successor is None or successor.id in known or successor.run_id != namespace:
        return []
    return [successor]


async def successors(
    service: MemoryService, memory: Memory, reads: Reads | None = None
) -> AsyncIterator[Memory]:
    """The memories along `memory`'s superseded_by (or folded_into) chain, in order, within its
    namespace; the chain ends at a current memory, a gap, a loop or another namespace. `reads`
    shares the links read with other walks of the same call."""
    next_id = memory.lifetime.onward
    seen = {memory.id}
    get = service.mem0.get if reads is None else reads.get
    while next_id is not None and next_id not in seen:
        seen.add(next_id)
        successor = await get(next_id)
        if successor is None or successor.run_id != memory.run_id:
            return
        yield successor
        next_id = successor.lifetime.onward


async def current_successor(
    service: MemoryService, memory: Memory, reads: Reads | None = None
) -> Memory | None:
    """The current memory at the end of `memory`'s superseded_by (or folded_into) chain, in
    its namespace; None when the chain ends in nothing current."""
    async for successor in successors(service, memory, reads):
        if successor.lifetime.current:
            return successor
    return None


async def restates_through(service: MemoryService, memory: Memory, target_id: str) -> bool:
    """Does `memory` restate `target_id`, directly or through the memories it restates? A
    memory so linked must never be made to restate `memory`: the link would close a ring of
    wordings, and a fact whose wordings all restate one another has no primary memory."""
    return target_id in await restated(service, memory)


async def restated(service: MemoryService, memory: Memory) -> set[str]:
    """The memories `memory` restates, directly or through the memories it restates (its
    chain of wordings, read once; a ring already there ends the walk)."""
    seen = {memory.id}
    found: set[str] = set()
    onward = memory.lifetime.restates
    while onward is not None and onward not in seen:
        found.add(onward)
        seen.add(onward)
        wording = await service.mem0.get(onward)
        onward = None if wording is None else wording.lifetime.restates
    return found


def superseding_metadata(decision: Decision) -> dict[str, object]:
    """What a memory stored for a `None` decision records about the memories it replaces."""
    return {SUPERSEDES: [m.id for m in decision.superseded]} if decision.superseded else {}


@dataclass(frozen=True)
class Echo:
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
    wording = (
        f"stored as a wording of {echoed.id} (the judge took it for a restatement, too unlike "
        "it to merge)"
    )
    if not decision.echo_counted:
        return Echo(echoed.id, [f"{wording}; too far apart to count as a mention of it"])
    reinforced = await service.ranker.reinforce(service.rscope(namespace), echoed.id)
    if isinstance(reinforced, PeerFailure):
        return Echo(None, skipped(reinforced, "the mention of the restated memory was not counted"))
    counted = (
        "counted as a mention of it" if reinforced.counted else "its mention was counted lately"
    )
    return Echo(echoed.id, [f"{wording}; {counted}"])

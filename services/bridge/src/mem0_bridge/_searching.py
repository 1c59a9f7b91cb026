"""memory_search: one over-fetching mem0 search, the rewritten question beside it, reranked.

The raw query and the statement a question is rewritten to are searched concurrently, merged by
id on one scale (mem0's undivided score, see `on_one_scale`), and reranked by the ranker;
whatever a helper cannot do (judge down, over budget, ranker down) leaves mem0's results
standing, with a note. A search never waits on the LLM: a question's rewrite is searched when
it is kept from an earlier search of the question (`_rewrites`), and otherwise fetched in the
background for the next time.
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING

import anyio

from mem0_bridge._concurrency import both
from mem0_bridge._grpc import PeerFailure
from mem0_bridge._inputs import check_text
from mem0_bridge._lifetime import one_per_fact, parse_time, rfc3339, superseded_last
from mem0_bridge._mem0 import Mem0Error, Memory, newest_time
from mem0_bridge._models import Hit, SearchResult
from mem0_bridge._ranker import RankCandidate
from mem0_bridge._reads import Reads
from mem0_bridge._render import to_hit
from mem0_bridge._rewrites import Rewrite, Rewrites
from mem0_bridge._scopes import is_pin_namespace
from mem0_bridge._wording import same_values, shares_most_words
from mem0mcp import contract
from mem0mcp.ranker.v1 import ranker_pb2

if TYPE_CHECKING:
    from mem0_bridge._service import MemoryService

logger = logging.getLogger(__name__)

#: Upper bound of one search's top_k, whatever limit x overfetch asks for.
SEARCH_CAP = 200
#: The ranker takes this many restatements per candidate (`Candidate.restatement_ids`).
MAX_RESTATEMENTS = contract.max_items(ranker_pb2.Candidate, "restatement_ids")

OVER_BUDGET = "question rewrite skipped: it did not fit the latency budget"
NOT_REWRITTEN = "the question was searched as asked, not rewritten"
UNRERANKED = "results are in mem0's similarity order, without mention and recency reranking"


@dataclass
class _Rewritten:
    """The rewritten query's hits, the statement searched, and what is worth telling."""

    hits: list[Memory] = field(default_factory=list)
    statement: str | None = None
    notes: list[str] = field(default_factory=list)
    #: Ask for the question's rewrite once this search is answered (for its next search).
    fetch_later: bool = False


async def search(
    service: MemoryService,
    query: str,
    namespaces: Sequence[str] | None,
    limit: int,
    as_of: datetime | None = None,
) -> SearchResult:
    """Search `namespaces` (None: all of the user's, pins excluded) for `query`: the current
    memories, each superseded one below the memory that superseded it; with `as_of`, the
    memories that were current then."""
    query = check_text(query, "query")
    top_k = min(limit * service.settings.search_overfetch, SEARCH_CAP)
    raw, rewritten = await both(
        functools.partial(
            service.mem0.search, query, user_id=service.user_id, run_id=namespaces, top_k=top_k
        ),
        functools.partial(rewritten_search, service, query, namespaces, top_k),
    )
    found = on_one_scale(raw, rewritten.hits)
    if as_of is None:
        relative = await _as_their_facts(service, found, namespaces)
    else:
        relative = {i: pair for i, pair in found.items() if pair[0].lifetime.held_at(as_of)}
    merged = {memory.id: memory for memory, _ in relative.values()}
    ordered = sorted(relative.values(), key=lambda pair: pair[1], reverse=True)
    restated = restatements([m for m, _ in ordered])
    unjudged = as_of is None and any(_unjudged(m) for m, _ in ordered)
    notes = list(rewritten.notes)
    ranked = (
        await service.ranker.rerank(
            [
                RankCandidate(
                    memory_id=m.id,
                    similarity=similarity,
                    created_at=m.created_at or "",
                    updated_at=m.updated_at or "",
                    related_ids=m.related_ids,
                    restated_at=restated.at.get(m.id, ""),
                    restatement_ids=restated.by.get(m.id, ()),
                )
                for m, similarity in ordered
            ],
            # All of them when one is unjudged: it may belong above an older value (below).
            0 if unjudged else limit,
        )
        if ordered
        else []
    )
    if isinstance(ranked, PeerFailure):
        notes.append(ranked.note(UNRERANKED))
        # Unranked, a hit's score is mem0's own, as an agent would get it from mem0.
        hits = [to_hit(m, score=m.score) for m, _ in ordered]
    else:
        hits = [
            to_hit(merged[r.memory_id], score=r.score, mentions=r.mentions)
            for i, r in enumerate(ranked)
            # Asked for all: the limit's worth, and the unjudged ones below it (`_latest_first`).
            if r.memory_id in merged and (i < limit or _unjudged(merged[r.memory_id]))
        ]
    if as_of is None:
        hits = _latest_first(await _successors_first(service, hits, namespaces), merged)
    hits = one_per_fact(hits, key=_hit_id, restates=_hit_restates(merged))[:limit]
    if rewritten.fetch_later:
        service.rewrites.request(query)
    return SearchResult(
        query=query,
        as_of=None if as_of is None else rfc3339(as_of),
        rewritten_query=rewritten.statement,
        reranked=not isinstance(ranked, PeerFailure),
        hits=hits,
        notes=notes,
    )


async def _as_their_facts(
    service: MemoryService,
    found: Mapping[str, tuple[Memory, float]],
    namespaces: Sequence[str] | None,
) -> dict[str, tuple[Memory, float]]:
    """`found` with each folded memory replaced by the memory it was folded into (read when
    the search did not find it), scored as the better of the two: a fact is found by any of
    its wordings, and a restatement folded into a wording further from the query would
    otherwise take the fact's best match away with it."""
    kept = {i: pair for i, pair in found.items() if pair[0].lifetime.folded_into is None}
    folded = [pair for pair in found.values() if pair[0].lifetime.folded_into is not None]
    if not folded:
        return kept
    reads = Reads(service.mem0, [memory for memory, _ in found.values()])
    await reads.chains(
        [memory.lifetime.folded_into or "" for memory, _ in folded],
        hops=MAX_SUCCESSOR_HOPS,
        stop=lambda m: m.lifetime.folded_into is None or _foreign(service, m, namespaces),
    )
    for memory, value in folded:
        into, hops = memory.lifetime.folded_into, 0
        while into is not None and hops < MAX_SUCCESSOR_HOPS:
            target = await reads.get(into)
            if target is None or _foreign(service, target, namespaces):
                break
            if target.lifetime.folded_into is None:
                held = kept.get(target.id)
                if held is None or held[1] < value:
                    scored = replace(
                        target,
                        score=memory.score,
                        similarity=memory.similarity,
                        raw_score=memory.raw_score,
                    )
                    kept[target.id] = (scored, value)
                break
            into, hops = target.lifetime.folded_into, hops + 1
    return kept


def _foreign(service: MemoryService, memory: Memory, namespaces: Sequence[str] | None) -> bool:
    """Is `memory` outside what the search may show: another user's, or another namespace's?"""
    return memory.user_id != service.user_id or (
        namespaces is not None and memory.run_id not in namespaces
    )


def _hit_id(hit: Hit) -> str:
    return hit.id


def _hit_restates(merged: Mapping[str, Memory]) -> Callable[[Hit], str | None]:
    def restates(hit: Hit) -> str | None:
        memory = merged.get(hit.id)
        return None if memory is None else memory.lifetime.restates

    return restates


#: Links followed from a superseded hit to the current memory of its fact (a fact changed
#: back and forth under load builds chains of several).
MAX_SUCCESSOR_HOPS = 8


def _latest_first(hits: list[Hit], merged: Mapping[str, Memory]) -> list[Hit]:
    """`hits` (each superseded one below its successor already) with, for each memory stored
    unjudged (the judge was away; the reconciler has not judged it yet), the one said last
    among it and the current hits that share most of its words moved to the place of the
    best ranked of them: until it is judged, no mark says which value replaced which, and the
    latest statement is the likelier answer, whether it is the unjudged memory or a statement
    made after it. Memories of other facts, which share only a sentence's shape with it, keep
    their places."""
    order = list(hits)
    for hit in hits:
        memory = merged.get(hit.id)
        if memory is None or not _unjudged(memory):
            continue
        said = _said(memory, hit)
        rivals = [
            index
            for index, other in enumerate(order)
            if other is hit
            or (
                other.current
                and shares_most_words(memory.text, other.text)
                # One said after it overtakes it only if the two were stored close together, or
                # close to one memory (possibly versions of one fact): a look-alike fact said
                # later keeps its place.
                and (
                    _said(merged.get(other.id), other) <= said
                    or _related(memory, merged.get(other.id))
                )
            )
        ]
        latest = max(rivals, key=lambda index: _said(merged.get(order[index].id), order[index]))
        if latest != rivals[0]:
            order.insert(rivals[0], order.pop(latest))
    return order


def _related(memory: Memory, other: Memory | None) -> bool:
    """Were the two stored as related: one to the other, or both to one memory (as the ranker
    groups them for recency)?"""
    if other is None:
        return False
    mine, theirs = {memory.id, *memory.related_ids}, {other.id, *other.related_ids}
    return not mine.isdisjoint(theirs)


def _unjudged(memory: Memory) -> bool:
    return memory.lifetime.unjudged and memory.lifetime.current


def _said(memory: Memory | None, hit: Hit) -> float:
    """When the hit's value was last said, as epoch seconds (unknown: -inf, said before any
    other). `memory` is its memory as searched, None for a successor fetched since (said when
    it began)."""
    said = memory.lifetime.said_at if memory is not None else parse_time(hit.valid_from)
    return -math.inf if said is None else said.timestamp()


async def _successors_first(
    service: MemoryService, hits: list[Hit], namespaces: Sequence[str] | None
) -> list[Hit]:
    """`hits` with each superseded hit below the memory that superseded it; one the search did
    not find is fetched and placed where the superseded hit was, so an older value never
    answers first. Only memories of the searched namespaces are fetched."""
    found = {hit.id for hit in hits}
    fetched: dict[str, Hit] = {}
    #: Per superseded hit, the memory among the results it must rank below.
    below: dict[str, str] = {}

    def foreign(memory: Memory) -> bool:
        return _foreign(service, memory, namespaces)

    reads = Reads(service.mem0)

    def ends_walk(memory: Memory) -> bool:
        return foreign(memory) or memory.lifetime.onward in found

    starts = [h.superseded_by for h in hits if h.superseded_by and h.superseded_by not in found]
    await reads.chains(starts, hops=MAX_SUCCESSOR_HOPS, stop=ends_walk)
    for hit in hits:
        successor_id, hops = hit.superseded_by, 0
        while successor_id is not None and hops < MAX_SUCCESSOR_HOPS:
            if successor_id in found:
                below[hit.id] = successor_id
                break
            hops += 1
            successor = await reads.get(successor_id)
            if successor is None or foreign(successor):
                break
            if successor.lifetime.current:
                fetched[hit.id] = to_hit(successor, score=hit.score)
                found.add(successor.id)
                below[hit.id] = successor.id
                break
            successor_id = successor.lifetime.onward
    with_successors: list[Hit] = []
    for hit in hits:
        if hit.id in fetched:
            with_successors.append(fetched[hit.id])
        with_successors.append(hit)
    return superseded_last(with_successors, key=_hit_id, superseder=lambda hit: below.get(hit.id))


@dataclass(frozen=True)
class Restatements:
    """Which of a search's memories state one another's values again in other words."""

    #: Per memory, the memories among them that restate it (either way round).
    by: dict[str, tuple[str, ...]]
    #: Per restated memory, the newest time one did (RFC 3339).
    at: dict[str, str]


def restatements(memories: Sequence[Memory]) -> Restatements:
    """The pairs of `memories` stored as related that name the same values and names.

    Without a judge (or where the verdict guard keeps a restatement apart), a fact said again
    in other words is a memory of its own, and the ranker would see each wording alone:
    - "1 service", then "0.5 cores", then "capped at 1 service" leaves the first memory older than
      the change it was reverted from, and recency ranked the change first. Told when its
      values were last stated (`at`), the ranker counts that as activity.
    - A fact said six times in three wordings looked like three facts said twice. Told each
      memory's restatements (`by`), the ranker counts every statement as a mention of each.
    """
    by_id = {m.id: m for m in memories}
    newest: dict[str, datetime] = {}
    linked: dict[str, dict[str, None]] = {}
    for memory in memories:
        for other_id in memory.related_ids:
            other = by_id.get(other_id)
            if other is None or other.id == memory.id or not same_values(memory.text, other.text):
                continue
            for restated, restating in ((memory, other), (other, memory)):
                linked.setdefault(restated.id, {})[restating.id] = None
                moment = newest_time(restating.created_at, restating.updated_at)
                kept = newest.get(restated.id)
                if moment is not None and (kept is None or moment > kept):
                    newest[restated.id] = moment
    return Restatements(
        by={memory_id: tuple(others)[:MAX_RESTATEMENTS] for memory_id, others in linked.items()},
        at={memory_id: moment.isoformat() for memory_id, moment in newest.items()},
    )


#: mem0's largest divisor (semantic + BM25 + entity boost, each at most 1, 1 and 0.5): the
#: undivided score over it stays within 0..1, on the same scale for every search.
MEM0_MAX_SIGNALS = 2.5


def on_one_scale(*found: Sequence[Memory]) -> dict[str, tuple[Memory, float]]:
    """The hits of several searches merged by id, each with a score comparable across them
    (mem0's own score stays on the memory, as the similarity an agent is shown).

    mem0's score is not comparable across searches: it divides the sum of its signals by the
    signals that fired for that query, so one keyword hit anywhere halves every score of that
    search. With `explain` mem0 also gives the undivided sum (`raw_score`), which is on one
    scale; a mem0 that does not gives each list relative to its own best instead (its top hit
    1.0). A memory found by several searches keeps its best. Pins never show.
    """
    undivided = all(m.raw_score is not None for memories in found for m in memories)
    merged: dict[str, tuple[Memory, float]] = {}
    for memories in found:
        best = max((m.score or 0.0 for m in memories), default=0.0)
        for memory in memories:
            if is_pin_namespace(memory.run_id):
                continue
            if undivided:
                value = (memory.raw_score or 0.0) / MEM0_MAX_SIGNALS
            else:
                value = (memory.score or 0.0) / best if best > 0 else 0.0
            kept = merged.get(memory.id)
            if kept is None or value > kept[1]:
                merged[memory.id] = (memory, value)
    return merged


async def rewritten_search(
    service: MemoryService, query: str, namespaces: Sequence[str] | None, top_k: int
) -> _Rewritten:
    """Search the statement that would answer a question, when its rewrite is at hand.

    Best effort: whatever goes wrong (judge down, slow, mem0 failing on this second search)
    leaves the raw query's results standing, with a note when worth telling.
    """
    settings = service.settings
    budget = settings.rewrite_budget_ms / 1000
    # A budget of 0 means no rewrite at all, not a call that is bound to miss its deadline.
    if not settings.query_rewrite or budget <= 0 or not Rewrites.worth_asking(query):
        return _Rewritten()
    started = anyio.current_time()
    rewrite = service.rewrites.kept(query)
    if rewrite is None:
        fetched = await _fetched(service, query, min(budget, settings.rewrite_wait_ms / 1000))
        if isinstance(fetched, _Rewritten):
            return fetched
        rewrite = fetched
    statement = rewrite.statement
    if statement is None:
        return _Rewritten()
    # The rest of the budget bounds this search (an httpx call cancels cleanly).
    with anyio.move_on_after(budget - (anyio.current_time() - started)):
        try:
            found = await service.mem0.search(
                statement, user_id=service.user_id, run_id=namespaces, top_k=top_k
            )
        except Mem0Error as exc:
            logger.warning("search of the rewritten query failed: %s", exc)
            return _Rewritten()
        return _Rewritten(hits=found, statement=statement)
    return _Rewritten(notes=[OVER_BUDGET])


async def _fetched(service: MemoryService, query: str, wait: float) -> Rewrite | _Rewritten:
    """Ask for the rewrite of a question none is kept for (in the background, kept for the
    next search) and wait up to `wait` seconds for it (`MEM0_REWRITE_WAIT_MS`, 0 by default:
    not at all); the rewrite, or the (empty) outcome without one, with a note when the
    judge failed on the question."""
    rewrites = service.rewrites
    failed = rewrites.failure(query)
    if await service.judge.usable() is not None:
        return _Rewritten()
    if wait <= 0:
        # Asked for once this search is answered: this search does not use it, and the
        # judge's work would only slow this one down.
        notes = [failed.note(NOT_REWRITTEN)] if failed and not failed.timed_out else []
        return _Rewritten(notes=notes, fetch_later=True)
    done = rewrites.request(query)
    with anyio.move_on_after(wait):
        if done is not None:
            await done.wait()
        else:  # no background worker: ask now, within the wait
            await rewrites.rewrite_now(query, deadline=wait)
    rewrite = rewrites.kept(query)
    if rewrite is not None:
        return rewrite
    failed = rewrites.failure(query)
    if failed is not None and not failed.timed_out:
        return _Rewritten(notes=[failed.note(NOT_REWRITTEN)])
    return _Rewritten()

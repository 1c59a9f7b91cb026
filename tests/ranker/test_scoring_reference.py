"""The rerank's fast path ranks exactly as the formula computed one candidate at a time.

`rank_columns` works in C loops over columns and visits only the band and the returned few;
the reference below follows the module doc of `mem0_ranker._scoring` plainly (every candidate,
components found by search) with the same arithmetic, so results must be equal, not close.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from mem0_ranker import Candidate, MentionRecord, ScoringParams, rank
from mem0_ranker._scoring import SECONDS_PER_DAY, Scored

NOW = 1_796_212_800.0


def _components(
    positions: Sequence[int], ids: Sequence[str], links: Sequence[Sequence[str]]
) -> dict[int, frozenset[int]]:
    """Each position's component: the positions it is linked to, either way, transitively."""
    where = {ids[p]: p for p in positions}
    neighbours: dict[int, set[int]] = {p: set() for p in positions}
    for p in positions:
        for other in links[p]:
            q = where.get(other)
            if q is not None:
                neighbours[p].add(q)
                neighbours[q].add(p)
    component: dict[int, frozenset[int]] = {}
    for p in positions:
        if p in component:
            continue
        seen, todo = {p}, [p]
        while todo:
            for q in neighbours[todo.pop()] - seen:
                seen.add(q)
                todo.append(q)
        for q in seen:
            component[q] = frozenset(seen)
    return component


def _reference(
    candidates: Sequence[Candidate],
    records: Mapping[str, MentionRecord],
    now: float,
    p: ScoringParams,
    limit: int,
) -> list[Scored]:
    ids = [c.memory_id for c in candidates]
    sims = [c.similarity for c in candidates]
    everyone = range(len(candidates))
    own = [records[i].mentions if i in records else 0 for i in ids]
    mentions = list(own)
    told = any(c.restatements for c in candidates)
    if told:
        named = {other for c in candidates for other in c.restatements}
        linked = [q for q in everyone if candidates[q].restatements or ids[q] in named]
        facts = _components(linked, ids, [c.restatements for c in candidates])
        for q in linked:
            mentions[q] = sum(1 + own[r] for r in facts[q]) - 1
    best = max(sims, default=0.0)
    band = best * (1.0 - p.similarity_margin) if best > 0 else -math.inf
    reach = best * (1.0 - p.mention_margin)
    reaching = reach < band and bool(records or told)
    inside = [
        q
        for q in everyone
        if sims[q] >= band or (reaching and sims[q] >= reach and mentions[q] >= p.mention_band_min)
    ]
    rate = -math.log(2.0) / (p.half_life_days * SECONDS_PER_DAY)

    def newest(q: int) -> float:
        record = records.get(ids[q])
        activity = candidates[q].activity_at
        return activity if record is None else max(activity, record.last_reinforced_at)

    def age(q: int) -> float:
        return now - newest(q) if newest(q) < now else 0.0

    def factor(m: int) -> float:
        return 1.0 + p.alpha * math.log1p(m) if m else 1.0

    fresh = {q: p.recency_floor + (1.0 - p.recency_floor) * math.exp(rate * age(q)) for q in inside}
    groups = _components(inside, ids, [c.related for c in candidates])
    recency = {}
    for q in inside:
        freshest = max(fresh[r] for r in groups[q])
        recency[q] = fresh[q] / freshest if freshest > 0 else 1.0
    score = {q: sims[q] * factor(mentions[q]) * recency[q] for q in inside}
    order = sorted(inside, key=lambda q: (-score[q], q))
    below = sorted((q for q in everyone if q not in score), key=lambda q: (-sims[q], q))
    for q in below:
        score[q] = sims[q] * (score[order[-1]] / best)
    order += below
    return [
        Scored(
            ids[q],
            score[q],
            sims[q],
            own[q],
            factor(mentions[q]) if q in inside else 1.0 + p.alpha * math.log1p(own[q]),
            recency.get(q, 1.0),
            age(q) / SECONDS_PER_DAY,
        )
        for q in (order[:limit] if limit > 0 else order)
    ]


#: Few distinct values, so that equal similarities, scores and times (ties) are common.
_similarity = st.one_of(st.sampled_from([0.0, 0.5, 0.8, 0.81, 0.9]), st.floats(0.0, 1.0))
_moment = st.one_of(
    st.sampled_from([NOW, NOW - 86400.0, NOW + 60.0, math.inf]),
    st.floats(NOW - 3e8, NOW + 1e5),
)
_params = st.builds(
    ScoringParams,
    alpha=st.sampled_from([0.0, 0.2, 1.0]),
    half_life_days=st.sampled_from([1.0, 90.0]),
    recency_floor=st.sampled_from([0.0, 0.6, 1.0]),
    similarity_margin=st.sampled_from([0.0, 0.045, 0.2, 1.0]),
    mention_margin=st.sampled_from([0.0, 0.08, 0.3]),
    mention_band_min=st.integers(1, 3),
)


@st.composite
def _requests(
    draw: st.DrawFn,
) -> tuple[list[Candidate], dict[str, MentionRecord], ScoringParams, int]:
    count = draw(st.integers(0, 30))
    ids = [f"m{i}" for i in range(count)]
    names = st.sampled_from([*ids, "elsewhere"]) if ids else st.just("elsewhere")
    restating = draw(st.booleans())
    candidates = [
        Candidate(
            memory_id,
            draw(_similarity),
            draw(_moment),
            tuple(draw(st.lists(names, max_size=3))),
            tuple(draw(st.lists(names, max_size=2))) if restating else (),
        )
        for memory_id in ids
    ]
    records = {
        memory_id: MentionRecord(draw(st.integers(0, 20)), draw(_moment))
        for memory_id in ids
        if draw(st.booleans())
    }
    return candidates, records, draw(_params), draw(st.integers(0, 12))


@settings(max_examples=400)
@given(_requests())
def test_the_fast_rank_equals_the_formula_taken_one_candidate_at_a_time(
    request: tuple[list[Candidate], dict[str, MentionRecord], ScoringParams, int],
) -> None:
    candidates, records, params, limit = request
    assert rank(candidates, records, NOW, params, limit) == _reference(
        candidates, records, NOW, params, limit
    )

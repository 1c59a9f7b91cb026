"""The rerank formula, kept pure so its properties can be tested without a database or a server.

score = similarity * (1 + alpha * ln(1 + mentions)) * recency      (for candidates in the band)
mentions = the memory's counted mentions, plus one for each candidate restating its fact in other
           words (`restatements`, either way round and through each other) and theirs
recency = freshness / freshness of the freshest candidate related to it (itself included)
freshness = floor + (1 - floor) * 0.5 ** (age_days / half_life_days), the age running from the
            newest of its updated (else created) time, last counted reinforcement, `restated_at`

Mentions and recency only break near-ties, so that they never lift a clearly weaker match: they
act inside the *band*, the candidates whose similarity is at least `best * (1 - margin)` (`best`:
the request's highest). A fact stated at least `mention_band_min` times beyond the first joins
the band from `mention_margin` below `best`, since a query that does not name its subject may
match it a little worse than a neighbour said once. The others follow the band in mem0's order,
scored `similarity * lowest band score / best` so scores still fall as ranks do; `margin = 1`
puts every candidate in the band. Age counts only next to a fresher *related* candidate
(`related`, either way round and through each other: stored close together, so possibly versions
of one fact); between unrelated memories an age says nothing about which one a query wants.
bench/README.md gives what the benchmarks found for each of these choices.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from mem0_common import linked_groups

SECONDS_PER_DAY = 86400.0


@dataclass(frozen=True, slots=True)
class ScoringParams:
    alpha: float
    half_life_days: float
    recency_floor: float
    #: The band, as a share of the best similarity (see the module doc).
    similarity_margin: float = 1.0
    #: How far below the best similarity a much-mentioned candidate joins the band, and how
    #: many mentions make it one (see the module doc); a margin at or under the band's is off.
    mention_margin: float = 0.0
    mention_band_min: int = 2


class Candidate(NamedTuple):
    """A mem0 hit as the ranker sees it; `activity_at` is epoch seconds of its newest update,
    `related` the memories it was stored close to (see the module doc).

    Named tuples, not dataclasses, for the per-candidate types: a rerank builds thousands of
    them per second and a tuple is the cheapest immutable record Python has.
    """

    memory_id: str
    similarity: float
    activity_at: float
    related: Sequence[str] = ()
    restatements: Sequence[str] = ()


class MentionRecord(NamedTuple):
    mentions: int
    last_reinforced_at: float


class Scored(NamedTuple):
    memory_id: str
    score: float
    similarity: float
    mentions: int
    mention_factor: float
    recency: float
    age_days: float


class Columns(NamedTuple):
    """Candidates as parallel lists: how the service hands a request to `rank_columns`, so a
    rerank builds no object per candidate."""

    memory_ids: list[str]
    similarities: list[float]
    activity_at: list[float]
    related: Sequence[Sequence[str]]
    #: Empty when no candidate names a restatement (the common case), else one per candidate.
    restatements: Sequence[Sequence[str]] = ()


def score(
    candidate: Candidate, record: MentionRecord | None, now: float, params: ScoringParams
) -> Scored:
    return rank([candidate], {} if record is None else {candidate.memory_id: record}, now, params)[
        0
    ]


def rank(
    candidates: Sequence[Candidate],
    records: Mapping[str, MentionRecord],
    now: float,
    params: ScoringParams,
    limit: int = 0,
) -> list[Scored]:
    """Best first; equal scores keep mem0's order (a stable sort), so results are reproducible."""
    columns = Columns(
        [c.memory_id for c in candidates],
        [c.similarity for c in candidates],
        [c.activity_at for c in candidates],
        [c.related for c in candidates],
        [c.restatements for c in candidates] if any(c.restatements for c in candidates) else (),
    )
    return rank_columns(columns, records, now, params, limit)


def rank_columns(
    candidates: Columns,
    records: Mapping[str, MentionRecord],
    now: float,
    params: ScoringParams,
    limit: int = 0,
) -> list[Scored]:
    """`rank` over columns. This runs on every search, so it is flat loops over plain floats:
    the fading part of freshness is `exp(rate * age_seconds)` with the rate worked out once
    (the same curve as `0.5 ** (age_days / half_life_days)`), and a memory never reinforced
    (most of them) skips the mention factor, which is exactly 1. Candidates below the band are
    scored in a last pass, once the band's lowest score is known. Only the returned few become
    `Scored` records.
    """
    alpha = params.alpha
    floor = params.recency_floor
    fade = 1.0 - floor
    rate = -math.log(2.0) / (params.half_life_days * SECONDS_PER_DAY)
    exp = math.exp
    log1p = math.log1p
    get = records.get
    ids, similarities, activities, related, restatements = candidates
    best = max(similarities, default=0.0)
    # No positive similarity, no band to speak of: every candidate is in it.
    band = best * (1.0 - params.similarity_margin) if best > 0 else -math.inf
    told = _fact_mentions(ids, restatements, records) if restatements else None
    reach = best * (1.0 - params.mention_margin)
    if reach < band and (records or told):
        strong = params.mention_band_min
        inside = [
            i
            for i, similarity in enumerate(similarities)
            if similarity >= band
            or (similarity >= reach and _mentions(i, ids, records, told) >= strong)
        ]
    else:
        inside = [i for i, similarity in enumerate(similarities) if similarity >= band]
    factors = {}
    freshness = {}
    for position in inside:
        record = get(ids[position])
        newest = activities[position]
        factor = 1.0
        mentions = told[position] if told is not None else 0
        if record is not None:
            newest = max(newest, record.last_reinforced_at)
            if told is None:
                mentions = record.mentions
        if mentions:
            factor += alpha * log1p(mentions)
        # A timestamp in the future (clock skew) counts as age 0, never as a bonus.
        age = now - newest if newest < now else 0.0
        factors[position] = factor
        freshness[position] = floor + fade * exp(rate * age)
    recency = _relative(inside, ids, related, freshness)
    negatives = [0.0] * len(ids)
    for position in inside:
        negatives[position] = -(similarities[position] * factors[position] * recency[position])
    # Sorting positions by score: stable, so equal scores keep their input order. The band
    # comes first even where its lowest score is 0 (an ancient memory with recency floor 0).
    order = sorted(inside, key=negatives.__getitem__)
    scale = 0.0
    if len(inside) < len(ids):
        # Every band score is >= lowest, and each of these is < lowest (similarity < best).
        scale = -negatives[order[-1]] / best
        joined = set(inside)
        below = [i for i in range(len(ids)) if i not in joined]
        # Stable in reverse too: equal similarities keep their input order.
        order += sorted(below, key=similarities.__getitem__, reverse=True)
    if limit > 0:
        order = order[:limit]
    return _results(
        order,
        candidates,
        records,
        now=now,
        alpha=alpha,
        scale=scale,
        negatives=negatives,
        factors=factors,
        recency=recency,
    )


def _results(
    order: Sequence[int],
    candidates: Columns,
    records: Mapping[str, MentionRecord],
    *,
    now: float,
    alpha: float,
    scale: float,
    negatives: Sequence[float],
    factors: Mapping[int, float],
    recency: Mapping[int, float],
) -> list[Scored]:
    """The `Scored` records of `order`, in one loop (a call per record costs more than its
    arithmetic); a position without a factor is below the band, scored `similarity * scale`."""
    ids, similarities, activities, _, _ = candidates
    get = records.get
    log1p = math.log1p
    results = []
    for position in order:
        memory_id = ids[position]
        record = get(memory_id)
        mentions = 0
        newest = activities[position]
        if record is not None:
            mentions = record.mentions
            newest = max(newest, record.last_reinforced_at)
        age = now - newest if newest < now else 0.0
        factor = factors.get(position)
        if factor is None:
            score = similarities[position] * scale
            factor = 1.0 + alpha * log1p(mentions)
        else:
            score = -negatives[position]
        results.append(
            Scored(
                memory_id,
                score,
                similarities[position],
                mentions,
                factor,
                # Below the band neither mentions nor recency acted: its recency is reported as 1.
                recency.get(position, 1.0),
                age / SECONDS_PER_DAY,
            )
        )
    return results


def _groups(
    positions: Sequence[int],
    ids: Sequence[str],
    links: Sequence[Sequence[str]] | Mapping[int, Sequence[str]],
) -> dict[int, int]:
    """Each of `positions` mapped to a representative of its group: the positions it names in
    `links` (by memory id), either way round and through each other (union-find)."""
    position_of = {ids[p]: p for p in positions}
    return linked_groups(
        positions, lambda p: (position_of[i] for i in links[p] if i in position_of)
    )


def _fact_mentions(
    ids: Sequence[str],
    restatements: Sequence[Sequence[str]],
    records: Mapping[str, MentionRecord],
) -> list[int]:
    """Per candidate, the mentions of its fact: every statement of the fact among the
    candidates (each restatement is one, plus its own mentions) beyond the first.

    Only candidates that name a restatement or are named by one are grouped; the rest (most
    of them) keep their own count.
    """
    own = [record.mentions if (record := records.get(i)) is not None else 0 for i in ids]
    named = {other for links in restatements for other in links}
    linked = [p for p, i in enumerate(ids) if restatements[p] or i in named]
    roots = _groups(linked, ids, restatements)
    statements: dict[int, int] = {}
    for position, top in roots.items():
        statements[top] = statements.get(top, 0) + 1 + own[position]
    for position, top in roots.items():
        own[position] = statements[top] - 1
    return own


def _mentions(
    position: int,
    ids: Sequence[str],
    records: Mapping[str, MentionRecord],
    told: Sequence[int] | None,
) -> int:
    if told is not None:
        return told[position]
    record = records.get(ids[position])
    return record.mentions if record is not None else 0


def _relative(
    inside: Sequence[int],
    ids: Sequence[str],
    related: Sequence[Sequence[str]],
    freshness: Mapping[int, float],
) -> dict[int, float]:
    """Each band candidate's freshness over the freshest of its group: the band candidates it
    is related to, either way round and through each other (union-find over positions)."""
    links = {p: related[p] for p in inside}  # each read once: `related` may cut them on demand
    named = list(itertools.chain.from_iterable(links.values()))
    if not named or {ids[p] for p in inside}.isdisjoint(named):
        # No band candidate names another: each is a group of its own, compared with itself.
        return dict.fromkeys(inside, 1.0)
    roots = _groups(inside, ids, links)
    freshest: dict[int, float] = {}
    for position in inside:
        top = roots[position]
        freshest[top] = max(freshest.get(top, 0.0), freshness[position])
    return {p: freshness[p] / freshest[roots[p]] if freshest[roots[p]] > 0 else 1.0 for p in inside}

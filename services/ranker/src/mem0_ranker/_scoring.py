"""The rerank formula, kept pure so its properties can be tested without a database or a server.

score = similarity * (1 + alpha * ln(1 + mentions)) * recency
recency = floor + (1 - floor) * 0.5 ** (age_days / half_life_days)

Age runs from a memory's newest activity (mem0's updated time, else its created time, or the
last counted reinforcement, whichever is newest), so restating a fact also freshens it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

SECONDS_PER_DAY = 86400.0


@dataclass(frozen=True, slots=True)
class ScoringParams:
    alpha: float
    half_life_days: float
    recency_floor: float


class Candidate(NamedTuple):
    """A mem0 hit as the ranker sees it; `activity_at` is epoch seconds of its newest update.

    Named tuples, not dataclasses, for the per-candidate types: a rerank builds thousands of
    them per second and a tuple is the cheapest immutable record Python has.
    """

    memory_id: str
    similarity: float
    activity_at: float


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
    """Candidates as three parallel lists: how the service hands a request to `rank_columns`,
    so a rerank builds no object per candidate."""

    memory_ids: list[str]
    similarities: list[float]
    activity_at: list[float]


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
    )
    return rank_columns(columns, records, now, params, limit)


def rank_columns(
    candidates: Columns,
    records: Mapping[str, MentionRecord],
    now: float,
    params: ScoringParams,
    limit: int = 0,
) -> list[Scored]:
    """`rank` over columns. This runs on every search, so it is one flat loop over plain floats:
    the recency fade is `exp(rate * age_seconds)` with the rate worked out once (the same curve
    as `0.5 ** (age_days / half_life_days)`), and a memory never reinforced (most of them) skips
    the mention factor, which is exactly 1. Only the returned few become `Scored` records.
    """
    alpha = params.alpha
    floor = params.recency_floor
    fade = 1.0 - floor
    rate = -math.log(2.0) / (params.half_life_days * SECONDS_PER_DAY)
    exp = math.exp
    log1p = math.log1p
    get = records.get
    ids, similarities, activities = candidates
    negatives = []
    for memory_id, similarity, activity in zip(ids, similarities, activities, strict=True):
        record = get(memory_id)
        newest = activity
        factor = 1.0
        if record is not None:
            factor += alpha * log1p(record.mentions)
            newest = max(activity, record.last_reinforced_at)
        # A timestamp in the future (clock skew) counts as age 0, never as a bonus.
        age = now - newest if newest < now else 0.0
        negatives.append(-(similarity * factor * (floor + fade * exp(rate * age))))
    # Sorting positions by score: stable, so equal scores keep their input order.
    order = sorted(range(len(negatives)), key=negatives.__getitem__)
    if limit > 0:
        order = order[:limit]
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
        results.append(
            Scored(
                memory_id,
                -negatives[position],
                similarities[position],
                mentions,
                1.0 + alpha * log1p(mentions) if mentions else 1.0,
                floor + fade * exp(rate * age),
                age / SECONDS_PER_DAY,
            )
        )
    return results

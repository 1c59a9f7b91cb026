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
    """Best first; equal scores keep mem0's order (a stable sort), so results are reproducible.

    This runs on every search, so it is one flat loop; the factors are kept with each score
    so the caller can show why a memory ranked where it did.
    """
    alpha = params.alpha
    floor = params.recency_floor
    fade = 1.0 - floor
    half_life = params.half_life_days
    log1p = math.log1p
    # Plain tuples while sorting (position breaks ties, so the rest is never compared); the
    # named result is built only for what is returned, usually `limit` of many candidates.
    keyed = []
    for position, c in enumerate(candidates):
        record = records.get(c.memory_id)
        newest = c.activity_at
        mentions = 0
        if record is not None:
            mentions = record.mentions
            newest = max(newest, record.last_reinforced_at)
        # A timestamp in the future (clock skew) counts as age 0, never as a bonus.
        age_days = max(now - newest, 0.0) / SECONDS_PER_DAY
        factor = 1.0 + alpha * log1p(mentions)
        fresh = floor + fade * 0.5 ** (age_days / half_life)
        keyed.append(
            (-(c.similarity * factor * fresh), position, mentions, factor, fresh, age_days)
        )
    keyed.sort()
    chosen = keyed[:limit] if limit > 0 else keyed
    return [
        Scored(
            candidates[position].memory_id,
            -negative,
            candidates[position].similarity,
            mentions,
            factor,
            fresh,
            age_days,
        )
        for negative, position, mentions, factor, fresh, age_days in chosen
    ]

"""The rerank formula's promises, checked as properties over generated inputs."""

from __future__ import annotations

import itertools
import math

from hypothesis import given
from hypothesis import strategies as st

from mem0_ranker import Candidate, MentionRecord, ScoringParams, rank
from mem0_ranker._scoring import SECONDS_PER_DAY, score

NOW = 1_796_212_800.0
DEFAULTS = ScoringParams(alpha=0.2, half_life_days=90.0, recency_floor=0.6)

similarities = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
mention_counts = st.integers(min_value=0, max_value=10_000)
ages_days = st.floats(min_value=0.0, max_value=20 * 365.0, allow_nan=False)
params = st.builds(
    ScoringParams,
    alpha=st.floats(min_value=0.0, max_value=3.0),
    half_life_days=st.floats(min_value=0.5, max_value=3650.0),
    recency_floor=st.floats(min_value=0.0, max_value=1.0),
)


def _scored(
    similarity: float, mentions: int, age_days: float, p: ScoringParams = DEFAULTS
) -> float:
    candidate = Candidate("m", similarity, NOW - age_days * SECONDS_PER_DAY)
    record = MentionRecord(mentions, 0.0) if mentions else None
    return score(candidate, record, NOW, p).score


@given(similarities, similarities, mention_counts, ages_days, params)
def test_score_is_monotonic_in_similarity(
    a: float, b: float, mentions: int, age: float, p: ScoringParams
) -> None:
    low, high = sorted((a, b))
    assert _scored(low, mentions, age, p) <= _scored(high, mentions, age, p)


@given(similarities, mention_counts, mention_counts, ages_days, params)
def test_score_is_monotonic_in_mentions(
    similarity: float, a: int, b: int, age: float, p: ScoringParams
) -> None:
    low, high = sorted((a, b))
    assert _scored(similarity, low, age, p) <= _scored(similarity, high, age, p)


@given(similarities, mention_counts, ages_days, params)
def test_score_never_falls_below_the_floor_share(
    similarity: float, mentions: int, age: float, p: ScoringParams
) -> None:
    candidate = Candidate("m", similarity, NOW - age * SECONDS_PER_DAY)
    result = score(candidate, MentionRecord(mentions, 0.0), NOW, p)
    assert result.recency >= p.recency_floor
    assert result.score >= similarity * result.mention_factor * p.recency_floor * (1 - 1e-12)


@given(
    st.floats(min_value=0.01, max_value=1.0),
    mention_counts,
    st.floats(min_value=0.0, max_value=5 * 365.0),
    st.floats(min_value=0.0, max_value=5 * 365.0),
)
def test_newer_beats_older_at_equal_similarity_and_mentions(
    similarity: float, mentions: int, a: float, b: float
) -> None:
    # Within five years a day's difference is far above float resolution, so it must show;
    # closer ages only must not invert.
    newer, older = sorted((a, b))
    assert _scored(similarity, mentions, newer) >= _scored(similarity, mentions, older)
    if older - newer >= 1.0:
        assert _scored(similarity, mentions, newer) > _scored(similarity, mentions, older)


@given(st.lists(st.sampled_from([0.2, 0.5, 0.9]), min_size=1, max_size=30))
def test_equal_scores_keep_the_input_order(similarities_in: list[float]) -> None:
    candidates = [Candidate(f"m{i}", s, NOW) for i, s in enumerate(similarities_in)]
    ranked = rank(candidates, {}, NOW, DEFAULTS)
    position = {c.memory_id: i for i, c in enumerate(candidates)}
    for first, second in itertools.pairwise(ranked):
        assert first.score >= second.score
        if first.score == second.score:
            assert position[first.memory_id] < position[second.memory_id]


def test_recency_halves_its_fading_part_every_half_life() -> None:
    result = score(Candidate("m", 1.0, NOW - 90 * SECONDS_PER_DAY), None, NOW, DEFAULTS)
    assert math.isclose(result.recency, 0.6 + 0.4 * 0.5)
    assert math.isclose(result.age_days, 90.0)


def test_age_runs_from_the_newest_of_update_and_reinforcement() -> None:
    candidate = Candidate("m", 1.0, NOW - 300 * SECONDS_PER_DAY)
    reinforced = MentionRecord(mentions=2, last_reinforced_at=NOW - 10 * SECONDS_PER_DAY)
    result = score(candidate, reinforced, NOW, DEFAULTS)
    assert math.isclose(result.age_days, 10.0)
    assert math.isclose(result.mention_factor, 1 + 0.2 * math.log(3))


def test_a_future_timestamp_counts_as_age_zero() -> None:
    result = score(Candidate("m", 0.5, NOW + 3600), None, NOW, DEFAULTS)
    assert result.age_days == 0.0
    assert result.recency == 1.0


def test_limit_keeps_only_the_best() -> None:
    candidates = [Candidate(f"m{i}", i / 10, NOW) for i in range(10)]
    ranked = rank(candidates, {}, NOW, DEFAULTS, limit=3)
    assert [s.memory_id for s in ranked] == ["m9", "m8", "m7"]

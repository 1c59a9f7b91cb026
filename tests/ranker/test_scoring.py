"""The rerank formula's promises, checked as properties over generated inputs."""

from __future__ import annotations

import itertools
import math

from hypothesis import given
from hypothesis import strategies as st

from mem0_ranker import Candidate, MentionRecord, ScoringParams, rank
from mem0_ranker._scoring import SECONDS_PER_DAY, Scored, score

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
    similarity_margin=st.floats(min_value=0.0, max_value=1.0),
    mention_margin=st.floats(min_value=0.0, max_value=1.0),
    mention_band_min=st.integers(min_value=1, max_value=20),
)
#: Candidates with their mention counts, ages (days) and the index of a candidate each one is
#: related to (when in range), for properties of a whole ranking.
pools = st.lists(
    st.tuples(similarities, mention_counts, ages_days, st.integers(min_value=0, max_value=30)),
    min_size=1,
    max_size=25,
)
Pool = list[tuple[float, int, float, int]]


def _ranked(pool: Pool, p: ScoringParams) -> list[Scored]:
    candidates = [
        Candidate(f"m{i}", s, NOW - age * SECONDS_PER_DAY, (f"m{other}",))
        for i, (s, _, age, other) in enumerate(pool)
    ]
    records = {f"m{i}": MentionRecord(m, 0.0) for i, (_, m, _, _) in enumerate(pool) if m}
    return rank(candidates, records, NOW, p)


def _order(*candidates: Candidate, p: ScoringParams = DEFAULTS) -> list[str]:
    return [s.memory_id for s in rank(candidates, {}, NOW, p)]


def _days_ago(days: float) -> float:
    return NOW - days * SECONDS_PER_DAY


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
    st.floats(min_value=0.0, max_value=5 * 365.0),
    st.floats(min_value=0.0, max_value=5 * 365.0),
)
def test_newer_beats_older_at_equal_similarity_when_related(
    similarity: float, a: float, b: float
) -> None:
    # Within five years a day's difference is far above float resolution, so it must show;
    # closer ages only must not invert.
    newer_age, older_age = sorted((a, b))
    ranked = rank(
        [
            Candidate("older", similarity, _days_ago(older_age)),
            Candidate("newer", similarity, _days_ago(newer_age), ("older",)),
        ],
        {},
        NOW,
        DEFAULTS,
    )
    scores = {s.memory_id: s.score for s in ranked}
    assert scores["newer"] >= scores["older"]
    if older_age - newer_age >= 1.0:
        assert scores["newer"] > scores["older"]
        assert ranked[0].memory_id == "newer"


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
    old = Candidate("old", 1.0, _days_ago(90))
    ranked = rank([old, Candidate("new", 1.0, NOW, ("old",))], {}, NOW, DEFAULTS)
    result = next(s for s in ranked if s.memory_id == "old")
    assert math.isclose(result.recency, 0.6 + 0.4 * 0.5)
    assert math.isclose(result.age_days, 90.0)


# --- recency: age counts only against a fresher related memory --------------------------------


def test_age_does_not_reorder_unrelated_candidates_in_the_band() -> None:
    # A port stated a year ago and a timeout stated today: the better match stays first.
    assert _order(Candidate("old", 0.80, _days_ago(365)), Candidate("new", 0.79, NOW)) == [
        "old",
        "new",
    ]


def test_a_newer_related_candidate_outranks_an_older_better_match_in_the_band() -> None:
    old, new = Candidate("old", 0.80, _days_ago(365)), Candidate("new", 0.79, NOW, ("old",))
    assert _order(old, new) == ["new", "old"]
    # Either way round: the older one naming the newer is the same relation.
    old, new = Candidate("old", 0.80, _days_ago(365), ("new",)), Candidate("new", 0.79, NOW)
    assert _order(old, new) == ["new", "old"]


def test_relations_chain_through_a_third_candidate() -> None:
    first = Candidate("first", 0.80, _days_ago(365))
    second = Candidate("second", 0.70, _days_ago(200), ("first",))
    third = Candidate("third", 0.79, NOW, ("second",))
    p = ScoringParams(0.2, 90.0, 0.6, similarity_margin=0.5)
    assert _order(first, second, third, p=p)[0] == "third"


def test_a_candidate_with_no_fresher_relative_keeps_its_whole_score() -> None:
    ranked = rank(
        [Candidate("alone", 0.5, _days_ago(3650)), Candidate("old", 0.5, _days_ago(100))],
        {},
        NOW,
        DEFAULTS,
    )
    assert [(s.score, s.recency) for s in ranked] == [(0.5, 1.0), (0.5, 1.0)]


def test_a_relation_to_a_memory_outside_the_band_changes_nothing() -> None:
    p = ScoringParams(0.2, 90.0, 0.6, similarity_margin=0.05)
    old = Candidate("old", 0.80, _days_ago(365), ("far",))
    assert _order(old, Candidate("new", 0.79, NOW), Candidate("far", 0.2, NOW), p=p) == [
        "old",
        "new",
        "far",
    ]


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


# --- the band: mentions and recency reorder only near-best candidates -------------------------


@given(pools, params)
def test_a_candidate_below_the_band_never_outranks_a_more_similar_one(
    pool: Pool, p: ScoringParams
) -> None:
    ranked = _ranked(pool, p)
    best = max(s.similarity for s in ranked)
    band = best * (1 - p.similarity_margin)
    reach = best * (1 - p.mention_margin)
    for i, lower in enumerate(ranked):
        lifted = lower.similarity >= reach and lower.mentions >= p.mention_band_min
        if lower.similarity < band and not lifted:
            assert all(later.similarity <= lower.similarity for later in ranked[i + 1 :])


@given(pools, params)
def test_scores_fall_as_ranks_do(pool: Pool, p: ScoringParams) -> None:
    ranked = _ranked(pool, p)
    for first, second in itertools.pairwise(ranked):
        assert first.score >= second.score


@given(pools, params)
def test_a_margin_of_one_is_the_unbanded_formula(pool: Pool, p: ScoringParams) -> None:
    unbanded = ScoringParams(
        p.alpha,
        p.half_life_days,
        p.recency_floor,
        similarity_margin=1.0,
        mention_margin=p.mention_margin,
        mention_band_min=p.mention_band_min,
    )
    for s in _ranked(pool, unbanded):
        assert math.isclose(s.score, s.similarity * s.mention_factor * s.recency, abs_tol=1e-12)


def test_mentions_lift_a_candidate_within_the_margin_of_the_best() -> None:
    p = ScoringParams(0.2, 90.0, 0.6, similarity_margin=0.05)
    candidates = [Candidate("best", 1.0, NOW), Candidate("close", 0.97, NOW)]
    ranked = rank(candidates, {"close": MentionRecord(5, NOW)}, NOW, p)
    assert [s.memory_id for s in ranked] == ["close", "best"]


def test_mentions_do_not_lift_a_candidate_outside_the_margin() -> None:
    p = ScoringParams(0.2, 90.0, 0.6, similarity_margin=0.05)
    candidates = [Candidate("best", 1.0, NOW), Candidate("far", 0.9, NOW)]
    ranked = rank(candidates, {"far": MentionRecord(50, NOW)}, NOW, p)
    assert [s.memory_id for s in ranked] == ["best", "far"]


def test_an_old_best_match_is_not_sunk_below_a_fresh_weaker_one() -> None:
    p = ScoringParams(0.2, 30.0, 0.3, similarity_margin=0.05)
    candidates = [Candidate("old", 1.0, NOW - 3650 * SECONDS_PER_DAY), Candidate("new", 0.8, NOW)]
    assert [s.memory_id for s in rank(candidates, {}, NOW, p)] == ["old", "new"]


# --- restatements: every statement of a fact counts, however it was worded ------------------

#: The shipped band and mention reach (RANKER_SIMILARITY_MARGIN, RANKER_MENTION_MARGIN).
SHIPPED = ScoringParams(0.2, 90.0, 0.6, similarity_margin=0.045, mention_margin=0.08)


def _fact(name: str, similarities_of_wordings: list[float]) -> list[Candidate]:
    """One fact in several wordings, each a memory naming the first as its restatement."""
    first = f"{name}0"
    return [
        Candidate(f"{name}{i}", s, NOW, restatements=(first,) if i else ())
        for i, s in enumerate(similarities_of_wordings)
    ]


def test_restatements_count_as_mentions_of_the_fact_in_the_band() -> None:
    p = ScoringParams(0.2, 90.0, 0.6, similarity_margin=0.05)
    wordings = _fact("w", [0.97, 0.5, 0.4])
    unaware = [c._replace(restatements=()) for c in wordings]
    best = Candidate("best", 1.0, NOW)
    assert _order(best, *unaware, p=p)[0] == "best"
    ranked = rank([best, *wordings], {}, NOW, p)
    assert ranked[0].memory_id == "w0"
    assert ranked[0].mentions == 0
    assert math.isclose(ranked[0].mention_factor, 1 + 0.2 * math.log(3))


def test_a_restatements_own_mentions_count_for_the_fact_too() -> None:
    wordings = _fact("w", [0.9, 0.5])
    (scored,) = [
        s
        for s in rank(wordings, {"w1": MentionRecord(3, 0.0)}, NOW, SHIPPED)
        if s.memory_id == "w0"
    ]
    # Two memories, one of them said four times: five statements, four mentions.
    assert math.isclose(scored.mention_factor, 1 + 0.2 * math.log(5))


@given(st.lists(st.integers(min_value=0, max_value=5), min_size=2, max_size=6))
def test_a_restatement_counts_the_same_named_either_way_round(links: list[int]) -> None:
    forward = [
        Candidate(f"m{i}", 0.9 - i / 100, NOW, restatements=(f"m{links[i] % len(links)}",))
        for i in range(len(links))
    ]
    named_back: dict[str, list[str]] = {c.memory_id: [] for c in forward}
    for c in forward:
        for other in c.restatements:
            named_back[other].append(c.memory_id)
    backward = [c._replace(restatements=tuple(named_back[c.memory_id])) for c in forward]
    forward_factors = {s.memory_id: s.mention_factor for s in rank(forward, {}, NOW, SHIPPED)}
    backward_factors = {s.memory_id: s.mention_factor for s in rank(backward, {}, NOW, SHIPPED)}
    assert forward_factors == backward_factors


def test_a_much_restated_fact_reaches_from_the_mention_margin() -> None:
    best = Candidate("best", 1.0, NOW)
    thrice = _fact("t", [0.93, 0.3, 0.2])
    assert _order(best, *thrice, p=SHIPPED)[0] == "t0"


def test_a_fact_restated_once_does_not_reach_past_the_band() -> None:
    best = Candidate("best", 1.0, NOW)
    twice = _fact("t", [0.93, 0.3])
    assert _order(best, *twice, p=SHIPPED)[:2] == ["best", "t0"]


def test_no_number_of_mentions_reaches_past_the_mention_margin() -> None:
    best = Candidate("best", 1.0, NOW)
    far = Candidate("far", 0.91, NOW)
    ranked = rank([best, far], {"far": MentionRecord(10_000, NOW)}, NOW, SHIPPED)
    assert [s.memory_id for s in ranked] == ["best", "far"]


def test_a_mention_margin_inside_the_band_changes_nothing() -> None:
    p = ScoringParams(0.2, 90.0, 0.6, similarity_margin=0.05, mention_margin=0.02)
    best = Candidate("best", 1.0, NOW)
    far = Candidate("far", 0.93, NOW)
    ranked = rank([best, far], {"far": MentionRecord(10_000, NOW)}, NOW, p)
    assert [s.memory_id for s in ranked] == ["best", "far"]

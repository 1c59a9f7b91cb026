"""The load benchmark's facts, against the fake judge's own rule and the workload's bookkeeping.

The benchmark counts a restatement that does not reinforce, or a change that does not update,
as the bridge's fault; that is only fair if the fake judge really calls them SAME and
SUPERSEDES, and two different facts UNRELATED, whatever the wording.
"""

from __future__ import annotations

import itertools

import pytest

from bench.load.facts import KINDS, TEMPLATES, Fact, fact_pool, made_up_word, values_in
from bench.load.workload import FactState
from tests.fakes.judge_responder import verdict

POOL = fact_pool(8, ("api", "web"))


@pytest.mark.parametrize("fact", POOL, ids=lambda f: f.fact_id)
def test_every_two_wordings_of_one_value_are_the_same_fact(fact: Fact) -> None:
    for one, other in itertools.combinations(range(len(TEMPLATES)), 2):
        assert verdict(fact.text(other, 1), fact.text(one, 1))[0] == "SAME"


def test_a_changed_value_supersedes_in_any_wording() -> None:
    fact = POOL[0]
    for one, other in itertools.product(range(len(TEMPLATES)), repeat=2):
        for old, new in itertools.permutations(range(len(fact.values)), 2):
            assert verdict(fact.text(one, new), fact.text(other, old))[0] == "SUPERSEDES"


def test_different_facts_are_unrelated_even_of_the_same_kind() -> None:
    for a, b in itertools.combinations(POOL, 2):
        for one, other in itertools.product(range(len(TEMPLATES)), repeat=2):
            assert verdict(a.text(one, 0), b.text(other, 0))[0] == "UNRELATED"


def test_the_value_is_the_only_token_with_a_digit() -> None:
    for fact in POOL:
        for wording, value in itertools.product(range(len(TEMPLATES)), range(3)):
            assert values_in(fact.text(wording, value)) == {fact.values[value]}


def test_fact_ids_are_stable_and_words_unique_across_offsets() -> None:
    again = fact_pool(8, ("api", "web"))
    later = fact_pool(8, ("api", "web"), offset=1000)

    assert [f.fact_id for f in again] == [f.fact_id for f in POOL]
    assert again == POOL
    words = [w for f in [*POOL, *later] for w in f.words]
    assert len(set(words)) == len(words)


def test_made_up_words_are_distinct_and_digit_free() -> None:
    words = [made_up_word(n) for n in range(5000)]

    assert len(set(words)) == len(words)
    assert not any(ch.isdigit() for w in words for ch in w)
    with pytest.raises(ValueError, match="out of range"):
        made_up_word(-1)


def test_every_kind_has_distinct_values() -> None:
    for _, values in KINDS:
        assert len(set(values)) == len(values) > 1


def test_a_restatement_is_not_a_value_change_for_change_back() -> None:
    state = FactState(POOL[0])
    for value in (0, 0, 1, 1):  # add, restate, change, restate
        state.acknowledged(value)

    assert state.current == 1
    assert state.previous_value() == 0
    assert state.next_value() == 2

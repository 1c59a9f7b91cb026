"""The load benchmark's facts, against the fake judge's own rule and the workload's bookkeeping.

The benchmark counts a restatement that does not reinforce, or a change that does not update,
as the bridge's fault; that is only fair if the fake judge really calls them SAME and
SUPERSEDES, and two different facts UNRELATED, whatever the wording: the plain templates and
the new-style ones agents use for changes, changes back and restatements ("X moved to N").
"""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest

from bench.load.facts import (
    KINDS,
    NEW_TEMPLATES,
    NEW_WORDINGS,
    TEMPLATES,
    WORDINGS,
    Fact,
    fact_pool,
    made_up_word,
    values_in,
)
from bench.load.workload import NEW_STYLE_SHARE, FactState, choose_wording
from tests.fakes.judge_responder import split_words, verdict

POOL = fact_pool(8, ("api", "web"))


@pytest.mark.parametrize("fact", POOL, ids=lambda f: f.fact_id)
def test_every_two_wordings_of_one_value_are_the_same_fact(fact: Fact) -> None:
    for one, other in itertools.permutations(range(len(WORDINGS)), 2):
        assert verdict(fact.text(other, 1), fact.text(one, 1))[0] == "SAME"


@pytest.mark.parametrize("fact", POOL[:4], ids=lambda f: f.kind)
def test_a_changed_value_supersedes_in_any_wording(fact: Fact) -> None:
    for one, other in itertools.product(range(len(WORDINGS)), repeat=2):
        for old, new in itertools.permutations(range(len(fact.values)), 2):
            assert verdict(fact.text(one, new), fact.text(other, old))[0] == "SUPERSEDES"


def test_different_facts_are_unrelated_even_of_the_same_kind_and_wording() -> None:
    for a, b in itertools.combinations(POOL, 2):
        for one, other in itertools.product(range(len(WORDINGS)), repeat=2):
            assert verdict(a.text(one, 0), b.text(other, 0))[0] == "UNRELATED"


def test_the_value_is_the_only_token_with_a_digit() -> None:
    for fact in POOL:
        for wording, value in itertools.product(range(len(WORDINGS)), range(3)):
            assert values_in(fact.text(wording, value)) == {fact.values[value]}


def test_new_style_wordings_name_the_fact_and_use_new_verbs_or_placements() -> None:
    fact = POOL[0]
    texts = [fact.text(WORDINGS.index(t), 1) for t in NEW_TEMPLATES]

    assert all(set(fact.words) <= set(t.lower().rstrip(".").split()) for t in texts)
    assert {"moved", "back", "used", "uses"} <= {w for t in texts for w in t.lower().split()}
    assert any(t.startswith(fact.values[1]) for t in texts)  # value first
    assert any(t.startswith("Back to " + fact.values[1]) for t in texts)  # value in the middle


def test_a_verb_wording_naming_the_kind_too_would_relate_two_facts() -> None:
    """Why the verb wordings leave the kind out: the fake judge calls 2 shared words of 4
    related, so "X moved to port N" and "Y moved to port M" would be one fact changed."""
    a, b = POOL[0], POOL[4]  # two ports
    said = "The {} {} moved to port {}."

    assert a.kind == b.kind
    assert verdict(said.format(*a.words, 9000), said.format(*b.words, 8080))[0] == "SUPERSEDES"
    for template in NEW_TEMPLATES:
        content, _ = split_words(template.format(a="", b="", kind=a.kind, value="1"))
        assert len(content) <= 1, template


def test_every_new_style_wording_belongs_to_one_operation() -> None:
    chosen = [i for indices in NEW_WORDINGS.values() for i in indices]

    assert sorted(chosen) == list(range(len(TEMPLATES), len(WORDINGS)))
    assert set(NEW_WORDINGS) == {"change", "change_back", "restate"}


@pytest.mark.parametrize("op", ["change", "change_back", "restate"])
def test_about_a_third_of_changes_backs_and_restatements_use_a_new_wording(op: str) -> None:
    rng = random.Random(1)
    picks = [choose_wording(rng, op) for _ in range(3000)]
    new = [w for w in picks if w >= len(TEMPLATES)]

    assert abs(len(new) / len(picks) - NEW_STYLE_SHARE) < 0.03
    assert set(new) == set(NEW_WORDINGS[op])
    assert set(Counter(w for w in picks if w < len(TEMPLATES))) == set(range(len(TEMPLATES)))


def test_a_new_fact_is_always_worded_plainly() -> None:
    rng = random.Random(1)

    assert all(choose_wording(rng, "new") < len(TEMPLATES) for _ in range(300))


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

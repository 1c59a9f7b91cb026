"""The committed dataset keeps its promises, and the validator catches the broken ones."""

from __future__ import annotations

import dataclasses
from collections import Counter
from datetime import timedelta

import pytest

from bench.eval import generate
from bench.eval._dataset import (
    DATASET_PATH,
    KINDS,
    MIN_FACTS,
    MIN_QUERIES,
    MIN_QUERIES_PER_KIND,
    Dataset,
    Query,
    load,
    subset,
    validate,
)


@pytest.fixture(scope="module")
def dataset() -> Dataset:
    return load()


def test_the_committed_dataset_is_valid(dataset: Dataset) -> None:
    assert validate(dataset) == []


def test_the_committed_dataset_is_what_the_generator_writes() -> None:
    assert DATASET_PATH.read_text() == generate.render(generate.generate())


def test_the_dataset_has_the_sizes_the_issue_asks_for(dataset: Dataset) -> None:
    per_kind = Counter(q.kind for q in dataset.queries)
    assert len(dataset.facts) >= MIN_FACTS
    assert len(dataset.queries) >= MIN_QUERIES
    assert all(per_kind[kind] >= MIN_QUERIES_PER_KIND for kind in KINDS)
    assert {f.scope for f in dataset.facts} >= {*dataset.projects, "global"}


def test_reconfirmed_facts_are_restated_two_to_six_times(dataset: Dataset) -> None:
    said = Counter(e.fact for e in dataset.events)
    gold = [f for f in dataset.facts if f.kind == "reconfirmed" and f.role == "gold"]
    neighbours = [f for f in dataset.facts if f.role == "neighbour"]
    assert gold
    assert all(2 <= said[f.id] <= 6 for f in gold)
    assert all(said[f.id] == 1 for f in neighbours)


def test_reverted_facts_come_back_to_their_first_value(dataset: Dataset) -> None:
    reverted = [f for f in dataset.facts if f.kind == "reverted"]
    assert reverted
    assert all(f.values[0] == f.current and len(f.values) == 2 for f in reverted)


@pytest.fixture
def tiny(dataset: Dataset) -> Dataset:
    return subset(dataset, 2)


def _loose(d: Dataset) -> list[str]:
    return validate(d, min_facts=0, min_queries=0, min_queries_per_kind=0)


def test_a_subset_keeps_the_competing_facts_and_stays_valid(tiny: Dataset) -> None:
    assert _loose(tiny) == []
    assert Counter(q.kind for q in tiny.queries) == dict.fromkeys(KINDS, 2)
    assert any(f.role == "neighbour" for f in tiny.facts)


def test_the_validator_reports_a_dataset_too_small(tiny: Dataset) -> None:
    problems = validate(tiny)
    assert any("facts, fewer than" in p for p in problems)
    assert any("static queries, fewer than" in p for p in problems)


def test_the_validator_reports_a_dangling_gold_id(tiny: Dataset) -> None:
    broken = dataclasses.replace(
        tiny, queries=(*tiny.queries, Query("Q9999", "static", "question", "atlas", "?", "F9999"))
    )
    assert any("unknown gold fact F9999" in p for p in _loose(broken))


def test_the_validator_reports_duplicate_ids(tiny: Dataset) -> None:
    broken = dataclasses.replace(tiny, facts=(*tiny.facts, tiny.facts[0]))
    assert any(f"fact id {tiny.facts[0].id} is used 2 times" in p for p in _loose(broken))


def test_the_validator_reports_events_out_of_order(tiny: Dataset) -> None:
    first, second, *rest = tiny.events
    late = dataclasses.replace(first, time=second.time + timedelta(days=1))
    broken = dataclasses.replace(tiny, events=(late, second, *rest))
    assert any("out of order" in p for p in _loose(broken))


def test_the_validator_reports_a_query_for_another_projects_fact(tiny: Dataset) -> None:
    fact = next(f for f in tiny.facts if f.scope != "global")
    elsewhere = next(p for p in tiny.projects if p != fact.scope)
    query = Query("Q9999", "other_project", "question", elsewhere, "?", fact.id)
    broken = dataclasses.replace(tiny, queries=(*tiny.queries, query))
    assert any("asks from" in p for p in _loose(broken))

"""Which search candidates restate each other's values (`restatements(...).by`), and since when
(`.at`)."""

from __future__ import annotations

from datetime import datetime

import pytest

from mem0_bridge._mem0 import RELATED_KEY, Memory
from mem0_bridge._searching import MAX_RESTATEMENTS, restatements
from mem0_bridge._wording import same_values


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (
            "The image proxy has a CPU limit of 1 cores.",
            "The image proxy is capped at 1 CPU cores.",
        ),
        (
            "The tax calculator is written in Go 1.22.",
            "The tax calculator is implemented in Go 1.22.",
        ),
        ("Alerts go to #ops-alerts.", "Failures are posted to #ops-alerts."),
    ],
)
def test_the_same_values_in_other_words_are_a_restatement(first: str, second: str) -> None:
    assert same_values(first, second)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("The image proxy has a CPU limit of 1 cores.", "The image proxy may use 0.5 CPU cores."),
        ("The service is written in Go 1.22.", "The service is written in Kotlin 1.22."),
        # No value: a change in words ("growth" -> "platform") would look like a restatement.
        ("The growth team owns the API.", "The platform team owns the API."),
    ],
)
def test_other_values_or_no_value_at_all_are_not_a_restatement(first: str, second: str) -> None:
    assert not same_values(first, second)


def _memory(memory_id: str, text: str, created: str, related: list[str] | None = None) -> Memory:
    return Memory(
        id=memory_id,
        text=text,
        run_id="p",
        user_id="u",
        created_at=created,
        updated_at=None,
        metadata={RELATED_KEY: related} if related else {},
    )


def _reverted_port() -> tuple[Memory, Memory, Memory]:
    """8080, then the change to 9090, then 8080 again in other words (related to both)."""
    return (
        _memory("a", "The API port is 8080.", "2026-01-01T00:00:00+00:00"),
        _memory("b", "The API port is 9090.", "2026-02-01T00:00:00+00:00", ["a"]),
        _memory("c", "Port 8080 is what the API uses.", "2026-03-01T00:00:00Z", ["a", "b"]),
    )


def test_a_related_restatement_dates_the_memory_it_restates_either_way_round() -> None:
    first, change, again = _reverted_port()
    times = restatements([change, again, first]).at
    assert datetime.fromisoformat(times["a"]) == datetime.fromisoformat("2026-03-01T00:00:00Z")
    # The restatement itself is dated by the older memory's time, which is no news to it.
    assert times["c"] == "2026-01-01T00:00:00+00:00"
    assert "b" not in times


def test_an_unrelated_memory_with_the_same_values_restates_nothing() -> None:
    first = _memory("a", "The API port is 8080.", "2026-01-01T00:00:00+00:00")
    other = _memory("c", "Our API serves 8080 as well.", "2026-03-01T00:00:00Z")
    assert same_values(first.text, other.text)
    found = restatements([first, other])
    assert found.at == {}
    assert found.by == {}


def test_a_relation_to_a_memory_not_among_the_candidates_is_ignored() -> None:
    again = _memory("c", "Port 8080 is what the API uses.", "2026-03-01T00:00:00Z", ["gone"])
    found = restatements([again])
    assert found.at == {}
    assert found.by == {}


def test_each_memory_is_told_every_candidate_that_restates_it_either_way_round() -> None:
    first, change, again = _reverted_port()
    later = _memory("d", "The API listens on 8080.", "2026-04-01T00:00:00Z", ["c"])
    found = restatements([first, change, again, later])
    assert found.by == {"a": ("c",), "c": ("a", "d"), "d": ("c",)}


def test_a_memory_naming_itself_as_related_is_no_restatement_of_itself() -> None:
    itself = _memory("a", "The API port is 8080.", "2026-01-01T00:00:00+00:00", ["a"])
    found = restatements([itself])
    assert found.by == {}
    assert found.at == {}


def test_no_more_restatements_are_passed_on_than_the_ranker_takes() -> None:
    first = _memory("a", "The API port is 8080.", "2026-01-01T00:00:00+00:00")
    again = [
        _memory(f"r{i}", "Port 8080 is what the API uses.", "2026-02-01T00:00:00Z", ["a"])
        for i in range(MAX_RESTATEMENTS + 3)
    ]
    found = restatements([first, *again])
    assert len(found.by["a"]) == MAX_RESTATEMENTS

"""Which search candidates restate each other's values, and since when (`restated_at`)."""

from __future__ import annotations

from datetime import datetime

import pytest

from mem0_bridge._mem0 import RELATED_KEY, Memory
from mem0_bridge._searching import restated_at
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


def test_a_related_restatement_dates_the_memory_it_restates_either_way_round() -> None:
    first = _memory("a", "The API port is 8080.", "2026-01-01T00:00:00+00:00")
    change = _memory("b", "The API port is 9090.", "2026-02-01T00:00:00+00:00", ["a"])
    again = _memory("c", "Port 8080 is what the API uses.", "2026-03-01T00:00:00Z", ["a", "b"])
    times = restated_at([change, again, first])
    assert datetime.fromisoformat(times["a"]) == datetime.fromisoformat("2026-03-01T00:00:00Z")
    # The restatement itself is dated by the older memory's time, which is no news to it.
    assert times["c"] == "2026-01-01T00:00:00+00:00"
    assert "b" not in times


def test_an_unrelated_memory_with_the_same_values_restates_nothing() -> None:
    first = _memory("a", "The API port is 8080.", "2026-01-01T00:00:00+00:00")
    other = _memory("c", "Our API serves 8080 as well.", "2026-03-01T00:00:00Z")
    assert same_values(first.text, other.text)
    assert restated_at([first, other]) == {}


def test_a_relation_to_a_memory_not_among_the_candidates_is_ignored() -> None:
    again = _memory("c", "Port 8080 is what the API uses.", "2026-03-01T00:00:00Z", ["gone"])
    assert restated_at([again]) == {}

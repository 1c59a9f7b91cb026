"""The load benchmark's checker: acknowledgements + stored memories -> duplicates, lost, stale.

A gate is only as good as its checker, so each rule is pinned here on hand-made inputs.
"""

from __future__ import annotations

import pytest

from bench.load.checker import Ack, FactSpec, Stored, Unacked, check
from bench.load.workload import error_cause

PORT = FactSpec("api/000", "api", ("dababa", "gukuda"))
VERSION = FactSpec("web/001", "web", ("loroga", "nidola"))
SPECS = [PORT, VERSION]


def ack(value: str, at: float, *, fact: str = PORT.fact_id, action: str = "added") -> Ack:
    return Ack(fact, "change", value, action, ("m1",), sent_at=at - 0.5, acked_at=at)


def port(memory_id: str, value: str, wording: str = "The dababa gukuda port is {}.") -> Stored:
    return Stored(memory_id, "api", wording.format(value))


def test_a_fact_stored_once_with_its_latest_value_passes() -> None:
    result = check(SPECS, [ack("8080", 1), ack("9000", 2)], [], [port("m1", "9000")])

    assert result.passed
    assert result.summary()["acked_facts"] == 1
    assert result.changed_facts == 1


def test_two_wordings_of_one_fact_are_one_duplicate() -> None:
    stored = [port("m1", "8080"), port("m2", "8080", "{} is the port of the dababa gukuda.")]

    result = check(SPECS, [ack("8080", 1)], [], stored)

    assert (result.duplicated_facts, result.duplicate_memories) == (1, 1)
    assert result.stale == 0
    assert not result.passed


def test_extra_memories_are_counted_beyond_the_first() -> None:
    stored = [port(f"m{i}", "8080") for i in range(4)]

    result = check(SPECS, [ack("8080", 1)], [], stored)

    assert (result.duplicated_facts, result.duplicate_memories) == (1, 3)


def test_an_acknowledged_fact_without_a_memory_is_lost() -> None:
    result = check(SPECS, [ack("8080", 1), ack("1.4.2", 1, fact=VERSION.fact_id)], [], [])

    assert result.lost == 2
    assert result.stale == 0
    assert not result.passed


def test_a_memory_holding_an_older_value_is_stale() -> None:
    result = check(SPECS, [ack("8080", 1), ack("9000", 2)], [], [port("m1", "8080")])

    assert result.stale == 1
    assert result.facts[PORT.fact_id].latest == "9000"


def test_a_duplicate_with_the_old_value_is_both_duplicate_and_stale() -> None:
    stored = [port("m1", "9000"), port("m2", "8080")]

    result = check(SPECS, [ack("8080", 1), ack("9000", 2)], [], stored)

    assert (result.duplicate_memories, result.stale) == (1, 1)


def test_the_latest_value_is_the_last_acknowledged_not_the_last_sent() -> None:
    sent_late_acked_first = Ack(PORT.fact_id, "change", "9000", "updated", ("m1",), 5.0, 6.0)
    sent_early_acked_last = Ack(PORT.fact_id, "change", "9443", "updated", ("m1",), 4.0, 7.0)

    result = check(SPECS, [sent_early_acked_last, sent_late_acked_first], [], [port("m1", "9443")])

    assert result.passed
    assert result.facts[PORT.fact_id].latest == "9443"


def test_a_failed_change_sent_after_the_last_ack_may_have_landed() -> None:
    failed = Unacked(PORT.fact_id, "change", "9443", sent_at=3.0)

    result = check(SPECS, [ack("9000", 2)], [failed], [port("m1", "9443")])

    assert (result.stale, result.ambiguous) == (0, 1)
    assert result.passed


def test_a_failed_change_sent_before_the_last_ack_does_not_excuse_its_value() -> None:
    failed = Unacked(PORT.fact_id, "change", "9443", sent_at=0.5)

    result = check(SPECS, [ack("9000", 2)], [failed], [port("m1", "9443")])

    assert (result.stale, result.ambiguous) == (1, 0)


def test_a_memory_with_two_values_is_stale() -> None:
    stored = [Stored("m1", "api", "The dababa gukuda port is 9000, formerly 8080.")]

    result = check(SPECS, [ack("9000", 1)], [], stored)

    assert result.stale == 1


def test_memories_naming_no_fact_or_two_facts_are_unidentified_not_counted() -> None:
    stored = [
        port("m1", "8080"),
        Stored("m2", "api", "Something else entirely."),
        Stored("m3", "api", "The dababa gukuda port and the loroga nidola version are 8080."),
    ]

    result = check(SPECS, [ack("8080", 1)], [], stored)

    assert [m.memory_id for m in result.unidentified] == ["m2", "m3"]
    assert result.passed


def test_one_marker_word_alone_does_not_identify_a_fact() -> None:
    result = check(SPECS, [ack("8080", 1)], [], [Stored("m2", "api", "The dababa port is 8080.")])

    assert result.lost == 1
    assert len(result.unidentified) == 1


def test_a_memory_in_another_project_is_misplaced_but_still_the_fact() -> None:
    result = check(
        SPECS, [ack("8080", 1)], [], [Stored("m1", "web", "The dababa gukuda port is 8080.")]
    )

    assert result.passed
    assert len(result.misplaced) == 1


def test_duplicates_of_a_never_acknowledged_fact_count_but_it_is_not_lost() -> None:
    failed = Unacked(PORT.fact_id, "new", "8080", sent_at=1.0)

    result = check(SPECS, [], [failed, failed], [port("m1", "8080"), port("m2", "8080")])

    assert (result.duplicate_memories, result.lost, result.stale) == (1, 0, 0)


def test_a_violation_describes_its_evidence() -> None:
    acks = [ack("8080", 1), ack("9000", 2)]
    result = check(SPECS, acks, [], [port("m1", "8080")])

    described = result.facts[PORT.fact_id].describe(acks)

    assert described["latest"] == "9000"
    assert described["stored"] == [{"id": "m1", "text": "The dababa gukuda port is 8080."}]
    assert [a["value"] for a in described["acks"]] == ["8080", "9000"]


@pytest.mark.parametrize(
    ("message", "cause"),
    [
        ("Error executing tool memory_add: mem0 is unreachable at http://x (ReadError)", "mem0"),
        ("mem0 failed the add (HTTP 503); retry once", "mem0"),
        ("no answer within 120 s", "client timeout"),
        ("ReadError: peer closed connection", "transport"),
        ("Error executing tool memory_add: text must not be empty.", "other"),
    ],
)
def test_failed_calls_are_told_apart_by_cause(message: str, cause: str) -> None:
    assert error_cause(message) == cause

"""The load benchmark's checker: acknowledgements + stored memories (with their lifetime
metadata) + searches + histories -> duplicates, lost, stale, older value first, not one current
memory, unreadable.

A gate is only as good as its checker, so each rule is pinned here on hand-made inputs.
"""

from __future__ import annotations

from typing import Any

import pytest

from bench.load.checker import (
    Ack,
    FactSpec,
    Searched,
    Stored,
    Unacked,
    check,
    current_memories,
    history_wanted,
)
from bench.load.workload import error_cause, search_hits

PORT = FactSpec("api/000", "api", ("dababa", "gukuda"))
VERSION = FactSpec("web/001", "web", ("loroga", "nidola"))
SPECS = [PORT, VERSION]


def ack(
    value: str,
    at: float,
    *,
    fact: str = PORT.fact_id,
    action: str = "added",
    ids: tuple[str, ...] = ("m1",),
) -> Ack:
    return Ack(fact, "change", value, action, ids, sent_at=at - 0.5, acked_at=at)


def port(
    memory_id: str,
    value: str,
    wording: str = "The dababa gukuda port is {}.",
    **metadata: Any,
) -> Stored:
    return Stored(memory_id, "api", wording.format(value), metadata or None)


def changed() -> tuple[list[Ack], list[Stored]]:
    """8080 then 9000 by the contract: the old memory kept, superseded by the new one."""
    acks = [ack("8080", 1, ids=("m1",)), ack("9000", 2, action="updated", ids=("m2", "m1"))]
    stored = [
        port("m1", "8080", superseded_by="m2"),
        port("m2", "9000", "The dababa gukuda moved to {}."),
    ]
    return acks, stored


def searched(*hits: Stored, fact: str = PORT.fact_id, at: float = 10.0) -> Searched:
    return Searched(fact, sent_at=at, answered_at=at + 0.5, hits=hits)


#: m1's history in mem0 after an update in place from 8080 to 9000.
UPDATED = {"m1": ["The dababa gukuda port is 8080.", "The dababa gukuda port is 9000."]}


def test_a_fact_stored_once_with_its_latest_value_passes() -> None:
    result = check(
        SPECS, [ack("8080", 1), ack("9000", 2)], [], [port("m1", "9000")], histories=UPDATED
    )

    assert result.passed
    assert result.summary()["acked_facts"] == 1
    assert result.changed_facts == 1


def test_a_change_kept_as_a_superseded_memory_passes_every_gate() -> None:
    acks, stored = changed()

    result = check(SPECS, acks, [], stored, final_searches={PORT.fact_id: [stored[1], stored[0]]})

    assert result.passed
    summary = result.summary()
    assert (summary["current_memories"], summary["superseded_memories"]) == (1, 1)
    assert (summary["duplicate_memories"], summary["stale"], summary["not_one_current"]) == (
        0,
        0,
        0,
    )
    assert (summary["older_value_first"], summary["unreadable"]) == (0, 0)


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


def test_superseded_and_folded_memories_are_not_duplicates() -> None:
    acks, stored = changed()
    folded = port("m3", "9000", "9000 is used by the dababa gukuda.", folded_into="m2")

    result = check(SPECS, acks, [], [*stored, folded])

    assert [m.memory_id for m in result.facts[PORT.fact_id].current] == ["m2"]
    assert (result.duplicate_memories, result.not_one_current) == (0, 0)
    assert result.summary()["folded_memories"] == 1
    assert result.passed


def test_a_restating_wording_of_the_current_memory_is_not_a_second_current_one() -> None:
    stored = [
        port("m1", "9000"),
        port("m2", "9000", "9000 is used by the dababa gukuda.", restates="m1"),
    ]

    result = check(SPECS, [ack("9000", 1)], [], stored)

    assert [m.memory_id for m in result.facts[PORT.fact_id].current] == ["m1"]
    assert result.summary()["restating_memories"] == 1
    assert result.passed


def test_two_current_memories_of_one_fact_fail_not_one_current() -> None:
    stored = [
        port("m1", "9000"),
        port("m2", "9000", "The dababa gukuda uses {}.", valid_until=None),
    ]

    result = check(SPECS, [ack("9000", 1)], [], stored)

    assert (result.not_one_current, result.duplicated_facts, result.duplicate_memories) == (1, 1, 1)
    assert not result.passed


def test_a_restating_wording_of_a_superseded_memory_is_current_on_its_own() -> None:
    stored = [
        port("m1", "8080", superseded_by="m3"),
        port("m2", "8080", "8080 is used by the dababa gukuda.", restates="m1"),
        port("m3", "9000"),
    ]

    result = check(SPECS, [ack("8080", 1), ack("9000", 2, ids=("m3",))], [], stored)

    assert [m.memory_id for m in result.facts[PORT.fact_id].current] == ["m2", "m3"]
    assert (result.not_one_current, result.stale) == (1, 1)


def test_restating_each_other_leaves_no_current_memory() -> None:
    stored = [port("m1", "9000", restates="m2"), port("m2", "9000", restates="m1")]

    assert current_memories(stored) == []
    assert check(SPECS, [ack("9000", 1)], [], stored).not_one_current == 1


def test_a_fact_whose_every_memory_is_superseded_has_no_current_memory() -> None:
    stored = [port("m1", "8080", superseded_by="m2"), port("m2", "9000", folded_into="m1")]

    result = check(SPECS, [ack("8080", 1), ack("9000", 2, ids=("m2",))], [], stored)

    assert (result.not_one_current, result.lost, result.stale, result.duplicate_memories) == (
        1,
        0,
        0,
        0,
    )
    assert not result.passed


def test_an_acknowledged_fact_without_a_memory_is_lost() -> None:
    result = check(SPECS, [ack("8080", 1), ack("1.4.2", 1, fact=VERSION.fact_id)], [], [])

    assert result.lost == 2
    assert result.stale == 0
    assert not result.passed


def test_a_memory_holding_an_older_value_is_stale() -> None:
    result = check(SPECS, [ack("8080", 1), ack("9000", 2)], [], [port("m1", "8080")])

    assert result.stale == 1
    assert result.facts[PORT.fact_id].latest == "9000"


def test_a_current_memory_with_an_older_value_is_stale_though_the_latest_is_stored() -> None:
    stored = [port("m1", "8080"), port("m2", "9000", superseded_by="m1")]

    result = check(SPECS, [ack("8080", 1), ack("9000", 2, ids=("m2",))], [], stored)

    assert (result.stale, result.not_one_current, result.unreadable) == (1, 0, 0)


def test_a_superseded_memory_with_an_older_value_is_not_stale() -> None:
    acks, stored = changed()

    assert check(SPECS, acks, [], stored).stale == 0


def test_a_duplicate_with_the_old_value_is_both_duplicate_and_stale() -> None:
    stored = [port("m1", "9000"), port("m2", "8080")]

    result = check(SPECS, [ack("8080", 1), ack("9000", 2)], [], stored)

    assert (result.duplicate_memories, result.stale) == (1, 1)


def test_the_latest_value_is_the_last_acknowledged_not_the_last_sent() -> None:
    sent_late_acked_first = Ack(PORT.fact_id, "change", "9000", "updated", ("m1",), 5.0, 6.0)
    sent_early_acked_last = Ack(PORT.fact_id, "change", "9443", "updated", ("m1",), 4.0, 7.0)

    history = {"m1": ["The dababa gukuda port is 9000.", "The dababa gukuda port is 9443."]}

    result = check(
        SPECS,
        [sent_early_acked_last, sent_late_acked_first],
        [],
        [port("m1", "9443")],
        histories=history,
    )

    assert result.passed
    assert result.facts[PORT.fact_id].latest == "9443"


def test_a_failed_change_sent_after_the_last_ack_may_have_landed() -> None:
    failed = Unacked(PORT.fact_id, "change", "9443", sent_at=3.0)

    history = {"m1": ["The dababa gukuda port is 9000.", "The dababa gukuda port is 9443."]}

    result = check(SPECS, [ack("9000", 2)], [failed], [port("m1", "9443")], histories=history)

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


def test_a_superseded_memory_ranked_first_after_the_run_answers_an_older_value_first() -> None:
    acks, stored = changed()

    result = check(SPECS, acks, [], stored, final_searches={PORT.fact_id: [stored[0], stored[1]]})

    assert result.older_value_first == 1
    assert result.facts[PORT.fact_id].first_hit == stored[0]
    assert (result.stale, result.not_one_current) == (0, 0)
    assert not result.passed


def test_the_first_hit_that_names_the_fact_is_the_answer_not_the_first_hit() -> None:
    acks, stored = changed()
    other = Stored("v1", "api", "The loroga nidola version is 1.4.2.")
    neighbour = Stored("x1", "api", "The dababa port is 7000.")

    result = check(
        SPECS,
        acks,
        [],
        stored,
        final_searches={PORT.fact_id: [other, neighbour, stored[1], stored[0]]},
    )

    assert result.facts[PORT.fact_id].first_hit == stored[1]
    assert result.older_value_first == 0


def test_a_search_after_the_run_naming_no_fact_is_a_miss_not_an_older_value() -> None:
    acks, stored = changed()
    other = Stored("v1", "api", "The loroga nidola version is 1.4.2.")

    result = check(SPECS, acks, [], stored, final_searches={PORT.fact_id: [other]})

    assert (result.older_value_first, result.summary()["search_missed_after_run"]) == (0, 1)
    assert result.summary()["searched_after_run"] == 1
    assert result.passed


def test_a_failed_change_may_be_the_value_a_search_answers_first() -> None:
    acks, stored = changed()
    failed = Unacked(PORT.fact_id, "change", "9443", sent_at=3.0)
    landed = port("m3", "9443")
    stored = [stored[0], port("m2", "9000", superseded_by="m3"), landed]

    result = check(SPECS, acks, [failed], stored, final_searches={PORT.fact_id: [landed]})

    assert (result.older_value_first, result.stale, result.ambiguous) == (0, 0, 1)


def test_a_search_during_the_run_answering_an_older_value_first_is_counted() -> None:
    acks, stored = changed()  # 9000 acked at 2
    late = searched(stored[0], stored[1], at=3.0)
    right = searched(stored[1], at=4.0)

    result = check(SPECS, acks, [], stored, searches=[late, right])

    assert result.summary()["searches_judged_during_run"] == 2
    assert result.summary()["older_value_first_during_run"] == 1
    assert result.older_first_during_run[0].describe()["first_hit"]["id"] == "m1"
    assert result.older_first_during_run[0].describe()["accepted_rank"] == 2
    assert result.older_first_during_run[0].describe()["hits"] == [stored[0].text, stored[1].text]
    assert result.summary()["older_value_first_during_run_latest_not_found"] == 0
    assert result.passed  # the gate is on the searches after the run


def test_a_search_during_the_run_that_never_saw_the_latest_value_says_so() -> None:
    acks, stored = changed()  # 9000 acked at 2
    other = Stored("v1", "api", "The loroga nidola version is 9000.")  # another fact's 9000
    blind = searched(stored[0], other, at=3.0)

    result = check(SPECS, acks, [], stored, searches=[blind])

    assert result.older_first_during_run[0].describe()["accepted_rank"] is None
    assert result.summary()["older_value_first_during_run_latest_not_found"] == 1


def test_a_search_during_a_change_in_flight_may_answer_either_value() -> None:
    acks, stored = changed()  # 9000 sent at 1.5, acked at 2

    during = Searched(PORT.fact_id, sent_at=1.6, answered_at=1.9, hits=(stored[0],))
    after_new = Searched(PORT.fact_id, sent_at=1.6, answered_at=1.9, hits=(stored[1],))

    result = check(SPECS, acks, [], stored, searches=[during, after_new])

    assert (result.searches_judged, len(result.older_first_during_run)) == (2, 0)


def test_a_search_before_the_fact_had_a_value_is_not_judged() -> None:
    acks, stored = changed()  # 8080 sent at 0.5

    answered_before_it_was_sent = Searched(PORT.fact_id, 0.1, 0.4, hits=(stored[1],))

    result = check(SPECS, acks, [], stored, searches=[answered_before_it_was_sent])

    assert result.searches_judged == 0


def test_an_acked_value_held_by_no_memory_and_no_history_is_unreadable() -> None:
    acks = [ack("8080", 1, ids=("m1",)), ack("9000", 2, action="updated", ids=("m1",))]

    result = check(SPECS, acks, [], [port("m1", "9000")], histories={"m1": []})

    assert result.unreadable == 1
    assert result.facts[PORT.fact_id].unreachable == ("8080",)
    assert result.facts[PORT.fact_id].describe(acks)["unreachable"] == ["8080"]
    assert not result.passed


def test_an_overwritten_value_in_the_acked_ids_history_is_readable() -> None:
    acks = [ack("8080", 1, ids=("m1",)), ack("9000", 2, action="updated", ids=("m1",))]
    history = {"m1": ["The dababa gukuda port is 8080.", "The dababa gukuda port is 9000."]}

    result = check(SPECS, acks, [], [port("m1", "9000")], histories=history)

    assert result.unreadable == 0
    assert result.passed


def test_only_the_acked_ids_history_makes_a_value_readable() -> None:
    acks = [ack("8080", 1, ids=("m1",)), ack("9000", 2, ids=("m2",))]
    history = {"m2": ["The dababa gukuda port is 8080."]}

    result = check(SPECS, acks, [], [port("m2", "9000")], histories=history)

    assert result.facts[PORT.fact_id].unreachable == ("8080",)


def test_a_value_only_a_superseded_memory_holds_is_readable() -> None:
    acks, stored = changed()

    assert check(SPECS, acks, [], stored, histories={}).unreadable == 0


def test_history_is_wanted_only_for_acked_values_no_memory_holds() -> None:
    acks = [
        ack("8080", 1, ids=("m1",)),
        ack("9000", 2, ids=("m1", "m2")),
        ack("1.4.2", 3, fact=VERSION.fact_id, ids=("v1",)),
    ]

    wanted = history_wanted(SPECS, acks, [port("m2", "9000"), Stored("x", "api", "1.4.2 alone")])

    assert wanted == {"m1", "v1"}


def test_search_hits_keep_rank_order_and_fall_back_to_the_project() -> None:
    answer = {"hits": [{"id": "b", "text": "t2", "namespace": None}, {"id": "a", "text": "t1"}]}

    assert search_hits(answer, "api") == (Stored("b", "api", "t2"), Stored("a", "api", "t1"))


def test_a_violation_describes_its_evidence() -> None:
    acks = [ack("8080", 1), ack("9000", 2)]
    result = check(SPECS, acks, [], [port("m1", "8080")])

    described = result.facts[PORT.fact_id].describe(acks)

    assert described["latest"] == "9000"
    assert described["stored"] == [
        {"id": "m1", "text": "The dababa gukuda port is 8080.", "current": True}
    ]
    assert [a["value"] for a in described["acks"]] == ["8080", "9000"]


def test_a_violation_shows_each_memorys_lifetime_marks() -> None:
    acks, stored = changed()
    result = check(SPECS, acks, [], stored, final_searches={PORT.fact_id: [stored[0]]})

    described = result.facts[PORT.fact_id].describe(acks)

    assert described["stored"][0] == {
        "id": "m1",
        "text": "The dababa gukuda port is 8080.",
        "current": False,
        "superseded_by": "m2",
    }
    assert described["stored"][1]["current"] is True
    assert described["first_hit"] == {"id": "m1", "text": "The dababa gukuda port is 8080."}


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

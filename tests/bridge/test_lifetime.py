"""A memory's lifetime: spans read from and written to metadata, and how search orders by it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from mem0_bridge._lifetime import (
    FOLDED_INTO,
    RESTATES,
    SUPERSEDED_BY,
    SUPERSEDES,
    VALID_UNTIL,
    VALIDITY,
    Lifetime,
    fresh,
    one_per_fact,
    superseded_last,
)

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
CREATED = T0.isoformat()


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def lifetime(metadata: dict[str, Any]) -> Lifetime:
    return Lifetime.of(metadata, CREATED)


def test_a_memory_without_lifetime_fields_is_current_since_it_was_created() -> None:
    plain = lifetime({})
    assert plain.current
    assert plain.valid_from == T0
    assert plain.valid_until is None
    assert not plain.held_at(at(-1))
    assert plain.held_at(T0)
    assert plain.held_at(at(10_000))


def test_a_new_memory_holds_from_its_add_time() -> None:
    new = lifetime(fresh(at(5), supersedes=["old"]))
    assert new.current
    assert new.valid_from == at(5)
    assert new.supersedes == ("old",)
    assert not new.held_at(at(4))
    assert new.held_at(at(5))


def test_a_superseded_memory_held_until_the_change_and_names_its_successor() -> None:
    old = lifetime(lifetime(fresh(T0)).superseded("new", at(1)))
    assert not old.current
    assert old.superseded_by == "new"
    assert old.valid_until == at(1)
    assert old.held_at(at(0.5))
    assert not old.held_at(at(1))
    assert not old.held_at(at(60))


def test_a_change_back_opens_a_second_span_and_keeps_the_first() -> None:
    first = lifetime(fresh(T0))
    changed = lifetime(first.superseded("b", at(1)))
    back = lifetime(changed.reinstated(at(2), replacing=["b"]))
    assert back.current
    assert back.spans == ((T0, at(1)), (at(2), None))
    assert back.supersedes == ("b",)
    assert back.held_at(at(0.5))
    assert not back.held_at(at(1.5))
    assert back.held_at(at(3))


def test_reinstating_a_current_memory_keeps_its_open_span() -> None:
    current = lifetime(fresh(T0))
    again = lifetime(current.reinstated(at(3)))
    assert again.spans == ((T0, None),)


def test_a_folded_memory_is_not_current_and_never_answers_for_itself() -> None:
    folded = lifetime(lifetime(fresh(T0)).folded("survivor", at(1)))
    assert not folded.current
    assert folded.folded_into == "survivor"
    assert not folded.held_at(at(0.5))


def test_written_metadata_repeats_the_newest_span_for_raw_readers() -> None:
    written = lifetime(fresh(T0)).superseded("new", at(1))
    assert written[VALIDITY] == [[T0.isoformat(), at(1).isoformat()]]
    assert written[VALID_UNTIL] == at(1).isoformat()
    assert written[SUPERSEDED_BY] == "new"


def test_a_supersede_time_before_the_span_start_closes_it_empty_not_inverted() -> None:
    old = lifetime(lifetime(fresh(at(5))).superseded("new", at(1)))
    assert old.spans == ((at(5), at(5)),)


def test_garbage_in_the_metadata_reads_as_absent() -> None:
    odd = lifetime(
        {
            VALIDITY: [["not a time", None], "x", [1, 2]],
            SUPERSEDED_BY: 42,
            FOLDED_INTO: "",
            RESTATES: ["a"],
            SUPERSEDES: "a",
        }
    )
    assert odd.current
    assert odd.spans == ((T0, None),)
    assert odd.supersedes == ()
    assert odd.restates is None


def test_spans_are_capped_so_metadata_cannot_grow_forever() -> None:
    life = lifetime(fresh(T0))
    for n in range(1, 100):
        life = lifetime(life.superseded("x", at(2 * n - 1)))
        life = lifetime(life.reinstated(at(2 * n)))
    assert len(life.spans) == 32
    assert life.current


# ---- ordering -----------------------------------------------------------------------------

SUCCESSOR = {"a": "b", "b": "c"}


def order(items: list[str], successors: dict[str, str]) -> list[str]:
    return superseded_last(items, key=lambda i: i, superseder=successors.get)


def test_a_superseded_memory_ranks_just_below_the_one_that_superseded_it() -> None:
    assert order(["old", "x", "new", "y"], {"old": "new"}) == ["x", "new", "old", "y"]


def test_a_superseded_memory_already_below_its_successor_keeps_its_place() -> None:
    assert order(["new", "x", "old"], {"old": "new"}) == ["new", "x", "old"]


def test_a_chain_of_changes_ranks_newest_first_whatever_the_similarity() -> None:
    assert order(["a", "b", "c"], SUCCESSOR) == ["c", "b", "a"]
    assert order(["b", "a", "x", "c"], SUCCESSOR) == ["x", "c", "b", "a"]


def test_a_successor_outside_the_results_leaves_the_order_alone() -> None:
    assert order(["a", "x"], {"a": "gone"}) == ["a", "x"]


def test_a_cycle_of_successors_terminates() -> None:
    assert sorted(order(["a", "b"], {"a": "b", "b": "a"})) == ["a", "b"]


def test_only_the_best_ranked_wording_of_a_fact_is_kept() -> None:
    restates = {"w2": "w1", "w3": "w2"}
    kept = one_per_fact(["x", "w3", "w1", "w2", "y"], key=lambda i: i, restates=restates.get)
    assert kept == ["x", "w3", "y"]


def test_a_wording_of_a_memory_outside_the_results_is_kept() -> None:
    assert one_per_fact(["w2", "x"], key=lambda i: i, restates={"w2": "w1"}.get) == ["w2", "x"]

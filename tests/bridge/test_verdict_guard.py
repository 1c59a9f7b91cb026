"""The verdict guard's two tests in isolation: semantic similarity (never mem0's blended score)
and wording that differs only in values. The fast core tests and the eval exercise them end to
end; these pin the rules themselves."""

from __future__ import annotations

import pytest

from mem0_bridge._folding import plausibly_one_fact
from mem0_bridge._mem0 import Memory
from mem0_bridge._wording import (
    adds_details,
    details,
    differs_only_in_values,
    name_overlap,
    wording,
)


def hit(text: str, *, score: float | None, similarity: float | None) -> Memory:
    return Memory(
        id="m1",
        text=text,
        run_id="alpha",
        user_id="u",
        created_at=None,
        updated_at=None,
        score=score,
        similarity=similarity,
    )


def test_a_hit_takes_its_similarity_from_mems_score_details() -> None:
    memory = Memory.from_api(
        {"id": "m1", "memory": "x", "score": 0.41, "score_details": {"semantic_score": 0.83}}
    )
    assert (memory.score, memory.similarity, memory.similarity_to_query) == (0.41, 0.83, 0.83)


def test_a_hit_without_score_details_falls_back_to_its_score() -> None:
    memory = Memory.from_api({"id": "m1", "memory": "x", "score": 0.41})
    assert (memory.similarity, memory.similarity_to_query) == (None, 0.41)


def test_a_high_blended_score_does_not_pass_a_low_semantic_similarity() -> None:
    stored = hit("The API metrics port is 9100", score=0.97, similarity=0.6)
    assert not plausibly_one_fact("The API port is 8080", stored, 0.9)


def test_a_semantic_similarity_at_the_floor_passes_whatever_the_blended_score() -> None:
    stored = hit("The API listens on port 8080", score=0.3, similarity=0.9)
    assert plausibly_one_fact("Our API service uses port 8080", stored, 0.9)


def test_the_same_words_with_other_values_pass_below_the_floor() -> None:
    stored = hit("The API port is 8080.", score=0.2, similarity=0.6)
    assert plausibly_one_fact("9000 is the port of the API.", stored, 0.9)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("The API port is 8080.", "Our API port is now 9000."),
        ("The service runs version 1.4.2", "the service runs version 2.0.1"),
        ("Staging is in eu-west-1 with 3 replicas", "Staging is in eu-west-1 with 5 replicas"),
        ("The health check calls /healthz.", "The health check calls /_health."),
        ("Alerts go to the #ops-alerts channel", "Alerts go to the #data-alerts channel"),
        ("The worker uses 4 threads", "The workers use 8 threads"),
    ],
)
def test_statements_differing_only_in_values_are_one_wording(first: str, second: str) -> None:
    assert differs_only_in_values(first, second)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # same subject, another attribute: look-alike facts that must stay apart
        ("The gateway runs 4 replicas in production.", "The gateway runs 3 replicas in staging."),
        ("The API port is 8080", "The API metrics port is 9100"),
        # another subject
        ("The billing API listens on port 8080", "The ledger API listens on port 8080"),
        # a negation is a word, not a value
        ("The bucket is replicated to 2 regions", "The bucket is not replicated to 2 regions"),
        # a value without digits is a word: only a judge can call this a change
        ("Bugs are tracked in Jira", "Bugs are tracked in Linear"),
        # too few words to tell facts apart
        ("Set to 5", "Set to 10"),
    ],
)
def test_other_wordings_are_not_one_fact_by_their_words(first: str, second: str) -> None:
    assert not differs_only_in_values(first, second)


def test_wording_sets_aside_values_function_words_and_plural_endings() -> None:
    assert wording("Our 3 services are now at version 1.4.2 in eu-west-1") == {
        "service",
        "version",
    }


def test_details_are_values_and_names_but_not_the_first_words_capital() -> None:
    assert details("Bugs are tracked in Linear since v2, logging at WARNING") == {
        "linear",
        "v2",
        "warning",
    }


@pytest.mark.parametrize(
    ("newer", "older", "adds"),
    [
        ("Bugs are tracked in Linear.", "Bugs are tracked in Jira.", True),
        ("The health check calls /_health.", "The health check calls /healthz.", True),
        ("It reports to the #ops-alerts channel", "It reports to #platform-alerts", True),
        ("The device registry rate-limits each client.", "Each client is rate-limited.", False),
        ("The API port is 8080 behind Envoy", "The API port is 8080", True),
        ("Our API is served on port 8080.", "The API port is 8080", False),
        (
            "The growth team owns the billing API.",
            "The billing API is owned by the growth team.",
            False,
        ),
    ],
)
def test_a_newer_statement_adds_details_when_it_names_what_the_older_does_not(
    newer: str, older: str, adds: bool
) -> None:
    assert adds_details(newer, older) is adds


def test_a_fact_s_rare_name_outweighs_a_sentence_shape_many_memories_share() -> None:
    others = [f"45s is used by the {name}" for name in ("burok", "lanim", "tesab")]
    own = "The galof timeout is 30s"
    overlap = name_overlap("45s is used by the galof", [*others, own])
    assert overlap[-1] > max(overlap[:-1]) > 0


def test_a_memory_sharing_no_word_has_no_name_overlap() -> None:
    assert name_overlap("The API port is 8080", ["Bugs are tracked in Linear"]) == [0.0]

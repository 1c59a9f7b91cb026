"""Reading LLM answers: lenient about wrapping, strict about shape."""

from __future__ import annotations

import time
from email.utils import formatdate
from typing import Any

import pytest

from mem0_judge import LLMBadAnswerError, extract_json_object, retry_after_seconds
from mem0_judge._answers import compare_schema, parse_compare, parse_rewrite


@pytest.mark.parametrize(
    "content",
    [
        '{"statement": "x"}',
        '```json\n{"statement": "x"}\n```',
        '<think>the user wants "{...}"</think>{"statement": "x"}',
        'Sure! Here it is: {"statement": "x"} Hope that helps.',
        '<reasoning>\nstep 1\n</reasoning>\n```\n{"statement": "x"}\n```',
    ],
)
def test_the_json_object_is_found_inside_fences_and_reasoning(content: str) -> None:
    assert extract_json_object(content) == {"statement": "x"}


@pytest.mark.parametrize("content", ["", "not json", "[1, 2]", '"a string"', "{broken"])
def test_an_answer_without_a_json_object_is_bad(content: str) -> None:
    with pytest.raises(LLMBadAnswerError, match="not a JSON object"):
        extract_json_object(content)


def _judgement(id_: int | str, verdict: str = "SAME", **extra: Any) -> dict[str, Any]:
    return {"id": id_, "verdict": verdict, "reason": "r", **extra}


def test_judgements_come_back_in_candidate_order() -> None:
    answer = {"judgements": [_judgement(2, "UNRELATED"), _judgement(1, "SUPERSEDES")]}
    assert [j.verdict for j in parse_compare(answer, 2)] == ["SUPERSEDES", "UNRELATED"]


def test_ids_written_as_strings_are_read_as_numbers() -> None:
    # Seen with llama.cpp models: `"id": "1"`; rejecting it failed nearly every call.
    answer = {"judgements": [_judgement(" 2 ", "UNRELATED"), _judgement("1", "SUPERSEDES")]}
    assert [(j.id, j.verdict) for j in parse_compare(answer, 2)] == [
        (1, "SUPERSEDES"),
        (2, "UNRELATED"),
    ]


def test_the_compare_schema_pins_one_judgement_per_id_in_order() -> None:
    schema = compare_schema(3)
    array = schema["properties"]["judgements"]
    assert (array["minItems"], array["maxItems"], array["items"]) == (3, 3, False)
    assert [item["properties"]["id"]["enum"] for item in array["prefixItems"]] == [[1], [2], [3]]
    verdicts = array["prefixItems"][0]["properties"]["verdict"]["enum"]
    assert sorted(verdicts) == ["SAME", "SUPERSEDES", "UNRELATED"]


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ({"judgements": [_judgement(1, "MAYBE")]}, "judgements.0.verdict"),
        ({"judgements": [_judgement(1, "same")]}, "judgements.0.verdict"),
        ({"judgements": [_judgement(1, extra="x")]}, "judgements.0.extra"),
        ({"judgements": [{"id": "m1", "verdict": "SAME"}]}, "judgements.0.id"),
        ({"judgements": [{"id": "1.5", "verdict": "SAME"}]}, "judgements.0.id"),
        ({"judgements": [{"id": "0", "verdict": "SAME"}]}, "judgements.0.id"),
        ({"verdicts": []}, "judgements"),
        ({"judgements": [_judgement(1), _judgement(1)]}, "id 1 is repeated"),
        ({"judgements": [_judgement(1), _judgement(3)]}, "id 3 is not a memory id"),
        ({"judgements": [_judgement(2)]}, "no judgement for memory ids [1]"),
        ({"judgements": [_judgement(1, reason="x" * 501)]}, "judgements.0.reason"),
    ],
)
def test_a_compare_answer_off_the_schema_is_bad(answer: dict[str, Any], message: str) -> None:
    with pytest.raises(LLMBadAnswerError, match="did not match the schema") as caught:
        parse_compare(answer, 2)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    "answer",
    [{}, {"statement": ""}, {"statement": "   "}, {"statement": 3}, {"text": "x"}],
)
def test_a_rewrite_answer_off_the_schema_is_bad(answer: dict[str, Any]) -> None:
    with pytest.raises(LLMBadAnswerError, match="did not match the schema"):
        parse_rewrite(answer)


@pytest.mark.parametrize(
    ("header", "seconds"),
    [("2", 2.0), ("0.5", 0.5), ("-3", 0.0), (None, None), ("soon", None)],
)
def test_retry_after_is_read_as_seconds(header: str | None, seconds: float | None) -> None:
    assert retry_after_seconds(header) == seconds


def test_retry_after_as_an_http_date_is_the_time_until_then() -> None:
    delay = retry_after_seconds(formatdate(time.time() + 30, usegmt=True))
    assert delay is not None
    assert 25 < delay <= 30


def test_a_question_echoed_back_is_not_a_statement() -> None:
    # SmolLM2-135M answers {"statement": "What port does the API listen on?"}.
    with pytest.raises(LLMBadAnswerError, match="a question, not a statement"):
        parse_rewrite({"statement": "What port does the API listen on?"})


def test_raw_newlines_inside_strings_are_read_as_text() -> None:
    # Grammar-constrained llama.cpp answers can hold a raw newline inside a string.
    answer = extract_json_object('{"statement": "The API\nuses port"}')
    assert answer == {"statement": "The API\nuses port"}

"""The fake's own rule, which the judge's and the bridge's tests rely on."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mem0_judge import compare_messages, rewrite_messages
from tests.fakes.judge_responder import judge_responder, rewrite_statement, verdict

PORT_8080 = "The API listens on port 8080"


@pytest.mark.parametrize(
    ("fact", "memory", "expected"),
    [
        ("Our API service uses port 8080", PORT_8080, "SAME"),
        (PORT_8080, PORT_8080, "SAME"),
        ("We moved the API to port 9000", PORT_8080, "SUPERSEDES"),
        ("The app now runs Python 3.12", "The app runs Python 3.11", "SUPERSEDES"),
        ("I prefer tea", PORT_8080, "UNRELATED"),
        ("The database listens on port 5432", "We deploy with Docker", "UNRELATED"),
    ],
)
def test_the_rule_gives_the_documented_verdicts(fact: str, memory: str, expected: str) -> None:
    assert verdict(fact, memory)[0] == expected


@pytest.mark.parametrize(
    ("question", "statement"),
    [
        ("what port does the API use?", "The API uses port"),
        ("What is the database URL?", "The database URL is"),
        ("how does the cache work?", "The cache works"),
        ("which editor do we prefer?", "We prefer editor"),
        ("does the API use TLS?", "The API use TLS"),
    ],
)
def test_questions_become_template_statements(question: str, statement: str) -> None:
    assert rewrite_statement(question) == statement


def _body(messages: list[Any]) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": m.role, "content": m.content} for m in messages]}


def test_it_answers_the_judges_real_prompts_in_schema() -> None:
    compare = judge_responder(_body(compare_messages("I prefer tea", [PORT_8080, "I like tea"])))
    assert compare is not None
    assert json.loads(compare)["judgements"] == [
        {"id": 1, "verdict": "UNRELATED", "reason": "content overlap 0.00"},
        {"id": 2, "verdict": "SAME", "reason": "content overlap 0.50, same values"},
    ]
    rewrite = judge_responder(_body(rewrite_messages("what port does the API use?")))
    assert rewrite is not None
    assert json.loads(rewrite) == {"statement": "The API uses port"}


def test_it_leaves_other_prompts_to_other_responders() -> None:
    extraction = {
        "messages": [
            {"role": "system", "content": "You extract facts."},
            {"role": "user", "content": "## New Messages\nuser: I use vim."},
        ],
        "response_format": {"type": "json_object"},
    }
    assert judge_responder(extraction) is None

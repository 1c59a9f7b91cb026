"""Which queries count as questions (and are rewritten) and which pass through."""

from __future__ import annotations

import pytest

from mem0_judge import is_question


@pytest.mark.parametrize(
    "query",
    [
        "what port does the API use?",
        "What port does the API use",
        "How do we deploy",
        "does the API use TLS",
        "Can\u2019t we cache this",
        "api port?",
        "  which database  ",
    ],
)
def test_questions_are_recognised(query: str) -> None:
    assert is_question(query)


@pytest.mark.parametrize(
    "query",
    ["The API uses port 8080", "API port", "whatever config we had", "Howard's deploy notes", ""],
)
def test_statements_and_keywords_are_not_questions(query: str) -> None:
    assert not is_question(query)

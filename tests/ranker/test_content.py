"""What counts as the same text for dedupe, and how mem0's timestamps are read."""

from __future__ import annotations

import pytest

from mem0_ranker import content_key
from mem0_ranker._timestamps import format_timestamp, parse_timestamp


def test_content_key_ignores_spacing_and_unicode_composition() -> None:
    assert content_key("  caf\u00e9  opens\tat 9 \n") == content_key("cafe\u0301 opens at 9")


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("the bucket is named Prod-Logs", "the bucket is named prod-logs"),
        ("the quota is 10\u00b2 MB", "the quota is 102 MB"),
        ("the code is \uff11\uff12\uff13", "the code is 123"),
        ("user likes tea", "user likes tea."),
    ],
)
def test_content_key_tells_apart_texts_that_may_mean_different_things(
    first: str, second: str
) -> None:
    assert content_key(first) != content_key(second)


def test_content_key_is_a_sha256_not_the_text() -> None:
    key = content_key("secret fact")
    assert len(key) == 64
    assert "secret" not in key


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-12-02T15:04:05.123456-08:00", "2026-12-02T23:04:05.123456+00:00"),
        ("2026-12-02T23:04:05Z", "2026-12-02T23:04:05+00:00"),
        ("2026-12-02T23:04:05", "2026-12-02T23:04:05+00:00"),
        ("2026-12-02 23:04:05.5+00:00", "2026-12-02T23:04:05.500000+00:00"),
    ],
)
def test_timestamps_in_mem0_forms_parse_to_the_same_instant(text: str, expected: str) -> None:
    assert format_timestamp(parse_timestamp(text)) == expected


@pytest.mark.parametrize("text", ["", "2026-12-02", "yesterday", "2026-13-02T00:00:00Z", "12345"])
def test_unparseable_timestamps_are_rejected(text: str) -> None:
    with pytest.raises(ValueError, match=r"RFC 3339|month|Invalid"):
        parse_timestamp(text)

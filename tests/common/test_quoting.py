"""Caller input quoted in errors and logs: bounded, escaped, its length named when cut."""

from __future__ import annotations

from mem0_common import bare_or_quoted, quote_input


def test_short_input_is_quoted_whole() -> None:
    assert quote_input("abc") == "'abc'"


def test_long_input_is_cut_with_its_length_named() -> None:
    quoted = quote_input("x" * 1_000_000)

    assert quoted == f"{'x' * 64!r}... (1000000 characters)"


def test_nul_line_breaks_and_lone_surrogates_come_out_escaped() -> None:
    quoted = quote_input("a\x00b\nc\ud800")

    assert quoted == "'a\\x00b\\nc\\ud800'"
    quoted.encode("utf-8")  # printable into any log line or JSON body


def test_a_long_non_text_input_is_cut_too() -> None:
    quoted = quote_input(list(range(10_000)))

    assert len(quoted) < 120
    assert "characters of list" in quoted


def test_a_short_printable_name_stays_bare() -> None:
    assert bare_or_quoted("messages") == "messages"


def test_an_unprintable_or_long_name_is_quoted() -> None:
    assert bare_or_quoted("a\nb") == "'a\\nb'"
    assert bare_or_quoted("k" * 100).endswith("(100 characters)")

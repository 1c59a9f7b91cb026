"""Quoting caller input in error messages and log lines: bounded, and always printable.

An error that names the bad value helps the caller, but the value is theirs and unbounded: a
1 MB id must not come back whole in the answer and in every log line, and a NUL, a line break
or a lone surrogate must not reach a log file or break the JSON encoder of an error response.
`repr` escapes all of those; the cut keeps the quote short and says how long the input was.
"""

from __future__ import annotations

#: Characters of the input shown; enough to recognise an id or the start of a text.
QUOTE_LIMIT = 64


def quote_input(value: object, limit: int = QUOTE_LIMIT) -> str:
    """`repr(value)`, cut after `limit` characters of the value with its full length named.

    The result is plain printable ASCII-safe text (repr escapes control characters and lone
    surrogates), so it can go into any log line or JSON body.
    """
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]!r}... ({len(value)} characters)"
    shown = repr(value)
    if len(shown) > limit + 2:
        return f"{shown[:limit]}... ({len(shown)} characters of {type(value).__name__})"
    return shown


def bare_or_quoted(text: str, limit: int = QUOTE_LIMIT) -> str:
    """`text` as it is when short and printable (a field name, an ordinary path), else
    `quote_input(text, limit)`: for places where quotes around every value would be noise."""
    if len(text) <= limit and text.isprintable():
        return text
    return quote_input(text, limit)

"""Checks of what a tool call brings, made before anything is sent anywhere.

Each failure is a `BridgeError` naming the argument and what to send instead; nothing has been
changed when one is raised.
"""

from __future__ import annotations

import unicodedata
import uuid
from datetime import UTC, datetime

from mem0_bridge._errors import BridgeError
from mem0mcp.contract import MAX_TEXT_CHARS, normalise_text

#: How much of a bad argument an error message quotes back.
QUOTE_CHARS = 80


def quote(value: str) -> str:
    """`value` for an error message: repr'd and cut, so no error echoes unbounded input."""
    if len(value) <= QUOTE_CHARS:
        return repr(value)
    return f"{value[:QUOTE_CHARS]!r}... ({len(value)} characters)"


def _unsendable(text: str) -> str | None:
    """Why `text` cannot be sent to mem0 as it is, or None."""
    if "\x00" in text:
        return "contains a NUL character (\\x00)"
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in text):
        return "contains a lone surrogate (text that is not valid Unicode)"
    return None


def check_text(text: str, field: str = "text") -> str:
    """A fact or query, trimmed; within the one limit every service shares."""
    cleaned = text.strip()
    if not cleaned:
        raise BridgeError(f"{field} must not be empty.")
    if len(cleaned) > MAX_TEXT_CHARS:
        raise BridgeError(
            f"{field} is {len(cleaned)} characters; the limit is {MAX_TEXT_CHARS}. Store one "
            "self-contained fact per call."
        )
    problem = _unsendable(cleaned)
    if problem is not None:
        raise BridgeError(f"{field} {problem}; remove it and send plain text. Nothing was sent.")
    return cleaned


def same_text(first: str, second: str) -> bool:
    """Exact-content identity, as the ranker's dedupe key defines it (`normalise_text`)."""
    return normalise_text(first) == normalise_text(second)


def check_memory_id(memory_id: str) -> str:
    """A canonical UUID, checked before any request is sent."""
    try:
        return str(uuid.UUID(memory_id.strip()))
    except (ValueError, AttributeError):
        raise BridgeError(
            f"memory_id must be a memory's UUID (like 123e4567-e89b-12d3-a456-426614174000), "
            f"got {quote(memory_id)}; take it from memory_search or memory_list."
        ) from None


def check_time(value: str, field: str) -> datetime:
    """An RFC 3339 time with its offset (`2026-12-01T09:00:00Z`), as an aware datetime."""
    text = value.strip()
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise BridgeError(
            f"{field} must be an RFC 3339 time with its offset, like 2026-12-01T09:00:00Z, "
            f"got {quote(value)}. Nothing was searched."
        )
    return moment.astimezone(UTC)


def check_reset_token(token: str | None) -> str:
    """The token as sent, if it can be a reset token at all (printable ASCII, one line)."""
    if token is None or not token.strip():
        raise BridgeError(
            "memory_reset irreversibly wipes every memory and needs the reset token, which "
            "only the human user holds. Ask the user for it (and confirm they want the wipe), "
            "then call memory_reset(reset_token=...). Nothing was sent."
        )
    token = token.strip()
    if not token.isascii() or any(
        unicodedata.category(ch).startswith("C") or ch.isspace() for ch in token
    ):
        raise BridgeError(
            "reset_token is malformed: a reset token is one word of printable ASCII (no spaces, "
            "line breaks or other control characters). Ask the user to copy it again. Nothing "
            "was sent."
        )
    return token

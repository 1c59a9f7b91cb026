"""RFC 3339 timestamps as mem0 sends them, to epoch seconds (the ranker's internal time)."""

from __future__ import annotations

import functools
from datetime import UTC, datetime

#: Parsed timestamps remembered by their text. mem0 sends a memory's same created/updated
#: strings on every search that finds it, and parsing two per candidate was the largest cost
#: of a rerank; a hit is one dict lookup. About 200 bytes an entry.
PARSED_TIMESTAMPS_KEPT = 65536


def parse_moment(text: str) -> datetime:
    """Parse `2026-12-02T15:04:05.123456-08:00`, a `Z` suffix, or a naive time (taken as UTC).

    Raises ValueError for anything else, including a bare date: mem0 always sends a time.
    """
    if len(text) < 16 or text[10] not in "Tt ":
        raise ValueError(f"not an RFC 3339 date-time: {text!r}")
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def parse_timestamp(text: str) -> float:
    return parse_moment(text).timestamp()


@functools.lru_cache(maxsize=PARSED_TIMESTAMPS_KEPT)
def cached_timestamp(text: str) -> float:
    """`parse_timestamp`, remembered (least recently used forgotten first); a text that does
    not parse raises every time, since only results are cached."""
    return parse_timestamp(text)


def format_timestamp(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat()

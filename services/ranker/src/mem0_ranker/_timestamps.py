"""RFC 3339 timestamps as mem0 sends them, to epoch seconds (the ranker's internal time)."""

from __future__ import annotations

import math
from collections.abc import Iterable
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


#: Parsed timestamps by their text, "" (no time) as -inf; emptied when it holds
#: PARSED_TIMESTAMPS_KEPT. A plain dict, so that a whole column is looked up in one C-level pass
#: (`known_timestamps`) and one text in one lookup (`cached_timestamp`).
_KNOWN: dict[str, float] = {"": -math.inf}


def cached_timestamp(text: str) -> float:
    """`parse_timestamp`, remembered; a text that does not parse (or "") raises every time,
    since only results are kept."""
    moment = _KNOWN.get(text)
    if moment is None or not text:
        return learn_timestamp(text)
    return moment


def known_timestamps(texts: Iterable[str]) -> list[float | None]:
    """Epoch seconds of each text parsed before by `learn_timestamp` (-inf for ""), None for
    the others."""
    return list(map(_KNOWN.get, texts))


def learn_timestamp(text: str) -> float:
    """`parse_timestamp`, remembered for `known_timestamps`; raises ValueError as it does."""
    moment = parse_timestamp(text)
    if len(_KNOWN) >= PARSED_TIMESTAMPS_KEPT:
        _KNOWN.clear()
        _KNOWN[""] = -math.inf
    _KNOWN[text] = moment
    return moment


def format_timestamp(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat()

"""TEST ONLY: a settable clock, so a benchmark can replay months of memory traffic in minutes.

A service reads "now" through one callable. Normally that is `time.time`; when the service's
`*_TEST_CLOCK_FILE` names a file, it is the moment written there (epoch seconds, as text), read
on every call, so the benchmark moves time by rewriting the file. Off by default, and loud when
on: a warning at start-up, and a file that cannot be read fails the call instead of silently
falling back to the real time. Never set it in production.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

logger = logging.getLogger(__name__)


def read_clock(path: Path) -> float:
    """The moment in the clock file, in epoch seconds; RuntimeError when it cannot be read."""
    try:
        return float(path.read_text().strip())
    except (OSError, ValueError) as exc:
        raise RuntimeError(f"test clock file {path} is unreadable: {exc}") from exc


def clock_for(path: Path | None, variable: str) -> Callable[[], float]:
    """`time.time`, or (test only) a clock that reads `path` on every call; `variable` names
    the setting in the start-up warning."""
    if path is None:
        return time.time
    read_clock(path)  # fail at start, not on the first call, when the file is missing
    logger.warning(
        "TEST CLOCK ON: the time is read from %s (%s), not the real clock. Benchmarks only; "
        "never in production.",
        path,
        variable,
    )
    return lambda: read_clock(path)

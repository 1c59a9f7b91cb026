"""TEST ONLY: a settable clock for mem0's timestamps, so a benchmark can replay months in minutes.

mem0 stamps `created_at`/`updated_at` (and its history rows) itself, with `datetime.now(...)`
inside `mem0.memory.main` and `mem0.memory.storage`; there is no hook for it. When
`MEM0_LOCAL_TEST_CLOCK_FILE` names a file, `install_test_clock` replaces the `datetime` those
two modules see with a subclass whose `now()` reads the moment from that file (epoch seconds,
as text), so every stamp mem0 writes is the moment the benchmark last wrote there.

Off by default, and loud when on: a warning at start-up, and a file that cannot be read fails
the call instead of silently falling back to the real time. Never set it in production: every
memory would carry the file's time, not the time it was stored.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, tzinfo
from pathlib import Path

from mem0_common import read_clock

logger = logging.getLogger(__name__)

#: mem0's modules that call `datetime.now()` for what they store.
PATCHED_MODULES = ("mem0.memory.main", "mem0.memory.storage")


def clocked_datetime(path: Path) -> type[datetime]:
    """A `datetime` whose `now()` (and `utcnow()`) is the moment in `path`."""

    class ClockedDatetime(datetime):
        @classmethod
        def now(cls, tz: tzinfo | None = None) -> ClockedDatetime:
            moment = datetime.fromtimestamp(read_clock(path), UTC)
            local = moment.astimezone(tz) if tz is not None else moment.astimezone()
            if tz is None:
                local = local.replace(tzinfo=None)
            return cls.combine(local.date(), local.timetz(), tzinfo=local.tzinfo)

        @classmethod
        def utcnow(cls) -> ClockedDatetime:
            return cls.now(UTC).replace(tzinfo=None)

    return ClockedDatetime


def install_test_clock(path: Path | None) -> None:
    """Make mem0 stamp memories with the time in `path`; nothing when `path` is None."""
    if path is None:
        return
    import importlib  # noqa: PLC0415 - mem0 is imported only once its environment is set

    read_clock(path)  # fail at start, not on the first add, when the file is missing
    clocked = clocked_datetime(path)
    for name in PATCHED_MODULES:
        module = importlib.import_module(name)
        module.datetime = clocked  # type: ignore[attr-defined]
    logger.warning(
        "TEST CLOCK ON: mem0 stamps every memory with the time in %s "
        "(MEM0_LOCAL_TEST_CLOCK_FILE), not the real time. Benchmarks only; never in production.",
        path,
    )

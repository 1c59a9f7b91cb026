"""mem0-local's test-only clock: what mem0's `datetime.now()` becomes when it is on."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from mem0_local._clock import clocked_datetime, install_test_clock
from mem0_local._settings import Mem0LocalSettings

MOMENT = datetime(2025, 3, 1, 12, 30, tzinfo=UTC)


def test_it_is_off_unless_a_file_is_named() -> None:
    assert Mem0LocalSettings().test_clock_file is None
    install_test_clock(None)  # no file: nothing patched, nothing read


def test_now_is_the_moment_in_the_file_in_the_asked_time_zone(tmp_path: Path) -> None:
    path = tmp_path / "clock"
    path.write_text(f"{MOMENT.timestamp()}\n")
    clocked = clocked_datetime(path)
    assert clocked.now(UTC) == MOMENT
    pacific = timezone(timedelta(hours=-8))
    assert clocked.now(pacific) == MOMENT
    assert clocked.now(pacific).utcoffset() == timedelta(hours=-8)
    assert clocked.now(UTC).isoformat() == "2025-03-01T12:30:00+00:00"


def test_moving_the_file_moves_the_clock(tmp_path: Path) -> None:
    path = tmp_path / "clock"
    clocked = clocked_datetime(path)
    path.write_text(f"{MOMENT.timestamp()}")
    first = clocked.now(UTC)
    path.write_text(f"{(MOMENT + timedelta(days=30)).timestamp()}")
    assert clocked.now(UTC) - first == timedelta(days=30)


def test_an_unreadable_clock_file_fails_instead_of_using_the_real_time(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="unreadable"):
        clocked_datetime(tmp_path / "missing").now(UTC)

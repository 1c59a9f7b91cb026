"""The services' test-only clock: off unless a file is named, then exactly the file's time."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from mem0_common import clock_for
from mem0_ranker._settings import RankerSettings


def test_the_clock_is_the_real_one_unless_a_file_is_named() -> None:
    assert RankerSettings().test_clock_file is None
    assert clock_for(None, "RANKER_TEST_CLOCK_FILE") is time.time


def test_the_clock_reads_the_file_on_every_call(tmp_path: Path) -> None:
    path = tmp_path / "clock"
    path.write_text("1000.5\n")
    clock = clock_for(path, "RANKER_TEST_CLOCK_FILE")
    assert clock() == 1000.5
    path.write_text("2000")
    assert clock() == 2000.0


def test_turning_it_on_warns_loudly(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "clock"
    path.write_text("0")
    clock_for(path, "RANKER_TEST_CLOCK_FILE")
    assert "TEST CLOCK ON" in caplog.text


def test_a_missing_clock_file_fails_at_start_instead_of_using_the_real_time(
    tmp_path: Path,
) -> None:
    with pytest.raises(RuntimeError, match="unreadable"):
        clock_for(tmp_path / "missing", "RANKER_TEST_CLOCK_FILE")

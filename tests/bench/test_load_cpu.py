"""The load benchmark's CPU figures: where the machine's CPU went while the clients ran, per
part of the stack, and per successful call."""

from __future__ import annotations

import hashlib
import time

import pytest

from bench._cpu import DRIVER, CpuWindow
from bench.load.run import cpu_use, print_cpu, throughput
from tests.bench.test_load_throughput import recorded


def test_the_window_counts_this_process_s_cpu_as_the_load_driver() -> None:
    window = CpuWindow()
    window.start()
    spent = time.process_time()
    while time.process_time() - spent < 0.3:  # busy, so there are ticks to count
        hashlib.sha256(b"x" * 4096).digest()
    used = window.stop()

    # Only this process's share is checked: other stacks on the machine (a benchmark run
    # beside the tests) show up under their own names, as they should.
    assert used[DRIVER] >= 0.1


def test_stop_before_start_is_refused() -> None:
    with pytest.raises(RuntimeError, match="before start"):
        CpuWindow().stop()


def test_each_part_s_cpu_is_divided_by_the_successful_calls() -> None:
    entry = throughput(recorded(), elapsed=2.0)  # 5 answered calls
    use = cpu_use({"mem0-local": 0.5, "mem0-bridge": 0.25}, 2.0, entry)

    assert use["ms_per_call"] == {"mem0-local": 100.0, "mem0-bridge": 50.0}
    assert use["busy_cores"] == 0.38


def test_the_table_shows_each_part_and_the_total_per_call(
    capsys: pytest.CaptureFixture[str],
) -> None:
    entry = {"scenario": "none", "clients": 16, **throughput(recorded(), elapsed=2.0)}
    entry["cpu"] = cpu_use({"mem0-local": 0.5, "postgres": 0.1}, 2.0, entry)
    print_cpu([entry])

    out = capsys.readouterr().out
    assert "mem0-local" in out
    assert "postgres" in out
    assert "120.0" in out  # 100 + 20 ms per call

"""The load benchmark's throughput figures: successful calls per second and per-tool p50/p95,
in each run's JSON entry and in the table `make bench-load` prints."""

from __future__ import annotations

import re

import pytest

from bench.load.run import print_table, throughput
from bench.load.workload import Recorder


def recorded() -> Recorder:
    recorder = Recorder()
    for ms in (100, 200, 300, 400):
        recorder.calls["memory_add"] += 1
        recorder.answered("memory_add", ms / 1000, {})
    recorder.calls["memory_add"] += 1
    recorder.error("memory_add", "mem0 is unreachable")
    recorder.calls["memory_search"] += 2
    recorder.answered("memory_search", 0.05, {})
    recorder.error("memory_search", "no answer within 120 s")
    recorder.calls["memory_history"] += 1
    recorder.error("memory_history", "no answer within 120 s")
    return recorder


def test_calls_per_second_counts_only_successful_calls() -> None:
    figures = throughput(recorded(), elapsed=2.0)

    assert figures["calls_per_second"] == 2.5  # 5 answered in 2 s
    assert figures["attempted_calls_per_second"] == 4.0  # 8 sent


def test_each_tool_has_its_p50_and_p95_of_answered_calls() -> None:
    add = throughput(recorded(), elapsed=2.0)["per_tool"]["memory_add"]

    assert (add["calls"], add["errors"], add["calls_per_second"]) == (4, 1, 2.0)
    assert add["p50_ms"] == pytest.approx(250.0)
    assert add["p95_ms"] == pytest.approx(385.0)


def test_a_tool_that_never_answered_has_no_latency() -> None:
    history = throughput(recorded(), elapsed=2.0)["per_tool"]["memory_history"]

    assert history == {
        "calls": 0,
        "errors": 1,
        "calls_per_second": 0.0,
        "p50_ms": None,
        "p95_ms": None,
    }


def test_the_table_prints_clients_calls_per_second_and_gates(
    capsys: pytest.CaptureFixture[str],
) -> None:
    gates = [
        "acked_facts",
        "duplicate_memories",
        "duplicated_facts",
        "lost",
        "stale",
        "older_value_first",
        "older_value_first_during_run",
        "not_one_current",
        "unreadable",
        "ambiguous",
    ]
    check = dict.fromkeys(gates, 0)
    run = {
        "scenario": "none",
        "clients": 16,
        "calls": {"memory_add": 10},
        "acks": 10,
        "errors": {},
        "check": {**check, "older_value_first": 3},
        "settle": {"seconds": 1.0},
        "latency": {},
        **throughput(recorded(), elapsed=2.0),
    }

    print_table([run])

    header, rule, row = capsys.readouterr().out.splitlines()[:3]
    spans = [m.span() for m in re.finditer(r"-+", rule)]
    cells = {header[a:b].strip(): row[a:b].strip() for a, b in spans}
    assert (cells["clients"], cells["calls/s"], cells["old 1st"]) == ("16", "2.50", "3")
    assert {"not 1 cur", "unread", "add p50", "add p95", "search p95"} <= set(cells)

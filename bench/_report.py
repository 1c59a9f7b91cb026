"""Small helpers every benchmark may share: latency summaries, a text table, the JSON result.

API:
- `summarize(seconds)` -> {"n", "p50_ms", "p95_ms", "mean_ms", "max_ms"} from durations in seconds.
- `timed(awaitable)` -> seconds it took to await it.
- `interleave(label, indices, measured, baseline, every)` -> per-call seconds of both sides, one
  call of each in turn per index (machine noise hits both alike), with progress every `every`.
- `compare_summaries(summaries, measured, baseline, ops)` -> the p50/p95 figures of a measured
  side against its baseline per operation, and the ratio of medians.
- `latency_table(summaries, rows)` -> `format_table` of n, p50, p95 and mean per labelled key.
- `percentile(values, q)` -> the q-th percentile (0..100, inclusive method) of `values`.
- `format_table(headers, rows)` -> a plain aligned text table (numbers right-aligned).
- `write_result(name, data)` -> writes `bench/results/<name>.json` (sorted keys); returns its path.
- `progress(message)` -> one progress line on stderr, flushed (long benches print progress).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).resolve().parent / "results"


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0 <= q <= 100) with linear interpolation between samples."""
    if not values:
        raise ValueError("percentile of no values")
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def summarize(seconds: Sequence[float]) -> dict[str, float]:
    """Latency summary in milliseconds of durations measured in seconds."""
    ms = [s * 1000 for s in seconds]
    return {
        "n": len(ms),
        "p50_ms": statistics.median(ms),
        "p95_ms": percentile(ms, 95),
        "mean_ms": statistics.fmean(ms),
        "max_ms": max(ms),
    }


async def timed(awaitable: Awaitable[object]) -> float:
    started = time.perf_counter()
    await awaitable
    return time.perf_counter() - started


async def interleave(
    label: str,
    indices: Sequence[int],
    measured: Callable[[int], Awaitable[object]],
    baseline: Callable[[int], Awaitable[object]],
    every: int,
) -> tuple[list[float], list[float]]:
    """Time `measured(i)` then `baseline(i)` for each index, so both see the same machine."""
    measured_times: list[float] = []
    baseline_times: list[float] = []
    for done, i in enumerate(indices, start=1):
        measured_times.append(await timed(measured(i)))
        baseline_times.append(await timed(baseline(i)))
        if done % every == 0 or done == len(indices):
            progress(f"  {label}: {done}/{len(indices)}")
    return measured_times, baseline_times


def compare_summaries(
    summaries: dict[str, dict[str, float]], measured: str, baseline: str, ops: Sequence[str]
) -> dict[str, float]:
    """`<op>_p50_ms`, `<op>_p95_ms`, `baseline_<op>_p50_ms`, `baseline_<op>_p95_ms` and
    `<op>_p50_ratio` (measured / baseline) from the summaries keyed `<side>_<op>`."""
    figures: dict[str, float] = {}
    for op in ops:
        ours, base = summaries[f"{measured}_{op}"], summaries[f"{baseline}_{op}"]
        figures[f"{op}_p50_ms"] = ours["p50_ms"]
        figures[f"{op}_p95_ms"] = ours["p95_ms"]
        figures[f"baseline_{op}_p50_ms"] = base["p50_ms"]
        figures[f"baseline_{op}_p95_ms"] = base["p95_ms"]
        figures[f"{op}_p50_ratio"] = ours["p50_ms"] / base["p50_ms"]
    return figures


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    numeric = [all(isinstance(row[i], int | float) for row in rows) for i in range(len(headers))]

    def line(values: Sequence[str]) -> str:
        return "  ".join(
            v.rjust(w) if num else v.ljust(w)
            for v, w, num in zip(values, widths, numeric, strict=True)
        )

    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, cells)])


def latency_table(summaries: dict[str, dict[str, float]], rows: Sequence[tuple[str, str]]) -> str:
    """One line per (label, summary key): n, p50, p95 and mean in milliseconds."""
    return format_table(
        ["operation", "n", "p50 ms", "p95 ms", "mean ms"],
        [
            [label, *(summaries[key][stat] for stat in ("n", "p50_ms", "p95_ms", "mean_ms"))]
            for label, key in rows
        ],
    )


def write_result(name: str, data: dict[str, Any]) -> Path:
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{name}.json"
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    return path


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)

"""Small helpers every benchmark may share: latency summaries, a text table, the JSON result.

API:
- `summarize(seconds)` -> {"n", "p50_ms", "p95_ms", "mean_ms", "max_ms"} from durations in seconds.
- `percentile(values, q)` -> the q-th percentile (0..100, inclusive method) of `values`.
- `format_table(headers, rows)` -> a plain aligned text table (numbers right-aligned).
- `write_result(name, data)` -> writes `bench/results/<name>.json` (sorted keys); returns its path.
- `progress(message)` -> one progress line on stderr, flushed (long benches print progress).
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Sequence
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


def write_result(name: str, data: dict[str, Any]) -> Path:
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{name}.json"
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    return path


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)

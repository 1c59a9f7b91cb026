"""Small helpers every benchmark may share: latency summaries, a text table, the result files.

API:
- `summarize(seconds)` -> {"n", "p50_ms", "p95_ms", "mean_ms", "max_ms"} from durations in seconds.
- `timed(awaitable)` -> seconds it took to await it.
- `percentile(values, q)` -> the q-th percentile (0..100, inclusive method) of `values`.
- `format_table(headers, rows)` -> a plain aligned text table (numbers right-aligned).
- `machine()` -> {"cpus", "python"}: the machine a result was measured on, for its setup.
- `write_result(name, data[, directory])` -> writes `<directory>/<name>.json` (sorted keys;
  `bench/results` by default); returns its path.
- `figure(path, *grid, dpi=100, **options)` -> a context manager giving matplotlib's
  `subplots(*grid, **options)` to draw on; laid out, saved to `path` and closed after it.
- `write_outputs(name, result, draw[, directory])` -> `write_result`, then `draw(png)` for the
  `<name>.png` beside it; returns both paths.
- `progress(message)` -> one progress line on stderr, flushed (long benches print progress).
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
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


def machine() -> dict[str, Any]:
    return {"cpus": os.cpu_count(), "python": platform.python_version()}


def write_result(name: str, data: dict[str, Any], directory: Path = RESULTS_DIR) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.json"
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    return path


@contextmanager
def figure(path: Path, *grid: int, dpi: int = 100, **options: Any) -> Iterator[tuple[Any, Any]]:
    """matplotlib's `subplots(*grid, **options)`, (figure, axes), to draw on in the block; then
    laid out and saved to `path` at `dpi`. matplotlib is loaded here only, headless."""
    import matplotlib  # noqa: PLC0415 - only when plotting

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    fig, axes = plt.subplots(*grid, **options)
    try:
        yield fig, axes
        fig.tight_layout()
        fig.savefig(path, dpi=dpi)
    finally:
        plt.close(fig)


def write_outputs(
    name: str,
    result: dict[str, Any],
    draw: Callable[[Path], object],
    directory: Path = RESULTS_DIR,
) -> tuple[Path, Path]:
    """Write `<name>.json` (`write_result`), then let `draw` plot `<name>.png` beside it."""
    path = write_result(name, result, directory)
    png = directory / f"{name}.png"
    draw(png)
    return path, png


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)

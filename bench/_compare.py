"""What a benchmark that times two ways of making the same calls shares (the bridge against the
REST calls it wraps, mem0-local's HTTP API against the library call it serves): both sides timed
in turn, their summaries, the figures of one against the other, and the printed table.

API:
- `interleave(label, indices, measured, baseline, every)` -> per-call seconds of both sides, one
  call of each in turn per index (machine noise hits both alike), with progress every `every`.
- `compared(times, measured, baseline, n)` -> {"n", "summaries", and per operation (add, search)
  `<op>_p50_ms`, `<op>_p95_ms`, `baseline_<op>_p50_ms`, `baseline_<op>_p95_ms`, `<op>_p50_ratio`}
  from the seconds of each series, keyed `<side>_<op>`.
- `latency_table(summaries, rows)` -> `format_table` of n, p50, p95 and mean per labelled key.
- `print_comparison(result, rows, sides)` -> prints the `latency_table` of `rows`, then `sides`
  ("measured / baseline") and the ratio of medians of each operation.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from bench._report import format_table, progress, summarize, timed

#: The operations both sides make.
OPS = ("add", "search")


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


def compared(times: dict[str, list[float]], measured: str, baseline: str, n: int) -> dict[str, Any]:
    """The summaries of every series, and the measured side's figures against its baseline."""
    summaries = {name: summarize(values) for name, values in times.items()}
    figures: dict[str, Any] = {"n": n}
    for op in OPS:
        ours, base = summaries[f"{measured}_{op}"], summaries[f"{baseline}_{op}"]
        figures[f"{op}_p50_ms"] = ours["p50_ms"]
        figures[f"{op}_p95_ms"] = ours["p95_ms"]
        figures[f"baseline_{op}_p50_ms"] = base["p50_ms"]
        figures[f"baseline_{op}_p95_ms"] = base["p95_ms"]
        figures[f"{op}_p50_ratio"] = ours["p50_ms"] / base["p50_ms"]
    return {**figures, "summaries": summaries}


def latency_table(summaries: dict[str, dict[str, float]], rows: Sequence[tuple[str, str]]) -> str:
    """One line per (label, summary key): n, p50, p95 and mean in milliseconds."""
    return format_table(
        ["operation", "n", "p50 ms", "p95 ms", "mean ms"],
        [
            [label, *(summaries[key][stat] for stat in ("n", "p50_ms", "p95_ms", "mean_ms"))]
            for label, key in rows
        ],
    )


def print_comparison(result: dict[str, Any], rows: Sequence[tuple[str, str]], sides: str) -> None:
    print(latency_table(result["summaries"], rows))
    ratios = ", ".join(f"{op} {result[f'{op}_p50_ratio']:.2f}x" for op in OPS)
    print(f"\n{sides}, ratio of medians: {ratios}")

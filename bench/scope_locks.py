"""What serialising adds per scope costs: a burst of concurrent adds into one scope vs many.

Adds of one scope run one at a time (so a restatement racing another add is judged against
it); adds of different scopes run concurrently. On the real stack (mem0-local on pgvector with
MiniLM, ranker, judge on the FakeLLM), a burst of N distinct facts is added concurrently
through the in-process bridge, alternately all into one scope and each into a scope of its own
(interleaved rounds, so machine noise hits both alike). The ratio of the median burst times is
the cost of the per-scope order for a burst that all lands in one project.

`python -m bench.scope_locks` (or `make bench-scope-locks`) prints a table and writes
bench/results/scope_locks.json.
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid

import anyio
from mcp import Client

from bench._mcp import call_tool
from bench._report import format_table, progress, summarize, write_result
from bench.bridge import fact
from mem0_bridge import create_server
from tests.support.stack import temporary_stack


async def _burst(client: Client, start: int, keys: list[str]) -> tuple[float, list[float]]:
    """Add len(keys) distinct facts at once, fact i into keys[i]; burst and per-add seconds."""
    each: list[float] = []

    async def add(i: int, key: str) -> None:
        began = time.perf_counter()
        await call_tool(client, "memory_add", text=fact(start + i), key=key)
        each.append(time.perf_counter() - began)

    began = time.perf_counter()
    async with anyio.create_task_group() as tasks:
        for i, key in enumerate(keys):
            tasks.start_soon(add, i, key)
    return time.perf_counter() - began, each


async def measure(burst: int, rounds: int) -> dict[str, object]:
    with temporary_stack("mem0mcp_bench_locks") as stack:
        settings = stack.settings(infer=False, log_level="WARNING")
        async with Client(create_server(settings)) as client:
            run = uuid.uuid4().hex[:6]
            one_scope = [f"locks-{run}-one"] * burst
            results: dict[str, list[float]] = {"one scope": [], "own scopes": []}
            per_add: dict[str, list[float]] = {"one scope": [], "own scopes": []}
            start = 0
            for r in range(rounds + 1):  # round 0 warms up
                for name in ("one scope", "own scopes"):
                    separate = [f"locks-{run}-{r}-{i}" for i in range(burst)]
                    keys = one_scope if name == "one scope" else separate
                    total, each = await _burst(client, start, keys)
                    start += burst
                    if r:
                        results[name].append(total)
                        per_add[name].extend(each)
                progress(f"round {r}/{rounds}")
    one, own = summarize(results["one scope"]), summarize(results["own scopes"])
    return {
        "burst": burst,
        "rounds": rounds,
        "burst_seconds": {"one_scope": one, "own_scopes": own},
        "add_seconds": {k.replace(" ", "_"): summarize(v) for k, v in per_add.items()},
        "burst_p50_ratio_one_vs_own": one["p50_ms"] / own["p50_ms"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--burst", type=int, default=16, help="concurrent adds per burst")
    parser.add_argument("--rounds", type=int, default=8, help="measured rounds per side")
    args = parser.parse_args()
    result = asyncio.run(measure(args.burst, args.rounds))
    bursts = result["burst_seconds"]
    adds = result["add_seconds"]
    if not (isinstance(bursts, dict) and isinstance(adds, dict)):
        raise TypeError("measure() returned an unexpected shape")
    print(
        format_table(
            ["burst of concurrent adds", "burst p50 ms", "add p50 ms", "add p95 ms"],
            [
                [
                    name.replace("_", " "),
                    f"{bursts[name]['p50_ms']:.0f}",
                    f"{adds[name]['p50_ms']:.0f}",
                    f"{adds[name]['p95_ms']:.0f}",
                ]
                for name in ("one_scope", "own_scopes")
            ],
        )
    )
    print(f"one scope / own scopes (burst p50): {result['burst_p50_ratio_one_vs_own']:.2f}x")
    print(f"wrote {write_result('scope_locks', result)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

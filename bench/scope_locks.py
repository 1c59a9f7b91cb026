"""What serialising adds per scope costs: a burst of concurrent adds into one scope vs many.

Adds of one scope run one at a time (so a restatement racing another add is judged against
it); adds of different scopes run concurrently. On the real stack (mem0-local on pgvector with
MiniLM, ranker, judge on the FakeLLM), a burst of N distinct facts is added concurrently
through the in-process bridge, alternately all into one scope and each into a scope of its own
(interleaved rounds, so machine noise hits both alike). The ratio of the median burst times is
the cost of the per-scope order for a burst that all lands in one project.

Across bridge replicas the order also takes the scope's lease in the ranker (a gRPC round
trip to take it and one to give it back). What that adds to one uncontended write is measured
against the local lock alone (interleaved, `--holds` each); and what handing a scope between
two replicas costs: two lock sets (as two replicas), four writers each, every write holding the
scope for 20 ms, against the 20 ms per write a perfect hand-off would take.

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
from mem0_bridge._concurrency import KeyedLocks
from mem0_bridge._leases import ScopeLocks
from mem0_bridge._ranker import RankerClient
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


#: How long each write of the hand-off measurement holds its scope.
HANDOFF_HOLD_SECONDS = 0.02
HANDOFF_WRITERS = 4
HANDOFF_WRITES = 10


async def _hold_once(locks: KeyedLocks | ScopeLocks, scope: str) -> float:
    began = time.perf_counter()
    async with locks.hold(scope):
        pass
    return time.perf_counter() - began


async def _handoff(ranker: RankerClient, scope: str) -> float:
    """Seconds of overhead per write, beyond its hold, with two replicas sharing one scope."""
    replicas = [ScopeLocks(ranker, 10.0, 60.0), ScopeLocks(ranker, 10.0, 60.0)]

    async def writer(locks: ScopeLocks) -> None:
        for _ in range(HANDOFF_WRITES):
            async with locks.hold(scope):
                await anyio.sleep(HANDOFF_HOLD_SECONDS)

    began = time.perf_counter()
    async with anyio.create_task_group() as tasks:
        for i in range(2 * HANDOFF_WRITERS):
            tasks.start_soon(writer, replicas[i % 2])
    writes = 2 * HANDOFF_WRITERS * HANDOFF_WRITES
    return (time.perf_counter() - began) / writes - HANDOFF_HOLD_SECONDS


async def measure_lease(ranker_address: str, holds: int) -> dict[str, object]:
    """The lease's cost: an uncontended hold with and without it, and a hand-off's overhead."""
    ranker = RankerClient(ranker_address, 5.0)
    try:
        local, leased = KeyedLocks(), ScopeLocks(ranker, 10.0, 60.0)
        run = uuid.uuid4().hex[:6]
        times: dict[str, list[float]] = {"local_lock": [], "with_lease": []}
        for i in range(holds + 10):  # the first 10 warm up the channel
            alone = await _hold_once(local, f"lease-{run}-{i}")
            with_lease = await _hold_once(leased, f"lease-{run}-{i}")
            if i >= 10:
                times["local_lock"].append(alone)
                times["with_lease"].append(with_lease)
        handoffs = [await _handoff(ranker, f"handoff-{run}-{r}") for r in range(3)]
    finally:
        await ranker.aclose()
    held = {name: summarize(values) for name, values in times.items()}
    return {
        "holds": holds,
        "hold_seconds": held,
        "lease_cost_p50_ms": held["with_lease"]["p50_ms"] - held["local_lock"]["p50_ms"],
        "handoff": {
            "replicas": 2,
            "writers_per_replica": HANDOFF_WRITERS,
            "hold_ms": HANDOFF_HOLD_SECONDS * 1000,
            "overhead_per_write_ms": [round(h * 1000, 1) for h in handoffs],
        },
    }


async def measure(burst: int, rounds: int, holds: int) -> dict[str, object]:
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
        lease = await measure_lease(stack.ranker_address, holds)
    one, own = summarize(results["one scope"]), summarize(results["own scopes"])
    return {
        "burst": burst,
        "rounds": rounds,
        "burst_seconds": {"one_scope": one, "own_scopes": own},
        "add_seconds": {k.replace(" ", "_"): summarize(v) for k, v in per_add.items()},
        "burst_p50_ratio_one_vs_own": one["p50_ms"] / own["p50_ms"],
        "lease": lease,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--burst", type=int, default=16, help="concurrent adds per burst")
    parser.add_argument("--rounds", type=int, default=8, help="measured rounds per side")
    parser.add_argument("--holds", type=int, default=200, help="holds per side (lease cost)")
    args = parser.parse_args()
    result = asyncio.run(measure(args.burst, args.rounds, args.holds))
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
    lease = result["lease"]
    if not isinstance(lease, dict):
        raise TypeError("measure() returned an unexpected shape")
    held, handoff = lease["hold_seconds"], lease["handoff"]
    print(
        f"uncontended hold p50: {held['local_lock']['p50_ms']:.2f} ms local lock, "
        f"{held['with_lease']['p50_ms']:.2f} ms with the lease; hand-off between two replicas: "
        f"{handoff['overhead_per_write_ms']} ms per write beyond its hold"
    )
    print(f"wrote {write_result('scope_locks', result)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Throughput through 1 and then 2 bridge replicas (issue 25): does adding a replica help?

The same mixed workload as `bench.load` (adds, racing restatements, changes, change-backs,
searches; no faults) from N official MCP clients, through HAProxy (Debian's package, round
robin per request, no affinity) in front of 1 and then 2 bridge processes, against one
mem0-local on pgvector (throwaway database), one ranker and one judge on the fake LLM. Every
process runs on this machine; rounds alternate the replica counts (1, 2, 1, 2, ...) so that
other load on a shared machine falls on both alike.

Besides calls/s and latency, it says where a call's time goes, two ways:

* call time: the seconds mem0-local, the ranker and the judge spent serving requests during
  the run (each logs one line per request with its duration) per second of tool-call latency;
  what is left is the bridge itself, the balancer and waiting in queues.
* CPU: each process's CPU seconds over the run (/proc/<pid>/stat, children included;
  PostgreSQL as the backends serving the run's database), and the machine's total, so that
  what other users of the machine took shows too.

    python -m bench.scale                      # 16 clients, 30 s per run, 2 rounds (~6 min)
    python -m bench.scale --clients 8 --seconds 15 --rounds 1
    make bench-scale

Writes bench/results/scale.json (keys `clients`, `calls_per_second`, `p50_ms`, `p95_ms` by
replica count, `call_time_share` and `cpu_share` by replica count, every run) and prints a
table.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import sys
import time
import uuid
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench._report import format_table, machine, percentile, progress, write_result
from bench.load.run import (
    Options,
    Services,
    Target,
    bridge_env,
    bridge_settings,
    run_load,
    run_projects,
    running_services,
)
from bench.load.workload import COLLISION_CHANCE, OP_WEIGHTS, Recorder
from tests.support.haproxy import running_haproxy
from tests.support.processes import ServiceProcess

#: Shared by the replicas of a run, as a deployment's replicas share it.
STATE_SECRET = "bench-scale-request-state-secret-0123456789"  # noqa: S105 - a bench value
TICKS = os.sysconf("SC_CLK_TCK")
#: mem0-local's access line ("POST /memories -> 200 in 12.3 ms") and the gRPC services' call
#: line ("Rerank OK 1.23ms").
_MEM0_LINE = re.compile(r" -> \d{3} in (?P<ms>[0-9.]+) ms$", re.MULTILINE)
_GRPC_LINE = re.compile(r" (?P<method>[A-Z]\w+) [A-Z_]+ (?P<ms>[0-9.]+)ms", re.MULTILINE)
#: Health probes are not the bridge's calls.
_PROBES = frozenset({"Check", "Watch"})


def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, CPU seconds so far) of a process, None if it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / TICKS


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return ""


def _machine_busy() -> float:
    """CPU seconds every core of the machine spent busy since boot (/proc/stat)."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    return (sum(values[:8]) - idle) / TICKS


@dataclass
class Sample:
    at: float
    cpu: dict[int, float]
    machine: float
    log_offsets: dict[str, int]


@dataclass
class Probe:
    """CPU and server-side time of the run's processes between "start" and "stop"."""

    groups: dict[str, list[int]]
    database: str
    logs: Mapping[str, Path]
    samples: dict[str, Sample] = field(default_factory=dict)
    #: The group of every process seen at either mark.
    owners: dict[int, str] = field(default_factory=dict)

    def _pids(self) -> dict[int, str]:
        """Every process of a group (its listed processes and their descendants; PostgreSQL
        backends of the run's database) by pid."""
        parents: dict[int, int] = {}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                stat = _stat(int(entry.name))
                if stat is not None:
                    parents[int(entry.name)] = stat[0]
        owner: dict[int, str] = {}
        for group, roots in self.groups.items():
            owner.update(dict.fromkeys(roots, group))
        changed = True
        while changed:
            changed = False
            for pid, parent in parents.items():
                if pid not in owner and parent in owner:
                    owner[pid] = owner[parent]
                    changed = True
        for pid in parents:
            if pid not in owner:
                line = _cmdline(pid)
                if line.startswith("postgres:") and f" {self.database} " in f" {line} ":
                    owner[pid] = "postgres"
        return owner

    def mark(self, moment: str) -> None:
        owners = self._pids()
        cpu = {pid: stat[1] for pid in owners if (stat := _stat(pid)) is not None}
        offsets = {name: path.stat().st_size for name, path in self.logs.items()}
        self.samples[moment] = Sample(time.monotonic(), cpu, _machine_busy(), offsets)
        self.owners.update(owners)

    def cpu_seconds(self) -> dict[str, float]:
        start, stop = self.samples["start"], self.samples["stop"]
        used: dict[str, float] = dict.fromkeys([*self.groups, "postgres"], 0.0)
        for pid, seconds in stop.cpu.items():
            used[self.owners[pid]] += seconds - start.cpu.get(pid, 0.0)
        return used

    def wall_seconds(self) -> float:
        return self.samples["stop"].at - self.samples["start"].at

    def machine_seconds(self) -> float:
        return self.samples["stop"].machine - self.samples["start"].machine

    def served_seconds(self) -> dict[str, float]:
        """Seconds each helper spent serving requests in the window, from its log."""
        start, stop = self.samples["start"], self.samples["stop"]
        served: dict[str, float] = {}
        for name, path in self.logs.items():
            with path.open("rb") as log:
                log.seek(start.log_offsets[name])
                text = log.read(stop.log_offsets[name] - start.log_offsets[name]).decode(
                    errors="replace"
                )
            if name == "mem0":
                served[name] = sum(float(m["ms"]) for m in _MEM0_LINE.finditer(text)) / 1000
            else:
                served[name] = (
                    sum(
                        float(m["ms"])
                        for m in _GRPC_LINE.finditer(text)
                        if m["method"] not in _PROBES
                    )
                    / 1000
                )
        return served


def _database_name(url: str) -> str:
    return url.rsplit("/", 1)[-1].split("?", 1)[0]


async def measure(
    services: Services, replicas: int, clients: int, options: Options, index: int
) -> dict[str, Any]:
    """One run: `replicas` bridges behind HAProxy, the load, and where its time went."""
    stack = services.stack
    settings = bridge_settings(stack)
    env = {**bridge_env(stack, settings), "MEM0_REQUEST_STATE_SECRET": STATE_SECRET}
    if services.ranker is None or services.judge is None:
        raise RuntimeError("the ranker and the judge must be up")
    with ExitStack() as stopping:
        bridges: list[ServiceProcess] = []
        for _ in range(replicas):
            bridge = await asyncio.to_thread(ServiceProcess, ["mem0-bridge"], env, ready_timeout=60)
            stopping.callback(bridge.stop)
            bridges.append(bridge)
        balancer = stopping.enter_context(running_haproxy([f"127.0.0.1:{b.port}" for b in bridges]))
        probe = Probe(
            groups={
                "bridge": [b.proc.pid for b in bridges],
                "haproxy": [balancer.process.pid],
                "mem0-local": [services.mem0.proc.pid],
                "ranker": [services.ranker.proc.pid],
                "judge": [services.judge.proc.pid],
                "clients+llm": [os.getpid()],
            },
            database=_database_name(stack.database_url),
            logs={
                "mem0": services.mem0.log_path,
                "ranker": services.ranker.log_path,
                "judge": services.judge.log_path,
            },
        )
        target = Target(
            f"{balancer.url}/mcp", stack.mem0_url, settings.default_user_id, settings.api_key
        )
        recorder = Recorder()
        entry = await run_load(
            target,
            "none",
            clients,
            options,
            index,
            projects=run_projects(uuid.uuid4().hex[:6]),
            recorder=recorder,
            on_window=probe.mark,
        )
        served_by = balancer.served()
    return _figures(replicas, entry, recorder, probe, served_by)


def _figures(
    replicas: int,
    entry: dict[str, Any],
    recorder: Recorder,
    probe: Probe,
    served_by: dict[str, int],
) -> dict[str, Any]:
    latencies = [t for times in recorder.latencies.values() for t in times]
    wall = probe.wall_seconds()
    call_seconds = sum(latencies)
    served = probe.served_seconds()
    cpu = probe.cpu_seconds()
    ours = sum(cpu.values())
    busy = probe.machine_seconds()
    cores = os.cpu_count() or 1
    return {
        "replicas": replicas,
        "seconds": round(wall, 1),
        "calls": len(latencies),
        "errors": sum(recorder.errors.values()),
        "calls_per_second": round(len(latencies) / wall, 2),
        # Throughput per CPU second the run's processes got: what replicas cannot change while
        # the machine is saturated (the rate follows the CPU other users leave).
        "calls_per_cpu_second": round(len(latencies) / ours, 2),
        "p50_ms": round(percentile(latencies, 50) * 1000, 1),
        "p95_ms": round(percentile(latencies, 95) * 1000, 1),
        "latency_seconds": latencies,
        "latency_by_tool_ms": {
            tool: [round(summary["p50_ms"]), round(summary["p95_ms"])]
            for tool, summary in entry["latency"].items()
        },
        "served_by_replica": served_by,
        "call_time_share": {
            **{name: round(seconds / call_seconds, 3) for name, seconds in served.items()},
            "bridge+balancer+queues": round(1 - sum(served.values()) / call_seconds, 3),
        },
        "ms_per_call": {
            name: round(1000 * seconds / len(latencies), 1) for name, seconds in served.items()
        },
        "cpu_seconds": {name: round(seconds, 1) for name, seconds in cpu.items()},
        "cpu_share": {name: round(seconds / ours, 3) for name, seconds in cpu.items()},
        "cores_busy": {
            "ours": round(ours / wall, 2),
            "machine": round(busy / wall, 2),
            "others": round(max(0.0, busy - ours) / wall, 2),
            "of": cores,
        },
        "passed": entry["passed"],
        "check": entry["check"],
        "load_average_after": entry["load_average_after"],
    }


def _by_replicas(runs: Sequence[dict[str, Any]], key: str) -> dict[str, Any]:
    counts = sorted({r["replicas"] for r in runs})
    return {
        str(n): round(statistics.fmean(r[key] for r in runs if r["replicas"] == n), 2)
        for n in counts
    }


def _pooled(runs: Sequence[dict[str, Any]], q: float) -> dict[str, float]:
    counts = sorted({r["replicas"] for r in runs})
    return {
        str(n): round(
            1000
            * percentile([t for r in runs if r["replicas"] == n for t in r["latency_seconds"]], q),
            1,
        )
        for n in counts
    }


def _mean_shares(runs: Sequence[dict[str, Any]], key: str) -> dict[str, dict[str, float]]:
    counts = sorted({r["replicas"] for r in runs})
    shares: dict[str, dict[str, float]] = {}
    for n in counts:
        mine = [r[key] for r in runs if r["replicas"] == n]
        shares[str(n)] = {
            name: round(statistics.fmean(s[name] for s in mine), 3) for name in mine[0]
        }
    return shares


def summary(runs: Sequence[dict[str, Any]], clients: int, seconds: float) -> dict[str, Any]:
    rates = _by_replicas(runs, "calls_per_second")
    ratio = rates["2"] / rates["1"] if {"1", "2"} <= rates.keys() and rates["1"] else None
    return {
        "clients": clients,
        "seconds_per_run": seconds,
        "calls_per_second": rates,
        "ratio_2_to_1": round(ratio, 2) if ratio is not None else None,
        "calls_per_cpu_second": _by_replicas(runs, "calls_per_cpu_second"),
        "p50_ms": _pooled(runs, 50),
        "p95_ms": _pooled(runs, 95),
        "call_time_share": _mean_shares(runs, "call_time_share"),
        "cpu_share": _mean_shares(runs, "cpu_share"),
        "cores_busy": _mean_shares(runs, "cores_busy"),
        "passed": all(r["passed"] for r in runs),
    }


def print_table(runs: Sequence[dict[str, Any]], result: dict[str, Any]) -> None:
    cpu_names = list(runs[0]["cpu_share"])
    headers = [
        "replicas",
        "calls/s",
        "calls/cpu s",
        "p50 ms",
        "p95 ms",
        "err",
        "mem0 t",
        "ranker t",
        "judge t",
        "rest t",
        *(f"{name} cpu" for name in cpu_names),
        "cores ours",
        "others",
    ]
    rows = [
        [
            r["replicas"],
            r["calls_per_second"],
            r["calls_per_cpu_second"],
            r["p50_ms"],
            r["p95_ms"],
            r["errors"],
            r["call_time_share"]["mem0"],
            r["call_time_share"]["ranker"],
            r["call_time_share"]["judge"],
            r["call_time_share"]["bridge+balancer+queues"],
            *(r["cpu_share"][name] for name in cpu_names),
            r["cores_busy"]["ours"],
            r["cores_busy"]["others"],
        ]
        for r in runs
    ]
    print(format_table(headers, rows))
    print(
        "(t: share of tool-call time spent serving in that service; cpu: share of the run's "
        "CPU seconds; cores: busy cores, ours and the machine's other users)"
    )
    rates = result["calls_per_second"]
    print(
        "\ncalls/s by replicas: "
        + ", ".join(f"{n}: {rate}" for n, rate in rates.items())
        + (f"; 2 vs 1: x{result['ratio_2_to_1']}" if result["ratio_2_to_1"] else "")
        + "; per CPU second of ours: "
        + ", ".join(f"{n}: {rate}" for n, rate in result["calls_per_cpu_second"].items())
    )


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.scale", description=(__doc__ or "").splitlines()[0]
    )
    parser.add_argument("--clients", type=int, default=16, help="MCP clients (default 16)")
    parser.add_argument("--seconds", type=float, default=30.0, help="load per run (default 30)")
    parser.add_argument(
        "--replicas", default="1,2", help="bridge replica counts, a comma list (default 1,2)"
    )
    parser.add_argument(
        "--rounds", type=int, default=2, help="times each replica count runs (default 2)"
    )
    parser.add_argument("--seed", type=int, default=25)
    parser.add_argument(
        "--output", default="scale", help="bench/results/<output>.json (default scale)"
    )
    return parser.parse_args(argv)


async def run_all(
    services: Services, plan: Sequence[int], clients: int, options: Options
) -> list[dict[str, Any]]:
    runs = []
    for index, replicas in enumerate(plan):
        progress(f"run {index + 1}/{len(plan)}: {replicas} replica(s), {clients} clients")
        run = await measure(services, replicas, clients, options, index)
        progress(
            f"  {replicas} replica(s): {run['calls_per_second']} calls/s, p50 {run['p50_ms']} "
            f"ms, p95 {run['p95_ms']} ms, cores busy {run['cores_busy']}"
        )
        runs.append(run)
    return runs


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    counts = [int(n) for n in str(args.replicas).split(",") if n.strip()]
    plan = [n for _ in range(args.rounds) for n in counts]
    options = Options(
        seconds=args.seconds,
        fault_at=0.0,
        fault_for=0.0,
        settle_max=30.0,
        quiet=3.0,
        seed=args.seed,
    )
    started = time.monotonic()
    progress("starting mem0-local (pgvector, throwaway database), ranker, judge on FakeLLM")
    with running_services() as services:
        runs = asyncio.run(run_all(services, plan, args.clients, options))
    result = {
        "command": "python -m bench.scale " + " ".join(sys.argv[1:] if argv is None else argv),
        **summary(runs, args.clients, args.seconds),
        "machine": machine(),
        "total_seconds": round(time.monotonic() - started, 1),
        "setup": {
            "balancer": "HAProxy (Debian), round robin per request, no affinity",
            "bridges": "mem0-bridge processes on streamable HTTP, stateless, shared "
            "MEM0_REQUEST_STATE_SECRET",
            "helpers": "one mem0-local on pgvector (throwaway database, MiniLM on CPU), one "
            "ranker on SQLite, one judge on the fake LLM (in this process, with the clients)",
            "clients": "official MCP clients (bench.load's workload), closed loop, no faults",
            "op_weights": OP_WEIGHTS,
            "collision_chance": COLLISION_CHANCE,
            "order": plan,
        },
        "runs": [{k: v for k, v in r.items() if k != "latency_seconds"} for r in runs],
    }
    path = write_result(args.output, result)
    print_table(runs, result)
    progress(f"wrote {path} in {result['total_seconds']:.0f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

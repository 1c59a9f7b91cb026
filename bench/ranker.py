"""Ranker benchmark: rerank throughput against a bare gRPC echo, table-size independence, dedupe.

Every server runs as its own subprocess, the ranker as `mem0-ranker` with its default settings
apart from ports, file paths and log level (metrics on), and so does the baseline: a bare
`grpc.aio` server whose one generic handler returns the request bytes unparsed. The client is
this process; it sends pre-serialised bytes and does not parse replies, so client cost is the
same for both and the difference is what the ranker's server side adds.

The headline ranker runs at WARNING: at INFO the shared call interceptor writes one log line
per call, which costs the server a formatted record and a write, and costs this process the
reading of that pipe (ServiceProcess pumps the child's stderr into a log file) while the echo
writes nothing. A second ranker at INFO is measured in the same rounds and reported beside it.

1. throughput: a 50-candidate RerankRequest at 32 calls in flight for a few seconds, echo and
   rankers interleaved over several rounds (machine noise hits all alike); calls per second,
   median of the rounds -> `rerank_vs_echo_ratio` (goal >= 0.8) and, at INFO,
   `rerank_vs_echo_ratio_info_logging`. The headline ranker has its default mention cache,
   warm (the request's 50 ids are cached after the first call, as hot memories are in
   production); a ranker with the cache off (`RANKER_MENTION_CACHE_SIZE=0`, a real SQLite
   lookup of 50 ids every call) is measured in the same rounds -> `rerank_uncached_vs_echo_ratio`.
   A third baseline, the echo handler inside `mem0_common.GrpcServer` (interceptor, metrics),
   splits the gap into shared plumbing and the ranker's own work, and a fourth, the "floor"
   (same plumbing; parses the RerankRequest, reads each candidate's four fields once, answers
   an empty RerankResponse), is the least any typed Python Rerank can cost. The payload is in
   the form the bridge sends, `columns` (the floor reads those four columns); the same
   candidates as Candidate messages, the older form, go to the headline ranker and the floor
   in the same rounds -> `rerank_vs_floor_ratio_candidate_messages`. Each server's CPU time per
   call (user + system, all threads, from /proc) is recorded too: unlike calls per second it
   hardly depends on what else the machine runs -> `server_cpu_us_per_call`;
2. table size: rankers on a SQLite file with 1 000 mention rows and on one with 1 000 000
   (bulk-loaded with executemany in one transaction, ids sorted, before the ranker starts),
   called one at a time, alternating, each call naming 50 random ids present in the table.
   The goal figure compares rankers with the mention cache OFF, so every call reads its 50
   rows from the file -> `rerank_p50_ratio_1m_vs_1k` (goal <= 1.2). The same with default
   settings is reported beside it (`..._cached`): at 1k rows every id is cached after the
   first calls (warm), at 1M the 2000 calls' random ids are mostly first seen (cold: misses
   that go to the file), so that ratio is roughly "cache miss vs cache hit";
   the same on PostgreSQL, cache off (rows loaded with COPY) -> `pg_rerank_p50_ratio_1m_vs_1k`;
3. dedupe: sequential CheckDuplicate calls, half of them duplicates -> `dedupe_p50_ms`,
   `dedupe_p99_ms`; the echo's sequential latency is measured alongside for reference.

`python -m bench.ranker` (or `make bench-ranker`) prints a table, writes bench/results/ranker.json
and bench/results/ranker.png. `--quick` shortens every phase (for a smoke run).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import grpc
import psycopg

from bench._report import figure, machine, percentile, progress, write_outputs
from mem0_common import (
    GrpcServer,
    GrpcServiceSettings,
    ServiceProcess,
    ServiceRegistration,
    announce_listening,
    configure_logging,
)
from mem0_ranker._postgres import PostgresStore
from mem0_ranker._sqlite import SqliteStore
from mem0mcp.contract import candidate_columns
from mem0mcp.ranker.v1 import ranker_pb2 as pb
from tests.support.postgres import temporary_database
from tests.support.processes import ranker_subprocess

ROOT = Path(__file__).resolve().parent.parent
ECHO_METHOD = "/bench.Echo/Echo"
RERANK_METHOD = "/mem0mcp.ranker.v1.RankerService/Rerank"
DEDUPE_METHOD = "/mem0mcp.ranker.v1.RankerService/CheckDuplicate"
CANDIDATES = 50
#: Related ids per candidate (other candidates of the same request), as the bridge passes them.
RELATED_PER_CANDIDATE = 2
IN_FLIGHT = 32
SMALL_TABLE = 1_000
LARGE_TABLE = 1_000_000
SCOPE = "user:bench"

Call = Callable[[bytes], Awaitable[bytes]]


# --- the baseline servers -----------------------------------------------------------------------


async def _echo_handler(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
    return request


def _add_echo(servicer: object, server: grpc.aio.Server) -> None:
    handlers = {"Echo": grpc.unary_unary_rpc_method_handler(_echo_handler)}
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("bench.Echo", handlers),))


async def _floor_handler(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
    """What any typed Rerank servicer must do at least: parse, read every candidate field once,
    answer an (empty) RerankResponse. No checks, no lookup, no scoring. Either form of the
    request: the fields of each Candidate message, or each column of `columns` in one read."""
    message = pb.RerankRequest.FromString(request)
    for c in message.candidates:
        c.memory_id, c.similarity, c.created_at, c.updated_at  # noqa: B018 - the reads are the point
    columns = message.columns
    list(columns.memory_ids), list(columns.similarities)
    list(columns.created_at), list(columns.updated_at)
    return pb.RerankResponse().SerializeToString()


def _add_floor(servicer: object, server: grpc.aio.Server) -> None:
    handlers = {"Echo": grpc.unary_unary_rpc_method_handler(_floor_handler)}
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("bench.Echo", handlers),))


async def _serve_echo(kind: str) -> None:
    """The request bytes straight back, unparsed.

    Bare: a plain `grpc.aio` server, the baseline of the goal. Plumbed: the same handler inside
    `mem0_common.GrpcServer` (call interceptor, metrics, health, reflection) at WARNING, which
    shows how much of the gap is the shared plumbing and how much the ranker's own work.
    Floor: `_floor_handler` in the same plumbing, the least a Python Rerank can cost.
    """
    if kind in ("plumbed", "floor"):
        configure_logging("WARNING")
        settings = GrpcServiceSettings(port=0, metrics_port=0)
        add = _add_echo if kind == "plumbed" else _add_floor
        plumbed_server = GrpcServer(
            "echo", [ServiceRegistration("bench.Echo", None, add)], settings
        )
        await plumbed_server.start()
        announce_listening("echo", f"grpc://{plumbed_server.address}")
        await asyncio.Event().wait()
    server = grpc.aio.server()
    _add_echo(None, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    announce_listening("echo", f"grpc://127.0.0.1:{port}")
    await server.wait_for_termination()


# --- data ---------------------------------------------------------------------------------------


def _memory_ids(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return sorted(str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(count))


def _mention_rows(ids: list[str]) -> Iterator[tuple[str, str, int, float]]:
    now = time.time()
    rng = random.Random(7)
    for i, memory_id in enumerate(ids):
        yield (
            memory_id,
            f"{SCOPE}/run:{i % 100}",
            rng.randint(1, 20),
            now - rng.uniform(0, 365) * 86400,
        )


def load_mentions(path: Path, count: int) -> list[str]:
    """A ranker SQLite file with `count` mention rows; returns their ids.

    The schema comes from the ranker itself (its migrations); the rows are bulk-loaded in one
    transaction with executemany, ids pre-sorted so the primary-key B-tree is appended to.
    """

    async def migrate() -> None:
        store = await SqliteStore.open(path)
        await store.close()

    asyncio.run(migrate())
    ids = _memory_ids(count, seed=count)
    conn = sqlite3.connect(path)
    try:
        with conn:
            conn.executemany(
                "INSERT INTO ranker_mentions (memory_id, scope, mentions, last_reinforced_at)"
                " VALUES (?, ?, ?, ?)",
                _mention_rows(ids),
            )
    finally:
        conn.close()
    return ids


def load_mentions_postgres(url: str, count: int) -> list[str]:
    """The same rows into a PostgreSQL database, with COPY, then VACUUM ANALYZE."""

    async def migrate() -> None:
        store = await PostgresStore.open(url, max_size=1)
        await store.close()

    asyncio.run(migrate())
    ids = _memory_ids(count, seed=count)
    with psycopg.connect(url) as conn:
        with (
            conn.cursor() as cur,
            cur.copy(
                "COPY ranker_mentions (memory_id, scope, mentions, last_reinforced_at) FROM STDIN"
            ) as copy,
        ):
            for row in _mention_rows(ids):
                copy.write_row(row)
        conn.commit()
        conn.autocommit = True
        # What autovacuum does to a settled table: statistics, and the visibility map that
        # lets lookups be index-only scans.
        conn.execute("VACUUM ANALYZE ranker_mentions")
    return ids


def rerank_payloads(ids: list[str], count: int, seed: int, *, columns: bool = True) -> list[bytes]:
    """Serialised RerankRequests of CANDIDATES random ids each, in the form the bridge sends
    (`columns`), or as Candidate messages (the older form) when `columns` is False."""
    rng = random.Random(seed)
    payloads = []
    for _ in range(count):
        chosen = rng.sample(ids, CANDIDATES)
        candidates = [
            pb.Candidate(
                memory_id=memory_id,
                similarity=rng.uniform(0.3, 0.9),
                created_at="2026-03-01T10:00:00.123456-08:00",
                updated_at="2026-09-01T10:00:00.654321-07:00",
                # As the bridge sends them: each memory names a few it was stored close to.
                related_ids=rng.sample(chosen, RELATED_PER_CANDIDATE),
            )
            for memory_id in chosen
        ]
        request = (
            pb.RerankRequest(columns=candidate_columns(candidates), limit=10)
            if columns
            else pb.RerankRequest(candidates=candidates, limit=10)
        )
        payloads.append(request.SerializeToString())
    return payloads


# --- measurement ----------------------------------------------------------------------------------


@contextmanager
def _channel_call(port: int, method: str) -> Iterator[tuple[grpc.aio.Channel, Call]]:
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    # No serializers: bytes go out and come back as they are, for echo and ranker alike.
    yield channel, channel.unary_unary(method)


async def throughput(
    server: ServiceProcess, method: str, payload: bytes, seconds: float
) -> tuple[float, float]:
    """Calls per second with IN_FLIGHT calls always outstanding (after a short warm-up), and
    the server's CPU microseconds per call over the same span."""
    with _channel_call(server.port, method) as (channel, call):
        async with channel:
            await asyncio.gather(*(call(payload) for _ in range(IN_FLIGHT * 4)))
            done = 0
            deadline = time.perf_counter() + seconds

            async def worker() -> None:
                nonlocal done
                while time.perf_counter() < deadline:
                    await call(payload)
                    done += 1

            cpu_before = cpu_seconds(server.proc.pid)
            start = time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(IN_FLIGHT)))
            elapsed = time.perf_counter() - start
            cpu_per_call = (cpu_seconds(server.proc.pid) - cpu_before) / done * 1e6
            return done / elapsed, cpu_per_call


async def _timed_calls(call: Call, payloads: list[bytes]) -> list[float]:
    out = []
    for payload in payloads:
        start = time.perf_counter()
        await call(payload)
        out.append((time.perf_counter() - start) * 1000)
    return out


async def latencies(port: int, method: str, payloads: list[bytes]) -> list[float]:
    """Milliseconds per call, one call at a time (after a short warm-up)."""
    with _channel_call(port, method) as (channel, call):
        async with channel:
            await _timed_calls(call, payloads[:20])
            return await _timed_calls(call, payloads)


async def alternating_latencies(
    servers: dict[str, tuple[int, str]], payloads: dict[str, list[bytes]], chunk: int = 50
) -> dict[str, list[float]]:
    """Sequential latencies of several (port, method) servers, measured in alternating chunks."""
    channels = {
        name: grpc.aio.insecure_channel(f"127.0.0.1:{port}") for name, (port, _) in servers.items()
    }
    calls: dict[str, Call] = {
        name: channels[name].unary_unary(method) for name, (_, method) in servers.items()
    }
    try:
        for name, call in calls.items():
            await _timed_calls(call, payloads[name][:20])
        out: dict[str, list[float]] = {name: [] for name in servers}
        total = len(next(iter(payloads.values())))
        for offset in range(0, total, chunk):
            for name, call in calls.items():
                out[name] += await _timed_calls(call, payloads[name][offset : offset + chunk])
        return out
    finally:
        for channel in channels.values():
            await channel.close()


def _ranker(db_path: Path, log_level: str, *, cache: bool = True) -> ServiceProcess:
    no_cache = {} if cache else {"RANKER_MENTION_CACHE_SIZE": "0"}
    return ranker_subprocess(
        RANKER_METRICS_PORT="0",
        RANKER_DB_PATH=str(db_path),
        RANKER_DATABASE_URL="",
        RANKER_LOG_LEVEL=log_level,
        **no_cache,
    )


def _ranker_pg(url: str) -> ServiceProcess:
    """Cache off: every call reads its rows from PostgreSQL, which is what this phase measures."""
    return ranker_subprocess(
        RANKER_METRICS_PORT="0",
        RANKER_DATABASE_URL=url,
        RANKER_LOG_LEVEL="WARNING",
        RANKER_MENTION_CACHE_SIZE="0",
    )


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, all its threads (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _echo(kind: str = "bare") -> ServiceProcess:
    return ServiceProcess(
        [sys.executable, "-m", "bench.ranker", "--serve-echo", kind], {}, ready_timeout=60, cwd=ROOT
    )


def _progress(message: str) -> None:
    progress(f"[{time.strftime('%H:%M:%S')}] {message}")


# --- phases -------------------------------------------------------------------------------------


def _postgres_phase(large: int, sequential_calls: int) -> dict[str, Any]:
    """Rerank p50 at 1k and at `large` rows on PostgreSQL: two rankers, alternating calls."""
    with (
        temporary_database("mem0mcp_bench_ranker_1k", vector=False) as small_url,
        temporary_database("mem0mcp_bench_ranker_1m", vector=False) as large_url,
    ):
        _progress(f"postgres: loading {SMALL_TABLE:,} and {large:,} mention rows (COPY)")
        started = time.perf_counter()
        small_ids = load_mentions_postgres(small_url, SMALL_TABLE)
        large_ids = load_mentions_postgres(large_url, large)
        load_seconds = time.perf_counter() - started
        _progress(f"postgres: loaded in {load_seconds:.1f} s")
        with _ranker_pg(small_url) as small, _ranker_pg(large_url) as big:
            _progress(f"postgres: rerank latency, {sequential_calls} calls per table size")
            by_table = asyncio.run(
                alternating_latencies(
                    {"1k": (small.port, RERANK_METHOD), "1m": (big.port, RERANK_METHOD)},
                    {
                        "1k": rerank_payloads(small_ids, sequential_calls, seed=5),
                        "1m": rerank_payloads(large_ids, sequential_calls, seed=6),
                    },
                )
            )
    p50_1k, p50_1m = statistics.median(by_table["1k"]), statistics.median(by_table["1m"])
    return {
        "pg_rerank_p50_ms_1k": round(p50_1k, 3),
        "pg_rerank_p50_ms_1m": round(p50_1m, 3),
        "pg_rerank_p50_ratio_1m_vs_1k": round(p50_1m / p50_1k, 3),
        "pg_load_seconds": round(load_seconds, 2),
    }


def run(quick: bool) -> dict[str, Any]:
    rounds, seconds = (2, 1.5) if quick else (5, 4.0)
    sequential_calls = 300 if quick else 2000
    large = 20_000 if quick else LARGE_TABLE
    with tempfile.TemporaryDirectory(prefix="bench-ranker-") as tmp:
        dbs = {
            name: Path(tmp) / f"{name}.sqlite3"
            for name in ("small", "small_uncached", "logged", "large", "large_uncached")
        }
        _progress(f"loading {SMALL_TABLE:,} mention rows (three times: one file per ranker)")
        small_ids = load_mentions(dbs["small"], SMALL_TABLE)
        load_mentions(dbs["small_uncached"], SMALL_TABLE)
        load_mentions(dbs["logged"], SMALL_TABLE)
        _progress(f"loading {large:,} mention rows (executemany, one transaction)")
        started = time.perf_counter()
        large_ids = load_mentions(dbs["large"], large)
        load_seconds = time.perf_counter() - started
        _progress(f"loaded in {load_seconds:.1f} s ({large / load_seconds:,.0f} rows/s)")
        shutil.copyfile(dbs["large"], dbs["large_uncached"])  # one ranker process per file

        with (
            _echo() as echo,
            _echo("plumbed") as plumbed,
            _echo("floor") as floor,
            _ranker(dbs["small"], "WARNING") as small,
            _ranker(dbs["small_uncached"], "WARNING", cache=False) as small_uncached,
            _ranker(dbs["logged"], "INFO") as logged,
            _ranker(dbs["large"], "WARNING") as big,
            _ranker(dbs["large_uncached"], "WARNING", cache=False) as big_uncached,
        ):
            servers = {
                "echo": echo,
                "plumbed_echo": plumbed,
                "floor": floor,
                "1k": small,
                "1k_uncached": small_uncached,
                "1k_info": logged,
                "1m": big,
                "1m_uncached": big_uncached,
            }
            result = asyncio.run(
                _measure(
                    servers,
                    small_ids,
                    large_ids,
                    rounds=rounds,
                    seconds=seconds,
                    sequential_calls=sequential_calls,
                )
            )
    result.update(_postgres_phase(large, sequential_calls))
    result["config"] = {
        "candidates": CANDIDATES,
        "in_flight": IN_FLIGHT,
        "rounds": rounds,
        "seconds_per_round": seconds,
        "sequential_calls": sequential_calls,
        "small_table_rows": SMALL_TABLE,
        "large_table_rows": large,
        "large_table_load_seconds": round(load_seconds, 2),
        "backend": (
            "sqlite; default settings (mention cache on) but ports, file and log level; "
            "metrics on; `*_uncached` rankers and the postgres phase: RANKER_MENTION_CACHE_SIZE=0"
        ),
        "log_level": "WARNING (per-call log lines off) for the headline; INFO run reported too",
        "servers": "each a subprocess; client in the bench process sends raw bytes",
        **machine(),
        "grpcio": grpc.__version__,
    }
    return result


async def _measure(
    servers: dict[str, ServiceProcess],
    small_ids: list[str],
    large_ids: list[str],
    *,
    rounds: int,
    seconds: float,
    sequential_calls: int,
) -> dict[str, Any]:
    payload = rerank_payloads(small_ids, 1, seed=1)[0]
    messages = rerank_payloads(small_ids, 1, seed=1, columns=False)[0]
    targets = {
        "echo": (servers["echo"], ECHO_METHOD, payload),
        "plumbed_echo": (servers["plumbed_echo"], ECHO_METHOD, payload),
        "floor": (servers["floor"], ECHO_METHOD, payload),
        "rerank": (servers["1k"], RERANK_METHOD, payload),
        "rerank_uncached": (servers["1k_uncached"], RERANK_METHOD, payload),
        "rerank_info": (servers["1k_info"], RERANK_METHOD, payload),
        "floor_candidate_messages": (servers["floor"], ECHO_METHOD, messages),
        "rerank_candidate_messages": (servers["1k"], RERANK_METHOD, messages),
    }
    rates: dict[str, list[float]] = {name: [] for name in targets}
    cpu: dict[str, list[float]] = {name: [] for name in targets}
    for round_number in range(1, rounds + 1):
        for name, (server, method, body) in targets.items():
            rate, cpu_per_call = await throughput(server, method, body, seconds)
            rates[name].append(rate)
            cpu[name].append(cpu_per_call)
        _progress(
            f"throughput round {round_number}/{rounds}: "
            + ", ".join(
                f"{name} {rates[name][-1]:,.0f}/s ({cpu[name][-1]:.0f} us CPU)" for name in rates
            )
        )

    _progress(f"rerank latency, {sequential_calls} calls per table size and cache, alternating")
    small_payloads = rerank_payloads(small_ids, sequential_calls, seed=2)
    large_payloads = rerank_payloads(large_ids, sequential_calls, seed=3)
    by_table = await alternating_latencies(
        {
            "1k": (servers["1k_uncached"].port, RERANK_METHOD),
            "1m": (servers["1m_uncached"].port, RERANK_METHOD),
            "1k_cached": (servers["1k"].port, RERANK_METHOD),
            "1m_cached": (servers["1m"].port, RERANK_METHOD),
            "echo": (servers["echo"].port, ECHO_METHOD),
        },
        {
            "1k": small_payloads,
            "1m": large_payloads,
            "1k_cached": small_payloads,
            "1m_cached": large_payloads,
            "echo": rerank_payloads(small_ids, sequential_calls, seed=4),
        },
    )

    _progress(f"dedupe latency, {sequential_calls} CheckDuplicate calls (half duplicates)")
    dedupe_ms = await _dedupe(servers["1k"].port, sequential_calls)

    median = {name: statistics.median(values) for name, values in rates.items()}
    p50 = {name: statistics.median(values) for name, values in by_table.items()}
    p50_1k, p50_1m = p50["1k"], p50["1m"]
    return {
        "rerank_vs_echo_ratio": round(median["rerank"] / median["echo"], 3),
        "rerank_p50_ratio_1m_vs_1k": round(p50_1m / p50_1k, 3),
        "dedupe_p50_ms": round(statistics.median(dedupe_ms), 3),
        "dedupe_p99_ms": round(percentile(dedupe_ms, 99), 3),
        "rerank_uncached_vs_echo_ratio": round(median["rerank_uncached"] / median["echo"], 3),
        "rerank_vs_echo_ratio_info_logging": round(median["rerank_info"] / median["echo"], 3),
        "echo_calls_per_second": round(median["echo"], 1),
        "rerank_calls_per_second": round(median["rerank"], 1),
        "rerank_uncached_calls_per_second": round(median["rerank_uncached"], 1),
        "rerank_info_logging_calls_per_second": round(median["rerank_info"], 1),
        "plumbed_echo_calls_per_second": round(median["plumbed_echo"], 1),
        "plumbed_echo_vs_echo_ratio": round(median["plumbed_echo"] / median["echo"], 3),
        "rerank_vs_plumbed_echo_ratio": round(median["rerank"] / median["plumbed_echo"], 3),
        "floor_calls_per_second": round(median["floor"], 1),
        "floor_vs_echo_ratio": round(median["floor"] / median["echo"], 3),
        "rerank_vs_floor_ratio": round(median["rerank"] / median["floor"], 3),
        "rerank_vs_floor_ratio_candidate_messages": round(
            median["rerank_candidate_messages"] / median["floor_candidate_messages"], 3
        ),
        "server_cpu_us_per_call": {
            name: round(statistics.median(values), 1) for name, values in cpu.items()
        },
        "rounds_calls_per_second": {
            name: [round(v, 1) for v in values] for name, values in rates.items()
        },
        "rerank_p50_ms_1k_cached": round(p50["1k_cached"], 3),
        "rerank_p50_ms_1m_cached": round(p50["1m_cached"], 3),
        "rerank_p50_ratio_1m_vs_1k_cached": round(p50["1m_cached"] / p50["1k_cached"], 3),
        "rerank_p50_ms_1k": round(p50_1k, 3),
        "rerank_p50_ms_1m": round(p50_1m, 3),
        "rerank_p99_ms_1k": round(percentile(by_table["1k"], 99), 3),
        "rerank_p99_ms_1m": round(percentile(by_table["1m"], 99), 3),
        "echo_p50_ms_sequential": round(statistics.median(by_table["echo"]), 3),
        "dedupe_hit_p50_ms": round(statistics.median(dedupe_ms[0::2]), 3),
        "dedupe_miss_p50_ms": round(statistics.median(dedupe_ms[1::2]), 3),
        "goals": {
            "rerank_vs_echo_ratio": ">= 0.8",
            "rerank_vs_floor_ratio": ">= 0.85",
            "rerank_p50_ratio_1m_vs_1k": "<= 1.2",
        },
        "figures": {
            "rerank_vs_echo_ratio": "default settings, mention cache warm (50 hot ids)",
            "rerank_uncached_vs_echo_ratio": "mention cache off: a SQLite lookup every call",
            "rerank_p50_ratio_1m_vs_1k": "mention cache off: every call reads 50 present rows",
            "rerank_p50_ratio_1m_vs_1k_cached": "defaults: 1k warm (hits) vs 1M cold (misses)",
            "server_cpu_us_per_call": "user+system CPU of the server process per call",
            "rerank_vs_floor_ratio": "the payload as the bridge sends it: RerankRequest.columns",
            "rerank_vs_floor_ratio_candidate_messages": (
                "the same candidates as Candidate messages (older clients), ranker and floor"
            ),
            "floor_vs_echo_ratio": (
                "plumbed server that parses the request, reads each candidate's fields and "
                "returns an empty RerankResponse: the least any typed Python Rerank costs"
            ),
        },
        "_samples": {
            "rerank_1k": by_table["1k"],
            "rerank_1m": by_table["1m"],
            "rerank_1k_cached": by_table["1k_cached"],
            "echo": by_table["echo"],
            "dedupe": dedupe_ms,
        },
    }


async def _dedupe(port: int, calls: int) -> list[float]:
    """Record `calls // 2` texts, then check them interleaved with as many never-stored ones."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        record = channel.unary_unary("/mem0mcp.ranker.v1.RankerService/RecordStored")
        half = calls // 2
        for i in range(half):
            await record(
                pb.RecordStoredRequest(
                    scope=SCOPE, text=f"stored fact number {i}", memory_id=f"m-{i}"
                ).SerializeToString()
            )
    payloads = []
    for i in range(half):
        payloads.append(
            pb.CheckDuplicateRequest(
                scope=SCOPE, text=f"Stored  fact number {i}"
            ).SerializeToString()
        )
        payloads.append(
            pb.CheckDuplicateRequest(scope=SCOPE, text=f"new fact number {i}").SerializeToString()
        )
    return await latencies(port, DEDUPE_METHOD, payloads)


# --- report -------------------------------------------------------------------------------------


def print_table(result: dict[str, Any]) -> None:
    large = result["config"]["large_table_rows"]
    rows = [
        (
            "echo, 50-candidate payload, 32 in flight",
            f"{result['echo_calls_per_second']:,.0f} calls/s",
        ),
        (
            "rerank, 50 candidates, 32 in flight",
            f"{result['rerank_calls_per_second']:,.0f} calls/s",
        ),
        ("rerank / echo (goal >= 0.8)", f"{result['rerank_vs_echo_ratio']:.3f}"),
        (
            "rerank, mention cache off",
            f"{result['rerank_uncached_calls_per_second']:,.0f} calls/s",
        ),
        ("  uncached rerank / echo", f"{result['rerank_uncached_vs_echo_ratio']:.3f}"),
        *(
            (f"server CPU per call: {name}", f"{value:,.0f} us")
            for name, value in result["server_cpu_us_per_call"].items()
        ),
        (
            "echo in mem0_common.GrpcServer",
            f"{result['plumbed_echo_calls_per_second']:,.0f} calls/s",
        ),
        ("  plumbed echo / bare echo", f"{result['plumbed_echo_vs_echo_ratio']:.3f}"),
        ("  rerank / plumbed echo", f"{result['rerank_vs_plumbed_echo_ratio']:.3f}"),
        (
            "floor (parse + read fields, empty reply)",
            f"{result['floor_calls_per_second']:,.0f} calls/s",
        ),
        ("  floor / bare echo", f"{result['floor_vs_echo_ratio']:.3f}"),
        ("  rerank / floor", f"{result['rerank_vs_floor_ratio']:.3f}"),
        (
            "  the same, as Candidate messages",
            f"{result['rerank_vs_floor_ratio_candidate_messages']:.3f}",
        ),
        (
            "rerank at INFO (a log line per call)",
            f"{result['rerank_info_logging_calls_per_second']:,.0f} calls/s",
        ),
        ("rerank at INFO / echo", f"{result['rerank_vs_echo_ratio_info_logging']:.3f}"),
        ("rerank p50, 1 000 rows, cache off", f"{result['rerank_p50_ms_1k']:.3f} ms"),
        (f"rerank p50, {large:,} rows, cache off", f"{result['rerank_p50_ms_1m']:.3f} ms"),
        ("rerank p50 1M / 1k (goal <= 1.2)", f"{result['rerank_p50_ratio_1m_vs_1k']:.3f}"),
        ("rerank p50, 1 000 rows, cache warm", f"{result['rerank_p50_ms_1k_cached']:.3f} ms"),
        (f"rerank p50, {large:,} rows, cache cold", f"{result['rerank_p50_ms_1m_cached']:.3f} ms"),
        ("  cold 1M / warm 1k", f"{result['rerank_p50_ratio_1m_vs_1k_cached']:.3f}"),
        ("postgres: rerank p50, 1 000 rows", f"{result['pg_rerank_p50_ms_1k']:.3f} ms"),
        (f"postgres: rerank p50, {large:,} rows", f"{result['pg_rerank_p50_ms_1m']:.3f} ms"),
        (
            "postgres: rerank p50 1M / 1k (cache off)",
            f"{result['pg_rerank_p50_ratio_1m_vs_1k']:.3f}",
        ),
        ("echo p50, sequential", f"{result['echo_p50_ms_sequential']:.3f} ms"),
        ("dedupe check p50", f"{result['dedupe_p50_ms']:.3f} ms"),
        ("dedupe check p99", f"{result['dedupe_p99_ms']:.3f} ms"),
    ]
    width = max(len(name) for name, _ in rows)
    print()
    for name, value in rows:
        print(f"{name:<{width}}  {value:>16}")


def plot(result: dict[str, Any], path: Path) -> None:
    with figure(path, 1, 2, dpi=110, figsize=(12, 4.5)) as (_, (bars, cdf)):
        names = ["bare echo", "plumbed echo", "rerank", "rerank,\nno cache", "rerank,\nINFO log"]
        rates = [
            result["echo_calls_per_second"],
            result["plumbed_echo_calls_per_second"],
            result["rerank_calls_per_second"],
            result["rerank_uncached_calls_per_second"],
            result["rerank_info_logging_calls_per_second"],
        ]
        bars.bar(names, rates, color=["#999999", "#bbbbbb", "#3060c0", "#6080c8", "#90a8e0"])
        for x, rate in enumerate(rates):
            bars.text(x, rate, f"{rate:,.0f}", ha="center", va="bottom")
        bars.set_ylabel("calls per second (32 in flight)")
        bars.set_title(f"50-candidate rerank vs bare echo: {result['rerank_vs_echo_ratio']:.2f}")
        samples = result["_samples"]
        for label, key in [
            ("echo", "echo"),
            ("rerank, 1k rows, cache warm", "rerank_1k_cached"),
            ("rerank, 1k rows, cache off", "rerank_1k"),
            ("rerank, 1M rows, cache off", "rerank_1m"),
            ("dedupe check", "dedupe"),
        ]:
            values = sorted(samples[key])
            cdf.plot(values, [i / len(values) for i in range(1, len(values) + 1)], label=label)
        cdf.set_xscale("log")
        cdf.set_xlabel("latency, ms (one call at a time, log scale)")
        cdf.set_ylabel("fraction of calls")
        cdf.set_title("sequential latency CDF")
        cdf.legend()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short phases, 20k-row large table")
    parser.add_argument(
        "--serve-echo", choices=["bare", "plumbed", "floor"], help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.serve_echo:
        asyncio.run(_serve_echo(args.serve_echo))
        return
    result = run(args.quick)
    print_table(result)
    measured = {k: v for k, v in result.items() if not k.startswith("_")}
    path, png = write_outputs("ranker", measured, partial(plot, result))
    print(f"\nwrote {path} and {png}")


if __name__ == "__main__":
    main()

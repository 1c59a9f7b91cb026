"""`mem0-ranker` as real processes: replicas sharing PostgreSQL, restarts, logs and metrics."""

from __future__ import annotations

import asyncio
import re
import signal
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from mem0mcp.ranker.v1 import ranker_pb2 as pb
from mem0mcp.ranker.v1 import ranker_pb2_grpc
from tests.support.postgres import temporary_database
from tests.support.processes import ServiceProcess, ranker_subprocess

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.subprocess]

CALLS_PER_REPLICA = 40


def _start(**settings: str) -> ServiceProcess:
    defaults = {"RANKER_METRICS_PORT": "-1", "RANKER_LOG_LEVEL": "INFO"}
    return ranker_subprocess(**{**defaults, **settings})


@pytest.fixture(scope="module")
def replicas_db() -> Iterator[str]:
    with temporary_database("mem0mcp_ranker_replicas", vector=False) as url:
        yield url


async def _reinforce_many(port: int, memory_id: str, count: int) -> list[pb.ReinforceResponse]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = ranker_pb2_grpc.RankerServiceStub(channel)
        request = pb.ReinforceRequest(memory_id=memory_id, scope="user:race")
        return list(await asyncio.gather(*(stub.Reinforce(request) for _ in range(count))))


async def _two_replicas_reinforce(
    database_url: str, debounce_seconds: str, memory_id: str
) -> list[pb.ReinforceResponse]:
    """Two replicas on one database reinforce `memory_id` CALLS_PER_REPLICA times each, at once."""
    settings = {
        "RANKER_DATABASE_URL": database_url,
        "RANKER_REINFORCE_DEBOUNCE_SECONDS": debounce_seconds,
    }
    with _start(**settings) as first, _start(**settings) as second:
        replies = await asyncio.gather(
            _reinforce_many(first.port, memory_id, CALLS_PER_REPLICA),
            _reinforce_many(second.port, memory_id, CALLS_PER_REPLICA),
        )
    return [r for batch in replies for r in batch]


@pytest.mark.postgres
async def test_two_replicas_reinforcing_one_memory_lose_no_increment(replicas_db: str) -> None:
    replies = await _two_replicas_reinforce(replicas_db, "0", "race-unbounced")
    counts = sorted(r.mentions for r in replies)
    # Every increment saw a distinct count: none was applied on top of a stale read.
    assert counts == list(range(1, 2 * CALLS_PER_REPLICA + 1))


@pytest.mark.postgres
async def test_two_replicas_debounce_a_memory_together(replicas_db: str) -> None:
    flat = await _two_replicas_reinforce(replicas_db, "3600", "race-debounced")
    assert sum(r.counted for r in flat) == 1
    assert {r.mentions for r in flat} == {1}


async def _write_and_confirm(port: int, count: int) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = ranker_pb2_grpc.RankerServiceStub(channel)
        for i in range(count):
            await stub.Reinforce(pb.ReinforceRequest(memory_id=f"kept-{i}", scope="user:k"))
            await stub.RecordStored(
                pb.RecordStoredRequest(scope="user:k", text=f"fact {i}", memory_id=f"kept-{i}")
            )


async def _read_back(port: int, count: int) -> tuple[int, int]:
    """How many of the `count` memories still have their mention row and dedupe record."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = ranker_pb2_grpc.RankerServiceStub(channel)
        ranked = await stub.Rerank(
            pb.RerankRequest(
                candidates=[
                    pb.Candidate(
                        memory_id=f"kept-{i}", similarity=0.5, created_at="2026-01-01T00:00:00Z"
                    )
                    for i in range(count)
                ]
            )
        )
        dupes = [
            await stub.CheckDuplicate(pb.CheckDuplicateRequest(scope="user:k", text=f"fact {i}"))
            for i in range(count)
        ]
    return sum(r.mentions == 1 for r in ranked.results), sum(d.duplicate for d in dupes)


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
async def test_a_killed_ranker_keeps_every_acknowledged_write(
    backend: str, tmp_path: Path, replicas_db: str
) -> None:
    if backend == "sqlite":
        settings = {"RANKER_DB_PATH": str(tmp_path / "ranker.sqlite3")}
    else:
        settings = {"RANKER_DATABASE_URL": replicas_db}
    with _start(**settings) as ranker:
        await _write_and_confirm(ranker.port, 25)
        ranker.kill()
    with _start(**settings) as restarted:
        assert await _read_back(restarted.port, 25) == (25, 25)


async def test_each_call_is_logged_with_the_request_id_from_metadata(tmp_path: Path) -> None:
    with _start(RANKER_DB_PATH=str(tmp_path / "r.sqlite3"), RANKER_METRICS_PORT="0") as ranker:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{ranker.port}") as channel:
            stub = ranker_pb2_grpc.RankerServiceStub(channel)
            await stub.GetStats(pb.GetStatsRequest(), metadata=(("x-request-id", "req-4711"),))
        assert exit_code_after_sigterm(ranker) == 0
        log = ranker.log_text()
    assert re.search(r"\[req-4711\] GetStats OK", log)


async def test_metrics_count_calls_by_method_and_code(tmp_path: Path) -> None:
    with _start(RANKER_DB_PATH=str(tmp_path / "r.sqlite3"), RANKER_METRICS_PORT="0") as ranker:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{ranker.port}") as channel:
            stub = ranker_pb2_grpc.RankerServiceStub(channel)
            with pytest.raises(grpc.aio.AioRpcError):
                await stub.Reinforce(pb.ReinforceRequest(memory_id="", scope="u"))
        match = re.search(r"metrics on (http://\S+/metrics)", ranker.log_text())
        assert match is not None
        calls = (
            'mem0mcp_grpc_calls_total{code="INVALID_ARGUMENT",method="Reinforce",service="ranker"}'
        )
        # The interceptor counts a call once its answer is on the way, which may be a moment
        # after the client has it: wait for the sample rather than racing it.
        for _ in range(50):
            body = await asyncio.to_thread(_fetch, match.group(1))
            if calls in body:
                break
            await asyncio.sleep(0.1)
    assert f"{calls} 1.0" in body


def _fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 - our loopback URL
        return str(response.read().decode())


def exit_code_after_sigterm(process: ServiceProcess) -> int:
    return process.stop(signal.SIGTERM)

"""Where a memory_add and a memory_search spend their time: each service and hop, timed.

The stack of `bench.bridge` (mem0-local on pgvector in a throwaway database with the MiniLM
embedder, the ranker, the judge on the fake LLM, an in-process bridge called through the
official MCP client; infer off), with timers on every hop, and one call at a time:
- the tool call, as the MCP client sees it;
- the bridge's `MemoryService.add` / `.search`: the rest of the call is the MCP layer (client,
  in-memory transport, server, argument and result validation);
- every mem0 REST call as the bridge's HTTP client sees it, and inside mem0-local (run as
  `bench._profiled_mem0_local`, the same server with timers): the embedder, the vector store
  (PostgreSQL), mem0's history database (SQLite), its BM25 text preprocessing, and the rest of
  the request (FastAPI, mem0's own code); the client's time beyond the server's is HTTP;
- every ranker and judge gRPC call (the judge's includes its LLM call, the fake's latency);
- the bridge's own code: its time outside every hop.

Hops of one call may overlap (a search runs the raw query and the rewrite concurrently), so
the hops' times can add up to more than their wall time, which the table gives as `waiting on
hops`. Components are means over the calls (they add up: MCP layer + bridge code + waiting on
hops = total); the total's median is given beside.

    python -m bench.profile                    # 50 adds and 50 searches, LLM at 0 and 500 ms
    python -m bench.profile --calls 20 --llm-ms 0

Writes bench/results/profile.json: per LLM latency (`llm_<ms>ms`), per operation (add,
search), `total_p50_ms`, `total_mean_ms` and `components.<name>.{mean_ms, p50_ms, per_call}`
(per_call: how many such hops one call makes, on average).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from mcp import Client

from bench._mcp import call_tool
from bench._report import format_table, machine, progress, write_result
from bench.bridge import BRIDGE_KEY, SEARCH_LIMIT, fact, question
from mem0_bridge import BridgeSettings, create_server
from mem0_bridge._grpc import GrpcPeer
from mem0_bridge._service import MemoryService
from mem0_common import CLIENT_KEEPALIVE_EXPIRY_SECONDS, request_id_var
from tests.fakes.llm_process import FakeLLMProcess
from tests.support.postgres import temporary_database
from tests.support.stack import Stack, stack_of, start_judge, start_mem0_local, start_ranker

OPS = ("add", "search")
#: Inside mem0-local, in this order; the rest of a request is "mem0-local: FastAPI and mem0".
SERVER_HOPS = ("embedder", "vector store (postgres)", "history db (sqlite)", "text preprocessing")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@dataclass
class Span:
    name: str
    start: float
    end: float
    #: mem0-local's X-Request-ID of a mem0 call, to find its server-side spans.
    request_id: str | None = None

    @property
    def seconds(self) -> float:
        return self.end - self.start


@dataclass
class Recorder:
    """The spans of the tool call being measured (calls of the background reconciler, which
    run outside any tool call, are left out)."""

    spans: list[Span] = field(default_factory=list)

    def add(self, span: Span) -> None:
        if request_id_var.get() != "-":
            self.spans.append(span)

    def take(self) -> list[Span]:
        spans, self.spans = self.spans, []
        return spans


class TimingTransport(httpx.AsyncBaseTransport):
    """The bridge's mem0 transport, timing each call to the end of its body."""

    def __init__(self, recorder: Recorder) -> None:
        self._recorder = recorder
        self._inner = httpx.AsyncHTTPTransport(
            limits=httpx.Limits(
                max_connections=100,
                max_keepalive_connections=20,
                keepalive_expiry=CLIENT_KEEPALIVE_EXPIRY_SECONDS,
            )
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        started = time.perf_counter()
        response = await self._inner.handle_async_request(request)
        await response.aread()
        path = _UUID.sub("{id}", request.url.path)
        self._recorder.add(
            Span(
                f"mem0 {request.method} {path}",
                started,
                time.perf_counter(),
                response.headers.get("x-request-id"),
            )
        )
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


@contextmanager
def timed_bridge(recorder: Recorder) -> Iterator[None]:
    """Time every gRPC call of the ranker and judge clients and the service's add and search."""
    call, add, search = GrpcPeer.call, MemoryService.add, MemoryService.search

    async def timed_call(self: GrpcPeer[Any], method: Any, request: object, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return await call(self, method, request, **kwargs)
        finally:
            # `method` picks the call from the stub (`lambda stub: stub.Rerank`).
            picked = method(self._stub) if self._stub is not None else None
            path = getattr(picked, "_method", b"").decode(errors="replace")
            recorder.add(
                Span(f"{self.name} {path.rsplit('/', 1)[-1]}", started, time.perf_counter())
            )

    def timed(operation: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def run(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return await operation(*args, **kwargs)
            finally:
                recorder.add(Span("service", started, time.perf_counter()))

        return run

    GrpcPeer.call = timed_call  # type: ignore[method-assign]
    MemoryService.add = timed(add)  # type: ignore[method-assign,assignment]
    MemoryService.search = timed(search)  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        GrpcPeer.call = call  # type: ignore[method-assign]
        MemoryService.add = add  # type: ignore[method-assign]
        MemoryService.search = search  # type: ignore[method-assign]


@contextmanager
def profiled_stack(spans_file: Path) -> Iterator[Stack]:
    """The bench stack, its mem0-local timed (`bench._profiled_mem0_local`)."""
    with (
        temporary_database("mem0mcp_profile") as database_url,
        tempfile.TemporaryDirectory() as work_dir,
        FakeLLMProcess() as llm,
        ExitStack() as processes,
    ):
        work = Path(work_dir)
        (work / "mem0").mkdir()
        collection = f"profile_{uuid.uuid4().hex[:8]}"
        mem0 = processes.enter_context(
            start_mem0_local(
                database_url,
                llm,
                work / "mem0",
                collection,
                extra_env={"MEM0_LOCAL_PROFILE_FILE": str(spans_file)},
                command=(sys.executable, "-m", "bench._profiled_mem0_local"),
            )
        )
        ranker = processes.enter_context(start_ranker(work / "ranker.sqlite3"))
        judge = processes.enter_context(start_judge(llm))
        yield stack_of(database_url, collection, mem0=mem0, ranker=ranker, judge=judge, llm=llm)


def _union_seconds(spans: list[Span]) -> float:
    """Wall time covered by any of `spans`."""
    covered, end = 0.0, float("-inf")
    for span in sorted(spans, key=lambda s: s.start):
        if span.end > end:
            covered += span.end - max(span.start, end)
            end = span.end
    return covered


def breakdown(total: float, spans: list[Span], server: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """One call's seconds per component, and how many hops of each kind it made."""
    service = [s for s in spans if s.name == "service"]
    hops = [s for s in spans if s.name != "service"]
    inside = service[0].seconds if service else total
    seconds: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    seconds["MCP layer (client, transport, server)"] = total - inside
    seconds["bridge code"] = inside - _union_seconds(hops)
    seconds["waiting on hops (wall)"] = _union_seconds(hops)
    for hop in hops:
        seconds[hop.name] += hop.seconds
        counts[hop.name] += 1
        answered = server.get(hop.request_id or "")
        if answered is None:
            continue
        inner = answered["spans"]
        for name in SERVER_HOPS:
            seconds[f"  mem0-local: {name}"] += inner.get(name, 0.0)
        seconds["  mem0-local: FastAPI and mem0"] += answered["total"] - sum(inner.values())
        seconds["  mem0 HTTP (client, connection)"] += hop.seconds - answered["total"]
    return {"seconds": dict(seconds), "counts": dict(counts)}


async def measure(
    stack: Stack, llm_ms: float, calls: int, warmup: int, spans_file: Path, *, offset: int
) -> dict[str, list[dict[str, Any]]]:
    """`calls` adds then `calls` searches (after `warmup` of each), one at a time, of the facts
    and questions from index `offset` on."""
    recorder = Recorder()
    defaults = BridgeSettings.model_fields
    settings = stack.settings(
        infer=False,
        log_level="WARNING",
        rewrite_budget_ms=defaults["rewrite_budget_ms"].default,
        verdict_budget_ms=defaults["verdict_budget_ms"].default,
        ranker_timeout_seconds=defaults["ranker_timeout_seconds"].default,
    )
    stack.llm.latency_seconds = llm_ms / 1000
    measured: dict[str, list[tuple[float, list[Span]]]] = {op: [] for op in OPS}
    with timed_bridge(recorder):
        server = create_server(settings, mem0_transport=TimingTransport(recorder))
        async with Client(server) as client:
            for op in OPS:
                for i in range(warmup + calls):
                    n = offset + i
                    recorder.take()
                    started = time.perf_counter()
                    if op == "add":
                        await call_tool(client, "memory_add", text=fact(n), key=BRIDGE_KEY)
                    else:
                        await call_tool(
                            client,
                            "memory_search",
                            query=question(n),
                            key=BRIDGE_KEY,
                            limit=SEARCH_LIMIT,
                        )
                    total = time.perf_counter() - started
                    spans = recorder.take()
                    if i >= warmup:
                        measured[op].append((total, spans))
                    if (i + 1) % 25 == 0:
                        progress(f"  llm {llm_ms:g} ms, {op}: {i + 1}/{warmup + calls}")
    await asyncio.sleep(0.2)  # the server writes a request's spans once it has answered
    answered = _read_server_spans(spans_file)
    return {
        op: [breakdown(total, spans, answered) for total, spans in runs]
        for op, runs in measured.items()
    }


def _read_server_spans(path: Path) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return found
    for line in path.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        spans = entry["spans"]
        # The embedded store's timer has its own name; PostgreSQL is the one profiled here.
        entry["spans"] = {
            ("vector store (postgres)" if k.startswith("vector store") else k): v
            for k, v in spans.items()
        }
        found[entry["id"]] = entry
    return found


def summarize_op(calls: list[dict[str, Any]]) -> dict[str, Any]:
    totals = [
        c["seconds"]["MCP layer (client, transport, server)"]
        + c["seconds"]["bridge code"]
        + c["seconds"]["waiting on hops (wall)"]
        for c in calls
    ]
    names: list[str] = []
    for call in calls:
        names += [n for n in call["seconds"] if n not in names]
    components = {}
    for name in names:
        values = [c["seconds"].get(name, 0.0) * 1000 for c in calls]
        components[name] = {
            "mean_ms": statistics.fmean(values),
            "p50_ms": statistics.median(values),
            "per_call": statistics.fmean(c["counts"].get(name, 0) for c in calls),
        }
    return {
        "n": len(calls),
        "total_p50_ms": statistics.median(totals) * 1000,
        "total_mean_ms": statistics.fmean(totals) * 1000,
        "components": components,
    }


def print_op(label: str, summary: dict[str, Any]) -> None:
    print(
        f"\n{label}: total p50 {summary['total_p50_ms']:.1f} ms, mean "
        f"{summary['total_mean_ms']:.1f} ms (n={summary['n']})"
    )
    rows = [
        [name, c["mean_ms"], c["p50_ms"], c["per_call"] or ""]
        for name, c in summary["components"].items()
    ]
    print(format_table(["component", "mean ms", "p50 ms", "hops per call"], rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=50, help="adds and searches measured")
    parser.add_argument("--warmup", type=int, default=5, help="unmeasured calls first")
    parser.add_argument(
        "--llm-ms", default="0,500", help="fake LLM latency per call, a comma list (ms)"
    )
    parser.add_argument("--output", default="profile", help="bench/results/<output>.json")
    args = parser.parse_args()
    latencies = [float(v) for v in str(args.llm_ms).split(",") if v.strip()]
    result: dict[str, Any] = {"setup": {"calls": args.calls, **machine()}}
    with tempfile.TemporaryDirectory() as scratch:
        spans_file = Path(scratch) / "mem0_spans.jsonl"
        progress("starting mem0-local (timed, pgvector), ranker and judge with FakeLLM ...")
        with profiled_stack(spans_file) as stack:
            for index, llm_ms in enumerate(latencies):
                offset = index * 10_000  # facts and questions no earlier round used
                calls = asyncio.run(
                    measure(stack, llm_ms, args.calls, args.warmup, spans_file, offset=offset)
                )
                entry = {op: summarize_op(calls[op]) for op in OPS}
                result[f"llm_{llm_ms:g}ms"] = entry
                for op in OPS:
                    print_op(f"memory_{op}, LLM {llm_ms:g} ms", entry[op])
    path = write_result(args.output, result)
    progress(f"wrote {path}")


if __name__ == "__main__":
    main()

"""Judge benchmark: what the judge adds over the raw LLM call, and how its rewrite cache holds up.

Against FakeLLM with a fixed 50 ms latency, in its own process like a real provider, the judge
runs as operators run it (`mem0-judge` subprocess, default settings, INFO logging) and is called
over real gRPC. Baseline and judge calls are interleaved in one run, so machine noise hits both
alike:

1. added latency: N sequential calls of each kind -- the raw LLM HTTP call with the very body the
   judge sends, Compare (5 candidates) and Rewrite (a distinct question each time, so no cache)
   -- and the difference of medians, `added_p50_ms` (Compare) and `rewrite_added_p50_ms`; a
   pass-through Rewrite (a statement, no LLM call) shows the floor: the gRPC hop alone;
2. burst: 200 concurrent Rewrites of 20 distinct new questions; every one must be answered, and
   the cache hit ratio (cached answers / calls) and the LLM calls actually made are reported.

`python -m bench.judge` (or `make bench-judge`) prints a table, writes bench/results/judge.json and
bench/results/judge.png.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import time
from functools import partial
from pathlib import Path
from typing import Any

import grpc
import httpx

from bench._report import figure, format_table, progress, summarize, timed, write_outputs
from mem0_common import ServiceProcess
from mem0_judge import compare_messages, rewrite_messages
from mem0mcp.judge.v1 import judge_pb2, judge_pb2_grpc
from tests.fakes.llm_process import FakeLLMProcess

LLM_LATENCY_SECONDS = 0.05
BURST_CALLS = 200
BURST_DISTINCT = 20
_REWRITE_LLM_CALLS = re.compile(
    r'^mem0mcp_judge_llm_seconds_count\{operation="rewrite"\} (\S+)$', re.MULTILINE
)

FACT = "We moved the API to port 9000"
CANDIDATES = [
    "The API listens on port 8080",
    "Our API service uses port 8080",
    "I prefer tea",
    "The database runs PostgreSQL 15",
    "Deploys go through GitHub Actions",
]


def _llm_calls(metrics_url: str) -> float:
    """LLM attempts the judge has made, from its own Prometheus metrics."""
    text = httpx.get(metrics_url, timeout=10).text
    match = _REWRITE_LLM_CALLS.search(text)
    return float(match.group(1)) if match else 0.0


def _ms(seconds: list[float]) -> list[float]:
    return [x * 1000 for x in seconds]


def _body(messages: list[Any]) -> dict[str, Any]:
    return {
        "model": "fake-model",
        "messages": [{"role": m.role, "content": m.content} for m in messages],
        "temperature": 0,
        "response_format": {"type": "json_object"},
    }


async def _raw(http: httpx.AsyncClient, body: dict[str, Any]) -> None:
    response = await http.post("chat/completions", json=body)
    response.raise_for_status()
    json.loads(response.json()["choices"][0]["message"]["content"])


async def measure_added_latency(
    stub: judge_pb2_grpc.JudgeServiceStub, llm_url: str, calls: int
) -> dict[str, list[float]]:
    compare = judge_pb2.CompareRequest(
        fact=FACT,
        candidates=[
            judge_pb2.CompareCandidate(memory_id=f"m{i}", text=t) for i, t in enumerate(CANDIDATES)
        ],
    )
    compare_body = _body(compare_messages(FACT, CANDIDATES))
    times: dict[str, list[float]] = {
        "raw_compare": [], "judge_compare": [], "raw_rewrite": [], "judge_rewrite": [],
        "judge_passthrough": [],
    }  # fmt: skip
    async with httpx.AsyncClient(base_url=llm_url + "/", timeout=10) as http:
        for i in range(-10, calls):  # 10 warm-up rounds, not recorded
            question = f"what port does service {i + 10} use?"
            round_times = {
                "raw_compare": await timed(_raw(http, compare_body)),
                "judge_compare": await timed(stub.Compare(compare, timeout=10)),
                "raw_rewrite": await timed(_raw(http, _body(rewrite_messages(question)))),
                "judge_rewrite": await timed(
                    stub.Rewrite(judge_pb2.RewriteRequest(query=question), timeout=10)
                ),
                # A statement: no LLM call, so this is the floor of any judge call (gRPC hop).
                "judge_passthrough": await timed(
                    stub.Rewrite(judge_pb2.RewriteRequest(query=f"port of service {i}"), timeout=10)
                ),
            }
            if i >= 0:
                for key, value in round_times.items():
                    times[key].append(value)
            if i >= 0 and (i + 1) % 50 == 0:
                progress(f"  added latency: {i + 1}/{calls} rounds")
    return times


async def measure_burst(stub: judge_pb2_grpc.JudgeServiceStub, metrics_url: str) -> dict[str, Any]:
    questions = [f"which editor does team {n} prefer?" for n in range(BURST_DISTINCT)]
    llm_calls_before = _llm_calls(metrics_url)

    async def one(query: str) -> tuple[float, judge_pb2.RewriteResponse]:
        start = time.perf_counter()
        response = await stub.Rewrite(judge_pb2.RewriteRequest(query=query), timeout=30)
        return time.perf_counter() - start, response

    start = time.perf_counter()
    results = await asyncio.gather(
        *(one(questions[i % BURST_DISTINCT]) for i in range(BURST_CALLS)), return_exceptions=True
    )
    wall = time.perf_counter() - start
    answered = [r for r in results if not isinstance(r, BaseException)]
    cached = sum(1 for _, response in answered if response.cached)
    return {
        "calls": BURST_CALLS,
        "distinct_questions": BURST_DISTINCT,
        "answered": len(answered),
        "errors": [repr(r) for r in results if isinstance(r, BaseException)][:5],
        "cached": cached,
        "cache_hit_ratio": cached / BURST_CALLS,
        "llm_calls": int(_llm_calls(metrics_url) - llm_calls_before),
        "wall_ms": wall * 1000,
        "latency": summarize([seconds for seconds, _ in answered]),
    }


def plot(times: dict[str, list[float]], path: Path) -> None:
    labels = [
        "raw LLM\n(compare body)",
        "judge\nCompare",
        "raw LLM\n(rewrite body)",
        "judge\nRewrite",
    ]
    keys = ["raw_compare", "judge_compare", "raw_rewrite", "judge_rewrite"]
    with figure(path, dpi=120, figsize=(7, 4)) as (_, ax):
        ax.boxplot([_ms(times[k]) for k in keys], showfliers=False)
        ax.set_xticks(range(1, len(labels) + 1), labels)
        ax.set_ylabel("latency (ms)")
        ax.set_title(
            f"Judge over gRPC vs the raw LLM call (fake LLM at {LLM_LATENCY_SECONDS * 1000:.0f} ms)"
        )


async def run(calls: int) -> dict[str, Any]:
    with FakeLLMProcess(LLM_LATENCY_SECONDS) as llm:
        llm_url = llm.base_url
        env = {
            "JUDGE_PORT": "0",
            "JUDGE_METRICS_PORT": "0",
            "JUDGE_LLM_BASE_URL": llm_url,
            "JUDGE_LLM_MODEL": "fake-model",
        }
        with ServiceProcess(["mem0-judge"], env) as judge:
            found = re.search(r"metrics on (http://\S+/metrics)", judge.log_text())
            if found is None:
                raise RuntimeError("the judge did not log its metrics address")
            async with grpc.aio.insecure_channel(f"127.0.0.1:{judge.port}") as channel:
                stub = judge_pb2_grpc.JudgeServiceStub(channel)
                progress(f"added latency: {calls} interleaved rounds")
                times = await measure_added_latency(stub, llm_url, calls)
                progress(f"burst: {BURST_CALLS} concurrent rewrites of {BURST_DISTINCT} questions")
                burst = await measure_burst(stub, found.group(1))
    summaries = {key: summarize(value) for key, value in times.items()}
    return {
        "llm_latency_ms": LLM_LATENCY_SECONDS * 1000,
        "rounds": calls,
        "added_p50_ms": summaries["judge_compare"]["p50_ms"] - summaries["raw_compare"]["p50_ms"],
        "rewrite_added_p50_ms": summaries["judge_rewrite"]["p50_ms"]
        - summaries["raw_rewrite"]["p50_ms"],
        "added_p50_ratio": summaries["judge_compare"]["p50_ms"]
        / summaries["raw_compare"]["p50_ms"],
        "cache_hit_ratio": burst["cache_hit_ratio"],
        "latency": summaries,
        "burst": burst,
        "_times": times,
    }


def print_table(result: dict[str, Any]) -> None:
    rows = [
        [key, row["n"], row["p50_ms"], row["p95_ms"], row["max_ms"]]
        for key, row in result["latency"].items()
    ]
    print(format_table(["call", "n", "p50 ms", "p95 ms", "max ms"], rows))
    burst = result["burst"]
    print(
        f"\nadded p50: Compare {result['added_p50_ms']:+.2f} ms, "
        f"Rewrite {result['rewrite_added_p50_ms']:+.2f} ms (goal < 2 ms)"
    )
    print(
        f"burst: {burst['answered']}/{burst['calls']} answered, cache hit ratio "
        f"{burst['cache_hit_ratio']:.2f}, {burst['llm_calls']} LLM calls, "
        f"wall {burst['wall_ms']:.0f} ms, p50 {burst['latency']['p50_ms']:.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200, help="interleaved rounds per call kind")
    args = parser.parse_args()
    result = asyncio.run(run(args.rounds))
    times = result.pop("_times")
    print_table(result)
    path, png = write_outputs("judge", result, partial(plot, times))
    print(f"\nwrote {path} and {png}")


if __name__ == "__main__":
    main()

"""mem0-local benchmark: add and search latency over real HTTP, against the bare library call.

mem0-local runs as operators run it (the `mem0-local` console script, default INFO logging) on
pgvector in a temporary database, with the local MiniLM embedder and infer off (no LLM). The
baseline is the very call mem0-local makes, `AsyncMemory.add` / `.search`, in this process on a
second collection of the same database. Calls alternate (HTTP, library, HTTP, ...) so that machine
noise hits both alike; the ratio of medians is what the HTTP layer costs.

`python -m bench.mem0_local` (or `make bench-mem0-local`) prints a table and writes
bench/results/mem0_local.json and bench/results/mem0_local.png.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

import httpx
from pydantic import SecretStr

from bench._compare import compared, interleave, print_comparison
from bench._report import figure, machine, progress, write_outputs
from mem0_common import ServiceProcess
from mem0_local import Mem0LocalSettings, open_async_memory
from tests.support.postgres import temporary_database

SUBJECTS = ["the API", "the nightly backup", "the staging cluster", "my editor", "the team lunch"]
FACTS = [
    "{s} moved to port {n}",
    "{s} is scheduled at {n} o'clock",
    "{s} needs {n} gigabytes of memory",
    "{s} was last changed on day {n}",
]
QUERIES = [
    "which port does {s} use",
    "when does {s} happen",
    "how much memory for {s}",
    "when did {s} change",
]
#: The printed table: (label, series).
TABLE = [
    ("add    mem0-local HTTP", "http_add"),
    ("add    AsyncMemory (baseline)", "lib_add"),
    ("search mem0-local HTTP", "http_search"),
    ("search AsyncMemory (baseline)", "lib_search"),
]


def _text(template: list[str], i: int) -> str:
    return template[i % len(template)].format(s=SUBJECTS[i % len(SUBJECTS)], n=i)


async def measure(
    url: str, database_url: str, data_dir: Path, n: int, warmup: int
) -> dict[str, Any]:
    progress("loading the baseline AsyncMemory in-process ...")
    memory = await asyncio.to_thread(
        open_async_memory,
        Mem0LocalSettings(
            data_dir=data_dir, database_url=SecretStr(database_url), collection_name="bench_lib"
        ),
    )
    user = {"user_id": "bench-user"}

    async with httpx.AsyncClient(base_url=url, timeout=60) as http:

        async def http_add(i: int) -> None:
            body = {"messages": [{"role": "user", "content": _text(FACTS, i)}], "infer": False}
            response = await http.post("/memories", json={**body, **user})
            response.raise_for_status()

        async def lib_add(i: int) -> None:
            message = [{"role": "user", "content": _text(FACTS, i)}]
            await memory.add(message, infer=False, **user)

        async def http_search(i: int) -> None:
            body = {"query": _text(QUERIES, i), "filters": user, "top_k": 10}
            response = await http.post("/search", json=body)
            response.raise_for_status()

        async def lib_search(i: int) -> None:
            await memory.search(_text(QUERIES, i), filters=user, top_k=10)

        progress(f"warm-up: {warmup} adds and searches each ...")
        warm_adds = range(10_000, 10_000 + warmup)
        await interleave("warm-up add", warm_adds, http_add, lib_add, every=50)
        await interleave("warm-up search", range(warmup), http_search, lib_search, every=50)
        progress(f"measuring {n} adds and {n} searches each, alternating HTTP and library ...")
        http_adds, lib_adds = await interleave("add", range(n), http_add, lib_add, every=50)
        http_searches, lib_searches = await interleave(
            "search", range(n), http_search, lib_search, every=50
        )
    memory.close()
    return {
        "http_add": http_adds,
        "lib_add": lib_adds,
        "http_search": http_searches,
        "lib_search": lib_searches,
    }


def report(times: dict[str, list[float]], n: int) -> dict[str, Any]:
    result = compared(times, "http", "lib", n)
    summaries = result["summaries"]
    return {
        **result,
        "add_mean_ms": summaries["http_add"]["mean_ms"],
        "search_mean_ms": summaries["http_search"]["mean_ms"],
        "setup": {
            "vector_store": "pgvector (temporary database)",
            "embedder": "all-MiniLM-L6-v2, local CPU",
            "infer": False,
            "server": "mem0-local console script, log level INFO",
            "baseline": "AsyncMemory.add/search in the bench process, same database",
            **machine(),
        },
    }


def plot(times: dict[str, list[float]], path: Path) -> None:
    with figure(path, 1, 2, figsize=(10, 4), sharey=False) as (_, axes):
        for ax, op in zip(axes, ("add", "search"), strict=True):
            for key, label in ((f"http_{op}", "mem0-local (HTTP)"), (f"lib_{op}", "AsyncMemory")):
                ms = sorted(t * 1000 for t in times[key])
                ax.plot(ms, [(i + 1) / len(ms) for i in range(len(ms))], label=label)
            ax.set_title(f"{op} latency, CDF")
            ax.set_xlabel("ms")
            ax.set_ylabel("fraction of calls")
            ax.legend()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=200, help="adds and searches measured")
    parser.add_argument("--warmup", type=int, default=10, help="unmeasured calls first")
    args = parser.parse_args()
    with temporary_database("mem0mcp_bench") as database_url, tempfile.TemporaryDirectory() as tmp:
        progress("starting mem0-local (pgvector, infer off) ...")
        env = {
            "MEM0_LOCAL_PORT": "0",
            "MEM0_LOCAL_DATABASE_URL": database_url,
            "MEM0_LOCAL_DATA_DIR": str(Path(tmp) / "server"),
            "MEM0_LOCAL_COLLECTION_NAME": "bench_http",
            "MEM0_LOCAL_LLM_BASE_URL": "",
            "MEM0_LOCAL_API_KEY": "",
        }
        with ServiceProcess(["mem0-local"], env) as server:
            times = asyncio.run(
                measure(server.url, database_url, Path(tmp) / "lib", args.calls, args.warmup)
            )
    result = report(times, args.calls)
    print_comparison(result, TABLE, "HTTP / library")
    path, png = write_outputs("mem0_local", result, partial(plot, times))
    progress(f"wrote {path} and {png}")


if __name__ == "__main__":
    main()

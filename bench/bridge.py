"""Bridge latency: what memory_add and memory_search cost over the mem0 REST calls they wrap.

On the real stack this script starts itself (mem0-local on a temporary pgvector database with
the real MiniLM embedder, the ranker, the judge; FakeLLM as the LLM, so an LLM call costs
almost nothing), each measured call is timed twice in the same run, interleaved (bridge,
direct, bridge, direct, ...) so that machine noise hits both alike:

- bridge: the tool called through the official MCP client on an in-process bridge, as an agent
  calls it. `memory_add` runs the whole reconcile path: ranker duplicate check, a mem0 search
  for close memories, the judge's Compare when any pass the prefilter (FakeLLM answers UNRELATED
  for these facts, so each is added), the mem0 add, the ranker record. `memory_search` (a
  question) runs the mem0 search, the judge's Rewrite and a second mem0 search concurrently,
  then the ranker's rerank;
- direct: the very mem0-local REST call the bridge makes for it (POST /memories with the same
  body; POST /search with the same top_k), over a kept-alive httpx client, into a namespace of
  its own that grows at the same pace.

Adds use infer=false on both sides (the stored text is the fact itself; with infer on, both
would add the same LLM extraction call). The ratio of medians is what the bridge costs.

`python -m bench.bridge` (or `make bench-bridge`) prints progress and a table, writes
bench/results/bridge.json and bench/results/bridge.png.
"""

from __future__ import annotations

import argparse
import asyncio
from collections import Counter
from functools import partial
from pathlib import Path
from typing import Any

import httpx
from mcp import Client

from bench._compare import compared, interleave, print_comparison
from bench._mcp import call_tool
from bench._report import figure, machine, progress, write_outputs
from mem0_bridge import BridgeSettings, create_server
from tests.support.stack import Stack, temporary_stack

SEARCH_LIMIT = 10
BRIDGE_KEY = "bench-bridge"
DIRECT_KEY = "bench-direct"
#: The printed table: (label, series).
TABLE = [
    ("memory_add    (bridge, MCP)", "bridge_add"),
    ("POST /memories (direct, baseline)", "direct_add"),
    ("memory_search (bridge, MCP)", "bridge_search"),
    ("POST /search   (direct, baseline)", "direct_search"),
]

#: Consonant-vowel syllables; syllable i is consonant i % 14 then vowel i // 14.
_SYLLABLES = [c + v for v in "aeiou" for c in "bdfgklmnprstvz"]


def _word(n: int) -> str:
    """A distinct made-up word per n, so facts share no content word (see `fact`): n's last
    three digits in base 70, one syllable each, lowest first."""
    base = len(_SYLLABLES)
    return "".join(_SYLLABLES[n // base**k % base] for k in range(3))


def fact(i: int) -> str:
    """The i-th fact: three words no other fact uses, so the judge never finds two the same
    (which would reinforce or update instead of add, a different path)."""
    a, b, c = (_word(3 * i + k) for k in range(3))
    return f"The {a} service depends on {b} for {c}."


def question(i: int) -> str:
    return f"What does the {_word(3 * i)} service depend on?"


class Calls:
    """The two sides of each measured operation, on one stack."""

    def __init__(self, settings: BridgeSettings, client: Client, http: httpx.AsyncClient) -> None:
        self.settings = settings
        self.client = client
        self.http = http
        self.add_actions: Counter[str] = Counter()
        self.rewritten = 0

    async def bridge_add(self, i: int) -> None:
        added = await call_tool(self.client, "memory_add", text=fact(i), key=BRIDGE_KEY)
        self.add_actions[added["action"]] += 1

    async def direct_add(self, i: int) -> None:
        body = {
            "messages": [{"role": "user", "content": fact(i)}],
            "user_id": self.settings.default_user_id,
            "run_id": DIRECT_KEY,
            "infer": self.settings.infer,
            "metadata": {"source": "mem0-bridge"},
        }
        response = await self.http.post("/memories", json=body)
        response.raise_for_status()

    async def bridge_search(self, i: int) -> None:
        found = await call_tool(
            self.client, "memory_search", query=question(i), key=BRIDGE_KEY, limit=SEARCH_LIMIT
        )
        self.rewritten += found["rewritten_query"] is not None

    async def direct_search(self, i: int) -> None:
        body = {
            "query": question(i),
            "filters": {"user_id": self.settings.default_user_id, "run_id": DIRECT_KEY},
            "top_k": SEARCH_LIMIT * self.settings.search_overfetch,
        }
        response = await self.http.post("/search", json=body)
        response.raise_for_status()


async def measure(stack: Stack, n: int, warmup: int) -> tuple[dict[str, list[float]], Calls]:
    settings = stack.settings(infer=False, log_level="WARNING")
    headers = {"X-API-Key": settings.api_key or ""}
    async with (
        Client(create_server(settings)) as client,
        httpx.AsyncClient(base_url=stack.mem0_url, headers=headers, timeout=60) as http,
    ):
        calls = Calls(settings, client, http)
        progress(f"warm-up: {warmup} adds and searches each ...")
        warm = range(n, n + warmup)
        await interleave("warm-up add", warm, calls.bridge_add, calls.direct_add, every=25)
        await interleave("warm-up search", warm, calls.bridge_search, calls.direct_search, every=25)
        calls.add_actions.clear()
        calls.rewritten = 0
        progress(f"measuring {n} adds and {n} searches, interleaving bridge and direct ...")
        bridge_adds, direct_adds = await interleave(
            "add", range(n), calls.bridge_add, calls.direct_add, every=25
        )
        bridge_searches, direct_searches = await interleave(
            "search", range(n), calls.bridge_search, calls.direct_search, every=25
        )
    times = {
        "bridge_add": bridge_adds,
        "direct_add": direct_adds,
        "bridge_search": bridge_searches,
        "direct_search": direct_searches,
    }
    return times, calls


def report(times: dict[str, list[float]], calls: Calls, n: int) -> dict[str, Any]:
    return {
        **compared(times, "bridge", "direct", n),
        "add_actions": dict(calls.add_actions),
        "searches_rewritten": calls.rewritten,
        "setup": {
            "bridge": "in-process MCPServer, official MCP client (memory transport)",
            "baseline": "the same mem0-local REST call over a kept-alive httpx client",
            "stack": "mem0-local on pgvector (temporary database), ranker, judge; subprocesses",
            "embedder": "all-MiniLM-L6-v2, local CPU",
            "llm": "FakeLLM in the bench process (judge Compare/Rewrite answered instantly)",
            "infer": calls.settings.infer,
            "search_limit": SEARCH_LIMIT,
            "search_top_k": SEARCH_LIMIT * calls.settings.search_overfetch,
            **machine(),
        },
    }


def print_table(result: dict[str, Any]) -> None:
    print_comparison(result, TABLE, "bridge / direct")
    print(
        f"add outcomes: {result['add_actions']}; searches rewritten: "
        f"{result['searches_rewritten']}/{result['n']}"
    )


def plot(result: dict[str, Any], path: Path) -> None:
    s = result["summaries"]
    width = 0.35
    with figure(path, figsize=(8, 4)) as (_, ax):
        for offset, side, label in (
            (0, "bridge", "bridge (MCP)"),
            (width, "direct", "direct REST"),
        ):
            for stat, alpha in (("p95_ms", 0.35), ("p50_ms", 1.0)):
                values = [s[f"{side}_{op}"][stat] for op in ("add", "search")]
                bars = ax.bar(
                    [x + offset for x in (0, 1)],
                    values,
                    width,
                    alpha=alpha,
                    color="tab:blue" if side == "bridge" else "tab:orange",
                    label=f"{label} {stat.removesuffix('_ms')}",
                )
                ax.bar_label(bars, fmt="%.0f", fontsize=8)
        ax.set_xticks([width / 2, 1 + width / 2])
        ax.set_xticklabels(["memory_add vs POST /memories", "memory_search vs POST /search"])
        ax.set_ylabel("ms")
        ax.set_title(f"Bridge vs direct mem0-local calls (n={result['n']} each)")
        ax.legend(fontsize=8)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=100, help="adds and searches measured")
    parser.add_argument("--warmup", type=int, default=5, help="unmeasured calls first")
    args = parser.parse_args()
    progress("starting mem0-local (pgvector), ranker and judge with FakeLLM ...")
    with temporary_stack() as stack:
        times, calls = asyncio.run(measure(stack, args.calls, args.warmup))
    result = report(times, calls, args.calls)
    print_table(result)
    path, png = write_outputs("bridge", result, partial(plot, result))
    progress(f"wrote {path} and {png}")


if __name__ == "__main__":
    main()

"""Bridge latency: what memory_add and memory_search cost over the mem0 REST calls they wrap.

On the real stack this script starts itself (mem0-local on a temporary pgvector database with
the real MiniLM embedder, the ranker, the judge; FakeLLM as the LLM, in a process of its own as
a provider would be, so an LLM call costs almost nothing), each measured call is timed twice in
the same run, interleaved (bridge, direct, bridge, direct, ...) so that machine noise hits both
alike:

- bridge: the tool called through the official MCP client on an in-process bridge, as an agent
  calls it. `memory_add` runs the whole reconcile path: ranker duplicate check, a mem0 search
  for close memories, the judge's Compare when any pass the prefilter (FakeLLM answers UNRELATED
  for these facts, so each is added), the mem0 add, the ranker record. `memory_search` (a
  question, each asked once) runs the over-fetching mem0 search and the ranker's rerank, and
  asks the judge for the question's rewrite once it has answered (for the question's next
  search);
- direct: mem0-local's own REST call for it (POST /memories with the body the bridge sends;
  POST /search at the top_k the agent asked the bridge for, where the bridge fetches that times
  `MEM0_SEARCH_OVERFETCH`), over a kept-alive httpx client, into a namespace of its own that
  grows at the same pace, with facts and questions of its own (alike in form, so that no text is
  embedded twice across the two sides: mem0-local caches embeddings).

Adds use infer=false on both sides (the stored text is the fact itself; with infer on, both
would add the same LLM extraction call). The ratio of medians is what the bridge costs.

Then the same again with the fake LLM answering each call after 500 ms, as a hosted model
might (`slow_llm` in the results): neither a search nor an add may wait on it. The bridge runs
with its own default budgets and timeouts in both rounds.

`python -m bench.bridge` (or `make bench-bridge`) prints progress and a table per round, writes
bench/results/bridge.json (the instant round's figures at the top level, the slow round's under
`slow_llm`, with `llm_ms`) and bench/results/bridge.png.
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
from bench.load.run import bridge_settings
from mem0_bridge import BridgeSettings, create_server
from tests.support.stack import Stack, temporary_stack

SEARCH_LIMIT = 10
BRIDGE_KEY = "bench-bridge"
DIRECT_KEY = "bench-direct"
#: The fake LLM's latency per call in the second round (ms).
SLOW_LLM_MS = 500
#: Indices of the slow round's facts and questions start here (none is the instant round's).
SLOW_OFFSET = 40_000
#: The direct side's facts and questions are the bridge's index plus this (facts stay distinct
#: up to index 114 333, see `_word`).
DIRECT_OFFSET = 20_000
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

    def __init__(
        self, settings: BridgeSettings, client: Client, http: httpx.AsyncClient, suffix: str = ""
    ) -> None:
        self.settings = settings
        self.client = client
        self.http = http
        self.bridge_key = BRIDGE_KEY + suffix
        self.direct_key = DIRECT_KEY + suffix
        self.add_actions: Counter[str] = Counter()
        self.rewritten = 0

    async def bridge_add(self, i: int) -> None:
        added = await call_tool(self.client, "memory_add", text=fact(i), key=self.bridge_key)
        self.add_actions[added["action"]] += 1

    async def direct_add(self, i: int) -> None:
        body = {
            "messages": [{"role": "user", "content": fact(DIRECT_OFFSET + i)}],
            "user_id": self.settings.default_user_id,
            "run_id": self.direct_key,
            "infer": self.settings.infer,
            "metadata": {"source": "mem0-bridge"},
        }
        response = await self.http.post("/memories", json=body)
        response.raise_for_status()

    async def bridge_search(self, i: int) -> None:
        found = await call_tool(
            self.client, "memory_search", query=question(i), key=self.bridge_key, limit=SEARCH_LIMIT
        )
        self.rewritten += found["rewritten_query"] is not None

    async def direct_search(self, i: int) -> None:
        body = {
            "query": question(DIRECT_OFFSET + i),
            "filters": {"user_id": self.settings.default_user_id, "run_id": self.direct_key},
            "top_k": SEARCH_LIMIT,
        }
        response = await self.http.post("/search", json=body)
        response.raise_for_status()


async def measure(
    stack: Stack, n: int, warmup: int, *, offset: int = 0, suffix: str = ""
) -> tuple[dict[str, list[float]], Calls]:
    settings = bridge_settings(stack)
    headers = {"X-API-Key": settings.api_key or ""}
    async with (
        Client(create_server(settings)) as client,
        httpx.AsyncClient(base_url=stack.mem0_url, headers=headers, timeout=60) as http,
    ):
        calls = Calls(settings, client, http, suffix)
        progress(f"warm-up: {warmup} adds and searches each ...")
        warm = range(offset + n, offset + n + warmup)
        await interleave("warm-up add", warm, calls.bridge_add, calls.direct_add, every=25)
        await interleave("warm-up search", warm, calls.bridge_search, calls.direct_search, every=25)
        calls.add_actions.clear()
        calls.rewritten = 0
        progress(f"measuring {n} adds and {n} searches, interleaving bridge and direct ...")
        measured = range(offset, offset + n)
        bridge_adds, direct_adds = await interleave(
            "add", measured, calls.bridge_add, calls.direct_add, every=25
        )
        bridge_searches, direct_searches = await interleave(
            "search", measured, calls.bridge_search, calls.direct_search, every=25
        )
    times = {
        "bridge_add": bridge_adds,
        "direct_add": direct_adds,
        "bridge_search": bridge_searches,
        "direct_search": direct_searches,
    }
    return times, calls


def round_figures(times: dict[str, list[float]], calls: Calls, n: int) -> dict[str, Any]:
    """One round's comparison, with what the bridge did."""
    return {
        **compared(times, "bridge", "direct", n),
        "add_actions": dict(calls.add_actions),
        "searches_rewritten": calls.rewritten,
    }


def report(
    instant: tuple[dict[str, list[float]], Calls],
    slow: tuple[dict[str, list[float]], Calls],
    n: int,
) -> dict[str, Any]:
    calls = instant[1]
    return {
        **round_figures(*instant, n),
        "slow_llm": {"llm_ms": SLOW_LLM_MS, **round_figures(*slow, n)},
        "setup": {
            "bridge": "in-process MCPServer, official MCP client (memory transport)",
            "baseline": "the same mem0-local REST call over a kept-alive httpx client",
            "stack": "mem0-local on pgvector (temporary database), ranker, judge; subprocesses",
            "embedder": "all-MiniLM-L6-v2, local CPU",
            "llm": "FakeLLM in a process of its own: judge Compare/Rewrite answered instantly, "
            f"and after {SLOW_LLM_MS} ms in the slow_llm round",
            "bridge_budgets": "the bridge's defaults",
            "infer": calls.settings.infer,
            "search_limit": SEARCH_LIMIT,
            "search_top_k": SEARCH_LIMIT,
            "bridge_search_top_k": SEARCH_LIMIT * calls.settings.search_overfetch,
            **machine(),
        },
    }


def print_table(result: dict[str, Any]) -> None:
    for title, figures in (
        ("LLM answering at once", result),
        (f"LLM answering after {SLOW_LLM_MS} ms (slow_llm)", result["slow_llm"]),
    ):
        print(f"\n{title}:")
        print_comparison(figures, TABLE, "bridge / direct")
        print(
            f"add outcomes: {figures['add_actions']}; searches rewritten: "
            f"{figures['searches_rewritten']}/{figures['n']}"
        )


def plot(result: dict[str, Any], path: Path) -> None:
    groups = [
        (f"{op}, LLM {ms} ms", figures["summaries"], op)
        for ms, figures in ((0, result), (SLOW_LLM_MS, result["slow_llm"]))
        for op in ("add", "search")
    ]
    xs = range(len(groups))
    width = 0.35
    with figure(path, figsize=(9, 4)) as (_, ax):
        for offset, side, label in (
            (0, "bridge", "bridge (MCP)"),
            (width, "direct", "direct REST"),
        ):
            for stat, alpha in (("p95_ms", 0.35), ("p50_ms", 1.0)):
                values = [s[f"{side}_{op}"][stat] for _, s, op in groups]
                bars = ax.bar(
                    [x + offset for x in xs],
                    values,
                    width,
                    alpha=alpha,
                    color="tab:blue" if side == "bridge" else "tab:orange",
                    label=f"{label} {stat.removesuffix('_ms')}",
                )
                ax.bar_label(bars, fmt="%.0f", fontsize=8)
        ax.set_xticks([x + width / 2 for x in xs])
        ax.set_xticklabels([name for name, _, _ in groups], fontsize=8)
        ax.set_ylabel("ms")
        ax.set_title(f"Bridge vs the mem0 call it wraps (n={result['n']} each)")
        ax.legend(fontsize=8)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=200, help="adds and searches measured")
    parser.add_argument("--warmup", type=int, default=5, help="unmeasured calls first")
    args = parser.parse_args()
    progress("starting mem0-local (pgvector), ranker and judge with FakeLLM ...")
    with temporary_stack() as stack:
        progress("round 1: the fake LLM answers at once")
        instant = asyncio.run(measure(stack, args.calls, args.warmup))
        progress(f"round 2: the fake LLM answers after {SLOW_LLM_MS} ms")
        stack.llm.latency_seconds = SLOW_LLM_MS / 1000
        slow = asyncio.run(
            measure(stack, args.calls, args.warmup, offset=SLOW_OFFSET, suffix="-slow")
        )
    result = report(instant, slow, args.calls)
    print_table(result)
    path, png = write_outputs("bridge", result, partial(plot, result))
    progress(f"wrote {path} and {png}")


if __name__ == "__main__":
    main()

"""Retrieval smoke check of a deployment: do question-style queries find the fact that answers them?

Kept for `--mcp-url` (a live bridge, which the replaying eval cannot reach); the project's
retrieval figures come from `make eval` (`bench/eval/`), not from this 40-fact corpus.

A fixed corpus of 40 durable project facts, written the way agents store them (some topically
close: two about deploys, two about backups, two about the GraphQL gateway, ...), and 40
questions, each with the one fact that answers it. The corpus is stored through the bridge
(`memory_add`, in-process MCP client) on the real stack this script starts itself: mem0-local
on a temporary pgvector database with the real MiniLM embedder, the ranker, the judge; the LLM
is FakeLLM. Every question is then asked three ways, and hit@1, hit@3 and MRR (over the top
10) are measured for each:

- `mem0_raw`: mem0's own search over REST (POST /search), the baseline;
- `bridge_no_rewrite`: the bridge's `memory_search` with query rewriting off (over-fetch and
  rerank by mentions and recency);
- `bridge_rewrite`: the same with rewriting on. The rewrites come from FakeLLM's deterministic
  templates ("which port does X use?" -> "X uses port"), not from a real LLM: this row
  measures the pipeline (rewrite, second search, merge, rerank), not a real model's rewrites.

`--mcp-url URL [--bearer-token T]` runs the questions against a live bridge instead: the corpus
goes into a throwaway scope key there (deleted afterwards), and only that configuration is
measured (`live_bridge`), with whatever mem0, embedder and LLM it is configured with; its
result goes to bench/results/retrieval_live.{json,png}, leaving the local-stack one alone.

`python -m bench.retrieval` prints progress and a table, writes bench/results/retrieval.json and
bench/results/retrieval.png (not committed: `make eval` is the measurement).
"""

from __future__ import annotations

import argparse
import asyncio
import uuid
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import httpx
from mcp import Client

from bench._mcp import call_tool, http_bridge
from bench._report import figure, format_table, machine, progress, write_outputs
from mem0_bridge import create_server
from tests.support.stack import Stack, temporary_stack

TOP_K = 10
KEY = "retrieval-eval"

#: (fact, a question that fact answers). About a third of the questions share no content word
#: with their fact (as when an agent asks before knowing how the fact was phrased), so the
#: eval is not saturated by word overlap.
CASES: list[tuple[str, str]] = [
    ("The API server listens on port 8080 in development.", "Which port does the API use locally?"),
    ("The admin dashboard is served on port 9090.", "Where is the back-office web page served?"),
    (
        "Production PostgreSQL runs version 15 with the pgvector extension.",
        "What version of Postgres do we run in production?",
    ),
    (
        "The test database is created fresh for each run and dropped afterwards.",
        "Do tests share a database between runs?",
    ),
    (
        "Database migrations are managed with Alembic; run alembic upgrade head before starting.",
        "How do I apply the schema migrations?",
    ),
    (
        "The staging cluster runs on three nodes in eu-west-1.",
        "How big is the pre-production environment?",
    ),
    (
        "Production deploys go through GitHub Actions on every tag matching v*.",
        "How do we ship a release to production?",
    ),
    (
        "Staging deploys happen automatically on every merge to main.",
        "When does staging get deployed?",
    ),
    (
        "The Redis cache stores session tokens with a 30 minute TTL.",
        "When does a user get logged out automatically?",
    ),
    (
        "Rate limiting allows 100 requests per minute per API key.",
        "How many calls can a customer make before being throttled?",
    ),
    ("The frontend is built with Vite and React 18.", "Which framework does the web UI use?"),
    (
        "Unit tests run with pytest; make test also runs lint and type checks.",
        "What command runs the whole test suite?",
    ),
    (
        "Integration tests need a running PostgreSQL on port 5432.",
        "What do the integration tests depend on?",
    ),
    (
        "Code style is enforced by ruff with a line length of 100.",
        "How wide may a line of Python code be?",
    ),
    ("Type checking uses mypy in strict mode.", "Which type checker do we use?"),
    ("Logs are shipped to Loki and kept for 14 days.", "How long are logs retained?"),
    (
        "Metrics are scraped by Prometheus every 15 seconds.",
        "What is the scrape interval?",
    ),
    (
        "Alerts page the on-call engineer through PagerDuty.",
        "Who gets notified when an alert fires?",
    ),
    (
        "The nightly backup of the main database runs at 02:00 UTC and goes to S3.",
        "When does the database backup run?",
    ),
    ("Backups are retained for 30 days.", "How long do we keep backups?"),
    (
        "Secrets live in HashiCorp Vault under the path secret/orbit.",
        "Where do I find the database password?",
    ),
    (
        "The team prefers squash merges and requires one approving review.",
        "What is the merge policy for pull requests?",
    ),
    (
        "Feature branches are named feature/<ticket-id>-short-description.",
        "How should I name a new branch?",
    ),
    (
        "The mobile app talks to the API through the GraphQL gateway.",
        "How does the mobile app reach the backend?",
    ),
    (
        "The GraphQL gateway caches persisted queries for one hour.",
        "How long are persisted queries cached?",
    ),
    (
        "Image uploads are resized by a worker reading from the uploads queue.",
        "Who makes thumbnails of user photos?",
    ),
    (
        "Background jobs use Celery with RabbitMQ as the broker.",
        "Which message broker do background jobs use?",
    ),
    (
        "The search feature uses Elasticsearch 8 with one index per tenant.",
        "What powers full-text search?",
    ),
    (
        "Each tenant's data is isolated by a tenant_id column on every table.",
        "How is customer data separated between tenants?",
    ),
    (
        "Email is sent through Postmark and the templates live in the emails directory.",
        "Which service delivers transactional mail?",
    ),
    ("The CLI tool is published to PyPI as orbit-cli.", "What is the CLI's package name?"),
    (
        "Python 3.11 is the minimum supported Python version.",
        "Which Python versions do we support?",
    ),
    ("Docker images are built on a python:3.11-slim base.", "What base image do containers use?"),
    (
        "The embedding model is all-MiniLM-L6-v2 with 384 dimensions.",
        "What size are the vectors?",
    ),
    (
        "Health checks hit /healthz and readiness checks hit /readyz.",
        "Which endpoint does the readiness probe call?",
    ),
    (
        "The load balancer terminates TLS with certificates from Let's Encrypt.",
        "Where do our HTTPS certificates come from?",
    ),
    (
        "Feature flags are managed in LaunchDarkly.",
        "How do I turn a new feature on for some users only?",
    ),
    (
        "The payments service retries failed webhooks up to 5 times with exponential backoff.",
        "Are payment notifications retried?",
    ),
    ("The release checklist lives in docs/RELEASING.md.", "Where is the release checklist?"),
    (
        "Error tracking goes to Sentry, with one project per service.",
        "Where do I look when the app crashes?",
    ),
]

REWRITE_NOTE = (
    "bridge_rewrite uses FakeLLM's deterministic template rewrites, not a real LLM: it measures "
    "the rewrite pipeline (rewrite, second search, merge, rerank), not a model's rewrite quality."
)

#: Returns the memory ids found for a question, best first, plus the rewritten query if any.
Searcher = Callable[[str], Awaitable[tuple[list[str], str | None]]]


def metrics(ranks: Sequence[int | None]) -> dict[str, float]:
    """hit@1, hit@3 and MRR of the 1-based ranks of the expected facts (None: not in top k)."""
    n = len(ranks)
    return {
        "n": n,
        "hit_at_1": sum(r is not None and r <= 1 for r in ranks) / n,
        "hit_at_3": sum(r is not None and r <= 3 for r in ranks) / n,
        "mrr": sum(1 / r for r in ranks if r is not None) / n,
    }


def _rank(expected: str, found: list[str]) -> int | None:
    return found.index(expected) + 1 if expected in found else None


async def store_corpus(client: Client, key: str) -> list[str]:
    """Add every fact through the bridge; the id of the memory that holds each one."""
    ids: list[str] = []
    for i, (fact, _) in enumerate(CASES):
        added = await call_tool(client, "memory_add", text=fact, key=key)
        if added["action"] != "added" or not added["memory_ids"]:
            # The corpus is built to be distinct facts; reconciling two of them would make the
            # eval measure something else, so it stops rather than report skewed numbers.
            raise RuntimeError(f"fact {i} was {added['action']!r}, not added: {fact!r} {added}")
        ids.append(added["memory_ids"][0])
        if (i + 1) % 10 == 0:
            progress(f"  stored {i + 1}/{len(CASES)} facts")
    return ids


def bridge_searcher(client: Client, key: str) -> Searcher:
    async def search(question: str) -> tuple[list[str], str | None]:
        found = await call_tool(client, "memory_search", query=question, key=key, limit=TOP_K)
        return [hit["id"] for hit in found["hits"]], found["rewritten_query"]

    return search


def mem0_searcher(http: httpx.AsyncClient, user_id: str, key: str) -> Searcher:
    """mem0's own search of the same namespace, as the bridge would ask it (one run_id)."""

    async def search(question: str) -> tuple[list[str], str | None]:
        body = {"query": question, "filters": {"user_id": user_id, "run_id": key}, "top_k": TOP_K}
        response = await http.post("/search", json=body)
        response.raise_for_status()
        answer = response.json()
        items = answer.get("results", []) if isinstance(answer, dict) else answer
        return [str(item["id"]) for item in items], None

    return search


async def evaluate(ids: list[str], searchers: dict[str, Searcher]) -> dict[str, Any]:
    """Ask every question of every configuration; per-configuration metrics and per-query
    ranks."""
    ranks: dict[str, list[int | None]] = {name: [] for name in searchers}
    queries: list[dict[str, Any]] = []
    for i, ((fact, question), expected) in enumerate(zip(CASES, ids, strict=True)):
        row: dict[str, Any] = {"question": question, "fact": fact, "rank": {}}
        for name, search in searchers.items():
            found, rewritten = await search(question)
            rank = _rank(expected, found)
            ranks[name].append(rank)
            row["rank"][name] = rank
            if rewritten is not None:
                row[f"{name}_rewritten_query"] = rewritten
        queries.append(row)
        if (i + 1) % 10 == 0:
            progress(f"  asked {i + 1}/{len(CASES)} questions")
    configurations = {name: metrics(r) for name, r in ranks.items()}
    for name, m in configurations.items():
        m["rewritten"] = sum(f"{name}_rewritten_query" in row for row in queries)
    return {"configurations": configurations, "queries": queries}


async def run_local(stack: Stack) -> dict[str, Any]:
    settings = stack.settings(query_rewrite=False, log_level="WARNING")
    rewriting = settings.model_copy(update={"query_rewrite": True})
    headers = {"X-API-Key": settings.api_key or ""}
    async with (
        Client(create_server(settings)) as plain,
        Client(create_server(rewriting)) as rewrite,
        httpx.AsyncClient(base_url=stack.mem0_url, headers=headers, timeout=60) as http,
    ):
        progress(f"storing {len(CASES)} facts through the bridge ...")
        ids = await store_corpus(plain, KEY)
        progress(f"asking {len(CASES)} questions, three ways each ...")
        result = await evaluate(
            ids,
            {
                "mem0_raw": mem0_searcher(http, settings.default_user_id, KEY),
                "bridge_no_rewrite": bridge_searcher(plain, KEY),
                "bridge_rewrite": bridge_searcher(rewrite, KEY),
            },
        )
    result["setup"] = {
        "mode": "local stack",
        "mem0": "mem0-local on pgvector (temporary database), all-MiniLM-L6-v2 on CPU",
        "llm": "FakeLLM (extraction: one memory per sentence; judge: template rules)",
        "infer": settings.infer,
        "rewrite_budget_ms": rewriting.rewrite_budget_ms,
        "note": REWRITE_NOTE,
    }
    return result


async def run_live(url: str, token: str | None) -> dict[str, Any]:
    key = f"retrieval-eval-{uuid.uuid4().hex[:8]}"
    async with http_bridge(url, token) as client:
        ids: list[str] = []
        try:
            progress(f"storing {len(CASES)} facts in scope key {key} of the live bridge ...")
            ids = await store_corpus(client, key)
            progress(f"asking {len(CASES)} questions ...")
            result = await evaluate(ids, {"live_bridge": bridge_searcher(client, key)})
        finally:
            progress(f"deleting the eval's memories from {key} ...")
            listed = await call_tool(client, "memory_list", key=key, limit=1000)
            for memory_id in {hit["id"] for hit in listed["hits"]} | set(ids):
                await client.call_tool("memory_delete", {"memory_id": memory_id})
    result["setup"] = {"mode": "live bridge", "mcp_url": url, "scope_key": key}
    return result


def print_table(result: dict[str, Any]) -> None:
    rows = [
        [name, m["n"], m["rewritten"], m["hit_at_1"], m["hit_at_3"], m["mrr"]]
        for name, m in result["configurations"].items()
    ]
    print(format_table(["configuration", "queries", "rewritten", "hit@1", "hit@3", "MRR"], rows))
    if "bridge_rewrite" in result["configurations"]:
        print(f"\nnote: {REWRITE_NOTE}")


def plot(result: dict[str, Any], path: Path) -> None:
    configurations = result["configurations"]
    names = ["hit_at_1", "hit_at_3", "mrr"]
    width = 0.8 / len(configurations)
    with figure(path, figsize=(8, 4)) as (_, ax):
        for i, (config, m) in enumerate(configurations.items()):
            xs = [j + i * width for j in range(len(names))]
            bars = ax.bar(xs, [m[name] for name in names], width, label=config)
            ax.bar_label(bars, fmt="%.2f", fontsize=8)
        ax.set_xticks([j + width * (len(configurations) - 1) / 2 for j in range(len(names))])
        ax.set_xticklabels(["hit@1", "hit@3", "MRR"])
        ax.set_ylim(0, 1.25)
        ax.set_title(f"Retrieval of {len(CASES)} question-style queries")
        ax.legend(loc="upper center", ncol=len(configurations), fontsize=8)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mcp-url", help="measure a live bridge at this /mcp URL instead")
    parser.add_argument("--bearer-token", help="the live bridge's MEM0_HTTP_BEARER_TOKEN")
    args = parser.parse_args()
    if args.mcp_url:
        result = asyncio.run(run_live(args.mcp_url, args.bearer_token))
    else:
        progress("starting mem0-local (pgvector), ranker and judge with FakeLLM ...")
        with temporary_stack() as stack:
            result = asyncio.run(run_local(stack))
    result["setup"].update({"cases": len(CASES), "top_k": TOP_K, **machine()})
    print_table(result)
    # A live run is written beside, not over, the reproducible local-stack result.
    name = "retrieval_live" if args.mcp_url else "retrieval"
    path, png = write_outputs(name, result, partial(plot, result))
    progress(f"wrote {path} and {png}")


if __name__ == "__main__":
    main()

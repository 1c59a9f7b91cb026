"""The judge's own Prometheus metrics; per-call counts and latency come from mem0_common."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

LLM_LATENCY = Histogram(
    "mem0mcp_judge_llm_seconds",
    "Latency of one LLM HTTP attempt in seconds, by operation (compare, rewrite).",
    ["operation"],
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
LLM_ERRORS = Counter(
    "mem0mcp_judge_llm_errors_total",
    "Calls that ended without a judgement, by operation and kind "
    "(not_configured, timeout, unavailable, rejected, bad_answer).",
    ["operation", "kind"],
)
LLM_RETRIES = Counter(
    "mem0mcp_judge_llm_retries_total",
    "LLM attempts retried after 429/5xx/connection errors.",
    ["operation"],
)
REWRITE_CACHE = Counter(
    "mem0mcp_judge_rewrite_cache_total",
    "Rewrite lookups by result: hit (cached), coalesced (joined an identical call in flight), "
    "miss (an LLM call).",
    ["result"],
)
LLM_CONSECUTIVE_FAILURES = Gauge(
    "mem0mcp_judge_llm_consecutive_failures",
    "LLM calls that failed in a row since the last success; at JUDGE_LLM_DEGRADED_AFTER_FAILURES "
    "health reports mem0mcp.judge.v1.JudgeService.llm NOT_SERVING.",
)

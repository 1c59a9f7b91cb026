"""The bridge's Prometheus counters, served at /metrics on the HTTP transport."""

from __future__ import annotations

from prometheus_client import Counter

UNJUDGED_ADDS = Counter(
    "mem0_bridge_unjudged_adds_total",
    "Adds stored without a verdict (judge down, slow or failing) and queued for reconciling.",
)
RECONCILED = Counter(
    "mem0_bridge_reconciled_total",
    "Memories stored without a verdict and reconciled later, by outcome "
    "(restated, changed, new, gone).",
    ["outcome"],
)
SCOPE_LEASES = Counter(
    "mem0_bridge_scope_leases_total",
    "Scope leases asked of the ranker around a write, by outcome: granted (at once), waited "
    "(granted after waiting for another replica), timed_out and unavailable (the write went "
    "ahead without it), lost (it expired during the write and another holder took it).",
    ["outcome"],
)

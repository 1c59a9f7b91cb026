"""The eval's measures against values worked out by hand."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest

from bench.eval._dataset import Dataset, Event, Fact
from bench.eval._metrics import (
    Attribution,
    StoredMemory,
    first_relevant,
    hit_at,
    ndcg_at,
    reciprocal_rank,
    store_metrics,
    summarize,
)

T0 = datetime(2025, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("rank", "k", "expected"), [(1, 1, 1.0), (2, 1, 0.0), (5, 5, 1.0), (6, 5, 0.0), (None, 5, 0.0)]
)
def test_hit_at_k_counts_a_gold_at_or_above_k(rank: int | None, k: int, expected: float) -> None:
    assert hit_at(rank, k) == expected


def test_reciprocal_rank_is_one_over_the_rank_and_zero_past_the_cutoff() -> None:
    assert reciprocal_rank(1) == 1.0
    assert reciprocal_rank(4) == 0.25
    assert reciprocal_rank(11) == 0.0
    assert reciprocal_rank(None) == 0.0


def test_ndcg_with_one_relevant_item_discounts_by_log2_of_rank_plus_one() -> None:
    assert ndcg_at(1) == 1.0
    assert ndcg_at(3) == pytest.approx(0.5)
    assert ndcg_at(7) == pytest.approx(1 / 3)
    assert ndcg_at(2) == pytest.approx(1 / math.log2(3))
    assert ndcg_at(11) == 0.0


def test_only_the_first_relevant_result_counts() -> None:
    assert first_relevant([False, True, True]) == 2
    assert first_relevant([False, False]) is None


def test_summary_averages_each_measure_over_the_queries() -> None:
    summary = summarize([1, 2, None, 6])
    assert summary["n"] == 4
    assert summary["hit@1"] == 0.25
    assert summary["hit@5"] == 0.5
    assert summary["mrr"] == pytest.approx((1 + 0.5 + 0 + 1 / 6) / 4)
    assert summary["ndcg@10"] == pytest.approx((1 + 1 / math.log2(3) + 0 + 1 / math.log2(7)) / 4)


def _tiny() -> Dataset:
    """F1 changed 8080 -> 9000; F2 and F3 said once; F3's memory will be merged away."""
    facts = (
        Fact("F1", "changed", "gold", "p", "the API", "port", ("8080", "9000"), "9000"),
        Fact("F2", "static", "gold", "p", "the API", "workers", ("4",), "4"),
        Fact("F3", "lookalike", "gold", "p", "the API", "metrics_port", ("9100",), "9100"),
    )
    events = (
        Event(T0, "p", "F1", "8080", "The API listens on port 8080."),
        Event(T0, "p", "F2", "4", "The API runs 4 workers."),
        Event(T0, "p", "F3", "9100", "The API exposes metrics on port 9100."),
        Event(T0, "p", "F1", "9000", "The API now listens on port 9000."),
    )
    return Dataset(1, 0, ("p",), T0, facts, events, ())


def test_store_metrics_count_duplicates_stale_values_and_lost_facts() -> None:
    dataset = _tiny()
    # F3's memory was overwritten with F1's new text (a wrong merge); F1's old text remains.
    memories = [
        StoredMemory("m1", "p", "The API listens on port 8080."),
        StoredMemory("m2", "p", "the api runs 4   workers."),
        StoredMemory("m3", "p", "The API now listens on port 9000."),
        StoredMemory("m4", "p", "Something mem0 reworded."),
    ]
    attribution = Attribution(dataset, {"m4": ("F2", "4")})
    store = store_metrics(dataset, memories, attribution)
    assert store["memories_per_fact"] == pytest.approx(4 / 3)
    assert store["stale_values"] == 1
    assert store["stale_fact_ids"] == ["F1"]
    assert store["facts_lost"] == 1
    assert store["lost_fact_ids"] == ["F3"]


def test_a_memory_in_another_namespace_is_not_attributed_by_its_text() -> None:
    attribution = Attribution(_tiny(), {})
    assert attribution.owner(StoredMemory("x", "q", "The API runs 4 workers.")) is None
    assert attribution.owner(StoredMemory("x", "p", "The API runs 4 workers.")) == ("F2", "4")

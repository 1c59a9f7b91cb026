"""The eval's report: the judged run is compared with raw mem0 on its own store and with mem0
alone (raw search over the judge-less store), and every miss says what ranked above it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from bench.eval.__main__ import misses
from bench.eval._dataset import KINDS, Dataset, Query
from bench.eval._metrics import StoredMemory
from bench.eval._report import table, with_mem0_alone


def summary(hit1: float) -> dict[str, float]:
    return {"n": 10, "hit@1": hit1, "hit@5": 1.0, "mrr": hit1, "ndcg@10": hit1}


def run(raw: float, bridge: float) -> dict[str, Any]:
    systems = {"mem0_raw": summary(raw), "bridge_rerank": summary(bridge)}
    return {
        "kinds": {k: {s: dict(m) for s, m in systems.items()} for k in KINDS},
        "overall": {"all": {s: dict(m) for s, m in systems.items()}},
        "store": {
            "memories_per_fact": 1.0,
            "stale_values": 0,
            "facts_with_changed_values": 0,
            "facts_lost": 0,
            "facts_lost_per_kind": {},
        },
    }


def test_mem0_alone_is_raw_search_over_the_judge_less_store() -> None:
    judged, alone = run(raw=0.6, bridge=0.7), run(raw=0.3, bridge=0.4)
    with_mem0_alone(judged, alone)
    for kind in KINDS:
        assert judged["kinds"][kind]["mem0_alone"]["hit@1"] == 0.3
    assert judged["overall"]["all"]["mem0_alone"]["hit@1"] == 0.3


def test_the_table_gives_points_over_raw_and_over_mem0_alone() -> None:
    judged = run(raw=0.6, bridge=0.7)
    with_mem0_alone(judged, run(raw=0.3, bridge=0.4))
    bridge_row = next(line for line in table(judged).splitlines() if "bridge_rerank" in line)
    assert bridge_row.split()[-2:] == ["+10", "+40"]


def test_a_miss_lists_what_ranked_above_the_gold_memory() -> None:
    queries = tuple(
        Query(id=f"Q{i}", kind="static", form="question", project="atlas", text=f"q{i}", gold="F")
        for i in range(3)
    )
    dataset = Dataset(1, 0, ("atlas",), datetime.now(UTC), (), (), queries)
    found = [[StoredMemory(f"m{j}", "atlas", f"text {j}") for j in range(5)] for _ in queries]
    listed = misses(dataset, found, [1, 3, None])
    assert [(m["query"], m["rank"], m["above"]) for m in listed] == [
        ("Q1", 3, ["text 0", "text 1"]),
        ("Q2", None, ["text 0", "text 1", "text 2"]),
    ]


def test_the_table_says_how_many_counted_restatements_went_to_another_fact() -> None:
    judged = run(raw=0.6, bridge=0.7)
    judged["echoes"] = {"counted": 21, "to_another_fact": 4}
    assert table(judged).splitlines()[-1] == (
        "restatements kept apart and counted as a mention: 21, 4 of them of another fact's memory"
    )
    assert "restatements" not in table(run(raw=0.6, bridge=0.7))


def test_the_table_says_which_verdict_floor_the_judge_ran_with() -> None:
    judged = run(raw=0.6, bridge=0.7)
    judged["verdict_floor"] = 0.0
    assert table(judged).splitlines()[-1] == "verdict guard floor: 0"
    assert "verdict guard" not in table(run(raw=0.6, bridge=0.7))

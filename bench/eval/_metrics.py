"""The eval's measures, pure so that tests can pin them to known values.

Retrieval: every query has one gold fact, and a result is relevant when it holds that fact's
*current* value (a memory with a changed fact's old value is not relevant: B must win). Only
the first relevant result counts: a store holding the same fact three times must not look
better than one holding it once. With one relevant item, hit@k is "first relevant rank <= k",
MRR is 1/rank and nDCG@10 is 1/log2(rank + 1) (the ideal DCG is 1), all 0 past rank 10.

Store: after the replay every stored memory is attributed to the (fact, value) whose statement
it holds (see `Attribution`), which gives memories per fact (1.0 is the goal), facts whose
stored values include a stale one, and facts lost (none of their memories holds their current
value: merged into another fact, or overwritten).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from bench.eval._dataset import Dataset

CUTOFF = 10
Owner = tuple[str, str]  # (fact id, value)


def hit_at(rank: int | None, k: int) -> float:
    return 1.0 if rank is not None and rank <= k else 0.0


def reciprocal_rank(rank: int | None, cutoff: int = CUTOFF) -> float:
    return 1.0 / rank if rank is not None and rank <= cutoff else 0.0


def ndcg_at(rank: int | None, k: int = CUTOFF) -> float:
    """nDCG@k with a single relevant item (ideal DCG = 1/log2(2) = 1)."""
    return 1.0 / math.log2(rank + 1) if rank is not None and rank <= k else 0.0


def first_relevant(relevant: Sequence[bool]) -> int | None:
    """1-based rank of the first relevant result, None when there is none."""
    return next((i for i, r in enumerate(relevant, start=1) if r), None)


def summarize(ranks: Sequence[int | None]) -> dict[str, float]:
    """The four reported measures (means over queries) and the query count."""
    n = len(ranks)
    if n == 0:
        return {"n": 0, "hit@1": 0.0, "hit@5": 0.0, "mrr": 0.0, "ndcg@10": 0.0}
    return {
        "n": n,
        "hit@1": sum(hit_at(r, 1) for r in ranks) / n,
        "hit@5": sum(hit_at(r, 5) for r in ranks) / n,
        "mrr": sum(reciprocal_rank(r) for r in ranks) / n,
        "ndcg@10": sum(ndcg_at(r) for r in ranks) / n,
    }


@dataclass(frozen=True)
class StoredMemory:
    id: str
    namespace: str
    text: str
    #: False for a memory the bridge marked superseded or folded (kept, no longer the fact's
    #: current value).
    current: bool = True


class Attribution:
    """Which (fact, value) a memory holds: by its exact text in its namespace (what the replay
    said there), else by the id the bridge reported for that statement's add (when mem0's
    extraction reworded it). Memories neither way are unattributed."""

    def __init__(self, dataset: Dataset, owners_by_id: Mapping[str, Owner]) -> None:
        self._by_text: dict[tuple[str, str], Owner] = {
            (e.scope, text_key(e.text)): (e.fact, e.value) for e in dataset.events
        }
        self._by_id = dict(owners_by_id)

    def owner(self, memory: StoredMemory) -> Owner | None:
        found = self._by_text.get((memory.namespace, text_key(memory.text)))
        return found if found is not None else self._by_id.get(memory.id)


def text_key(text: str) -> str:
    """How a stored text is matched to the statement it holds: case and runs of whitespace
    ignored (the eval's attribution and its oracle judge read texts alike)."""
    return " ".join(text.split()).casefold()


def store_metrics(
    dataset: Dataset, memories: Iterable[StoredMemory], attribution: Attribution
) -> dict[str, object]:
    """`memories_per_fact`, `stale_values`, `facts_lost`, and the details behind them.

    Per fact, its current memories count (a superseded or folded memory is kept on purpose, as
    the record of an older value); a fact is stale when a current memory holds an older value,
    and lost when no memory at all, current or not, holds its current value.
    """
    held: dict[str, list[str]] = defaultdict(list)
    held_now: dict[str, list[str]] = defaultdict(list)
    unattributed = 0
    total = 0
    kept = 0
    for memory in memories:
        total += 1
        owner = attribution.owner(memory)
        if owner is None:
            unattributed += memory.current
        else:
            held[owner[0]].append(owner[1])
            if memory.current:
                held_now[owner[0]].append(owner[1])
        kept += not memory.current
    with_history = [f for f in dataset.facts if len(f.values) > 1]
    stale = sorted(
        f.id for f in with_history if any(v != f.current for v in held_now.get(f.id, []))
    )
    lost = sorted(f.id for f in dataset.facts if f.current not in held.get(f.id, []))
    kind_of = {f.id: f.kind for f in dataset.facts}
    lost_by_kind: dict[str, int] = defaultdict(int)
    for fact_id in lost:
        lost_by_kind[kind_of[fact_id]] += 1
    return {
        "memories_per_fact": sum(map(len, held_now.values())) / len(dataset.facts),
        "stale_values": len(stale),
        "facts_lost": len(lost),
        "memories": total,
        "superseded_or_folded_memories": kept,
        "unattributed_memories": unattributed,
        "facts": len(dataset.facts),
        "facts_with_changed_values": len(with_history),
        "facts_lost_per_kind": dict(sorted(lost_by_kind.items())),
        "stale_fact_ids": stale,
        "lost_fact_ids": lost,
    }

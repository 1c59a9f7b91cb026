"""The verdict of a load run: what the clients were told against what the store holds.

A pure function of its inputs (no I/O), so it is unit-tested on its own
(tests/bench/test_load_checker.py). Three properties, per fact:

* duplicates: a fact lives in exactly one memory. Every memory whose text names the fact (its
  two made-up words), in any wording or value, counts; more than one is a duplicate.
* lost: a fact the bridge acknowledged (any successful memory_add of it) still has a memory.
  An acknowledgement is a promise to the agent, whatever the helpers were doing at the time.
* stale: every memory of the fact holds its latest value, the value of the acknowledgement
  that came back last. The workload serialises value changes per fact, so "last" is
  well-defined. A value-bearing add that failed or timed out may or may not have landed; when
  one was sent after the latest acknowledgement was, its value is accepted too and the fact is
  counted as ambiguous instead of stale.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.load.facts import tokens, values_in


@dataclass(frozen=True)
class Ack:
    """A memory_add the bridge answered without error."""

    fact_id: str
    op: str
    value: str
    action: str
    memory_ids: tuple[str, ...]
    sent_at: float
    acked_at: float


@dataclass(frozen=True)
class Unacked:
    """A memory_add that failed or timed out: its effect on the store is unknown."""

    fact_id: str
    op: str
    value: str
    sent_at: float


@dataclass(frozen=True)
class Stored:
    """One memory as mem0-local lists it."""

    memory_id: str
    namespace: str
    text: str


@dataclass(frozen=True)
class FactSpec:
    """What identifies a fact in stored text: words only its texts contain, and its project."""

    fact_id: str
    project: str
    markers: tuple[str, ...]


@dataclass
class FactVerdict:
    fact_id: str
    memories: list[Stored]
    acks: int
    latest: str | None
    accepted: frozenset[str]
    changed: bool
    duplicate: bool
    lost: bool
    stale: bool
    ambiguous: bool

    def describe(self, acks: Sequence[Ack]) -> dict[str, Any]:
        """A violating fact with the evidence needed to debug it (for the JSON result)."""
        return {
            "fact_id": self.fact_id,
            "latest": self.latest,
            "accepted": sorted(self.accepted),
            "stored": [{"id": m.memory_id, "text": m.text} for m in self.memories],
            "acks": [
                {
                    "op": a.op,
                    "value": a.value,
                    "action": a.action,
                    "ids": list(a.memory_ids),
                    "sent": round(a.sent_at, 3),
                    "acked": round(a.acked_at, 3),
                }
                for a in acks
            ],
        }


@dataclass
class CheckResult:
    facts: dict[str, FactVerdict]
    #: Stored memories naming no fact, or more than one (a merge of two facts).
    unidentified: list[Stored] = field(default_factory=list)
    #: Memories of a fact found outside the fact's own project.
    misplaced: list[Stored] = field(default_factory=list)

    def _count(self, flag: str) -> int:
        return sum(1 for verdict in self.facts.values() if getattr(verdict, flag))

    @property
    def acked_facts(self) -> int:
        return sum(1 for verdict in self.facts.values() if verdict.acks)

    @property
    def changed_facts(self) -> int:
        return self._count("changed")

    @property
    def duplicated_facts(self) -> int:
        return self._count("duplicate")

    @property
    def duplicate_memories(self) -> int:
        """Memories beyond the one each fact should have."""
        return sum(max(0, len(v.memories) - 1) for v in self.facts.values())

    @property
    def lost(self) -> int:
        return self._count("lost")

    @property
    def stale(self) -> int:
        return self._count("stale")

    @property
    def ambiguous(self) -> int:
        return self._count("ambiguous")

    @property
    def passed(self) -> bool:
        return not (self.duplicate_memories or self.lost or self.stale)

    def summary(self) -> dict[str, int]:
        return {
            "acked_facts": self.acked_facts,
            "changed_facts": self.changed_facts,
            "stored_memories": sum(len(v.memories) for v in self.facts.values())
            + len(self.unidentified),
            "duplicated_facts": self.duplicated_facts,
            "duplicate_memories": self.duplicate_memories,
            "lost": self.lost,
            "stale": self.stale,
            "ambiguous": self.ambiguous,
            "unidentified": len(self.unidentified),
            "misplaced": len(self.misplaced),
        }


def _owner(text: str, by_marker: Mapping[str, str], markers: Mapping[str, set[str]]) -> str | None:
    """The one fact all of whose markers the text contains, else None."""
    words = set(tokens(text))
    owners = {by_marker[w] for w in words if w in by_marker}
    complete = [f for f in owners if markers[f] <= words]
    return complete[0] if len(complete) == 1 else None


def check(
    specs: Iterable[FactSpec],
    acks: Iterable[Ack],
    unacked: Iterable[Unacked],
    stored: Iterable[Stored],
) -> CheckResult:
    """Judge the store against the acknowledgements (see the module docstring)."""
    spec_of = {s.fact_id: s for s in specs}
    markers = {s.fact_id: set(s.markers) for s in spec_of.values()}
    by_marker = {m: s.fact_id for s in spec_of.values() for m in s.markers}
    acks_of: dict[str, list[Ack]] = defaultdict(list)
    for ack in acks:
        acks_of[ack.fact_id].append(ack)
    unacked_of: dict[str, list[Unacked]] = defaultdict(list)
    for attempt in unacked:
        unacked_of[attempt.fact_id].append(attempt)
    memories_of: dict[str, list[Stored]] = defaultdict(list)
    result = CheckResult(facts={})
    for memory in stored:
        owner = _owner(memory.text, by_marker, markers)
        if owner is None:
            result.unidentified.append(memory)
            continue
        memories_of[owner].append(memory)
        if memory.namespace != spec_of[owner].project:
            result.misplaced.append(memory)

    for fact_id in sorted(set(acks_of) | set(memories_of) | set(unacked_of)):
        memories = memories_of.get(fact_id, [])
        fact_acks = sorted(acks_of.get(fact_id, []), key=lambda a: a.acked_at)
        latest_ack = fact_acks[-1] if fact_acks else None
        latest = latest_ack.value if latest_ack else None
        # An attempt sent after the latest acknowledged one was sent may have landed after it.
        pending = {
            u.value
            for u in unacked_of.get(fact_id, [])
            if latest_ack is None or u.sent_at > latest_ack.sent_at
        }
        accepted = frozenset({latest} if latest is not None else set()) | pending
        held = [values_in(m.text) for m in memories]
        exact = all(h == {latest} for h in held)
        tolerated = all(len(h) == 1 and h <= accepted for h in held)
        result.facts[fact_id] = FactVerdict(
            fact_id=fact_id,
            memories=memories,
            acks=len(fact_acks),
            latest=latest,
            accepted=accepted,
            changed=len({a.value for a in fact_acks}) > 1,
            duplicate=len(memories) > 1,
            lost=bool(fact_acks) and not memories,
            stale=bool(fact_acks) and bool(memories) and not tolerated,
            ambiguous=bool(fact_acks) and bool(memories) and tolerated and not exact,
        )
    return result

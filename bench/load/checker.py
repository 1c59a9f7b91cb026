"""The verdict of a load run: what the clients were told against what the store holds.

A pure function of its inputs (no I/O), so it is unit-tested on its own
(tests/bench/test_load_checker.py). A memory belongs to the fact whose two made-up words its
text contains. Facts have a lifetime (/work/lifetime-contract.md, issue 23): a change never
overwrites or deletes, it marks the old memory superseded in its metadata. So a memory is
**current** when its metadata's `superseded_by` and `folded_into` are both null/absent, and a
fact's **current memories** are its current memories that are not a `restates` wording of
another current memory of the same fact. Per fact:

* duplicate: more than one current memory (a fact stored twice as two live statements).
* lost: a fact the bridge acknowledged (any successful memory_add of it) has no memory at all,
  current or not. An acknowledgement is a promise to the agent, whatever the helpers were doing.
* not one current: an acknowledged fact whose current memories are not exactly one (none:
  every memory superseded or folded; two or more: a duplicate).
* stale: a current memory (restating wordings included: search may show any of them) holds a
  value other than the latest, the value of the acknowledgement that came back last. The
  workload serialises value changes per fact, so "last" is well-defined. A value-bearing add
  that failed or timed out may or may not have landed; when one was sent after the latest
  acknowledgement was, its value is accepted too and the fact is counted as ambiguous instead.
* older value first: asked about the fact after the run (memory_search through the bridge),
  the first hit that names the fact holds a value other than the latest (the accepted values
  as for stale). Searches during the run are counted the same way (`older_first_searches`),
  each against the values that could be latest while it ran: the latest acknowledged when it
  was sent, and those of adds in flight while it ran.
* unreadable: some value an add of the fact was acknowledged for can no longer be read: no
  stored memory of the fact (current or not) holds it, and no history of a memory id that add
  answered with (mem0's `GET /memories/{id}/history`) mentions it.

Gate (`CheckResult.passed`): no duplicates, nothing lost, nothing stale, no older value first
after the run, exactly one current memory per acknowledged fact, nothing unreadable.
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
    """One memory as mem0-local lists it (or as a search hit shows it), with its metadata."""

    memory_id: str
    namespace: str
    text: str
    metadata: Mapping[str, Any] | None = None

    def _meta(self, key: str) -> str | None:
        value = (self.metadata or {}).get(key)
        return str(value) if value not in (None, "") else None

    @property
    def superseded_by(self) -> str | None:
        return self._meta("superseded_by")

    @property
    def folded_into(self) -> str | None:
        return self._meta("folded_into")

    @property
    def restates(self) -> str | None:
        return self._meta("restates")

    @property
    def live(self) -> bool:
        """Current by the contract: neither superseded nor folded."""
        return self.superseded_by is None and self.folded_into is None


@dataclass(frozen=True)
class Searched:
    """A memory_search about one fact that answered: its hits in rank order."""

    fact_id: str
    sent_at: float
    answered_at: float
    hits: tuple[Stored, ...]


@dataclass(frozen=True)
class FactSpec:
    """What identifies a fact in stored text: words only its texts contain, and its project."""

    fact_id: str
    project: str
    markers: tuple[str, ...]


@dataclass
class FactVerdict:
    fact_id: str
    #: Every stored memory naming the fact, current or not.
    memories: list[Stored]
    #: The fact's current memories (not a restating wording of another current one).
    current: list[Stored]
    acks: int
    latest: str | None
    accepted: frozenset[str]
    changed: bool
    duplicate: bool
    lost: bool
    stale: bool
    ambiguous: bool
    not_one_current: bool = False
    #: The first hit naming the fact of the search after the run (None: none named it).
    first_hit: Stored | None = None
    searched: bool = False
    older_first: bool = False
    #: Acknowledged values neither a stored memory nor an acked id's history holds.
    unreachable: tuple[str, ...] = ()

    @property
    def unreadable(self) -> bool:
        return bool(self.unreachable)

    @property
    def search_missed(self) -> bool:
        """Searched after the run, but no hit named the fact (a retrieval miss, not a gate)."""
        return self.searched and self.first_hit is None

    def describe(self, acks: Sequence[Ack]) -> dict[str, Any]:
        """A violating fact with the evidence needed to debug it (for the JSON result)."""
        current = {m.memory_id for m in self.current}
        return {
            "fact_id": self.fact_id,
            "latest": self.latest,
            "accepted": sorted(self.accepted),
            "stored": [_describe_memory(m, m.memory_id in current) for m in self.memories],
            "first_hit": None
            if self.first_hit is None
            else {"id": self.first_hit.memory_id, "text": self.first_hit.text},
            "unreachable": list(self.unreachable),
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


def _describe_memory(memory: Stored, current: bool) -> dict[str, Any]:
    described: dict[str, Any] = {"id": memory.memory_id, "text": memory.text, "current": current}
    for key in ("superseded_by", "folded_into", "restates"):
        if getattr(memory, key) is not None:
            described[key] = getattr(memory, key)
    return described


@dataclass(frozen=True)
class SearchVerdict:
    """A search during the run whose first hit naming the fact held an older value."""

    search: Searched
    first_hit: Stored
    accepted: frozenset[str]
    #: The rank (1 first) among the hits of the first one holding an accepted value; None
    #: when no hit did: the search never saw the latest value, so no ordering could fix it.
    accepted_rank: int | None = None

    def describe(self) -> dict[str, Any]:
        return {
            "fact_id": self.search.fact_id,
            "sent": round(self.search.sent_at, 3),
            "answered": round(self.search.answered_at, 3),
            "accepted": sorted(self.accepted),
            "first_hit": {"id": self.first_hit.memory_id, "text": self.first_hit.text},
            "accepted_rank": self.accepted_rank,
            "hits": [h.text for h in self.search.hits[: self.accepted_rank or 3]],
        }


@dataclass
class CheckResult:
    facts: dict[str, FactVerdict]
    #: Stored memories naming no fact, or more than one (a merge of two facts).
    unidentified: list[Stored] = field(default_factory=list)
    #: Memories of a fact found outside the fact's own project.
    misplaced: list[Stored] = field(default_factory=list)
    #: Searches during the run that could be judged (the fact had a value by then and a hit
    #: named it), and those of them whose first naming hit held an older value.
    searches_judged: int = 0
    older_first_during_run: list[SearchVerdict] = field(default_factory=list)

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
        """Current memories beyond the one each fact should have."""
        return sum(max(0, len(v.current) - 1) for v in self.facts.values())

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
    def not_one_current(self) -> int:
        return self._count("not_one_current")

    @property
    def older_value_first(self) -> int:
        return self._count("older_first")

    @property
    def unreadable(self) -> int:
        return self._count("unreadable")

    @property
    def passed(self) -> bool:
        return not (
            self.duplicate_memories
            or self.lost
            or self.stale
            or self.older_value_first
            or self.not_one_current
            or self.unreadable
        )

    def summary(self) -> dict[str, int]:
        memories = [m for v in self.facts.values() for m in v.memories]
        return {
            "acked_facts": self.acked_facts,
            "changed_facts": self.changed_facts,
            "stored_memories": len(memories) + len(self.unidentified),
            "current_memories": sum(len(v.current) for v in self.facts.values()),
            "superseded_memories": sum(1 for m in memories if m.superseded_by is not None),
            "folded_memories": sum(1 for m in memories if m.folded_into is not None),
            "restating_memories": sum(1 for m in memories if m.live and m.restates is not None),
            "duplicated_facts": self.duplicated_facts,
            "duplicate_memories": self.duplicate_memories,
            "lost": self.lost,
            "stale": self.stale,
            "ambiguous": self.ambiguous,
            "not_one_current": self.not_one_current,
            "older_value_first": self.older_value_first,
            "searched_after_run": self._count("searched"),
            "search_missed_after_run": self._count("search_missed"),
            "older_value_first_during_run": len(self.older_first_during_run),
            "older_value_first_during_run_latest_not_found": sum(
                v.accepted_rank is None for v in self.older_first_during_run
            ),
            "searches_judged_during_run": self.searches_judged,
            "unreadable": self.unreadable,
            "unidentified": len(self.unidentified),
            "misplaced": len(self.misplaced),
        }


def _owner(text: str, by_marker: Mapping[str, str], markers: Mapping[str, set[str]]) -> str | None:
    """The one fact all of whose markers the text contains, else None."""
    words = set(tokens(text))
    owners = {by_marker[w] for w in words if w in by_marker}
    complete = [f for f in owners if markers[f] <= words]
    return complete[0] if len(complete) == 1 else None


def current_memories(memories: Sequence[Stored]) -> list[Stored]:
    """A fact's current memories: live ones, less those restating another live one of the
    same fact (`memories` are one fact's)."""
    live = [m for m in memories if m.live]
    live_ids = {m.memory_id for m in live}
    return [m for m in live if m.restates is None or m.restates not in live_ids - {m.memory_id}]


def _holds_accepted(text: str, latest: str | None, accepted: frozenset[str]) -> tuple[bool, bool]:
    """(tolerated, exact): the text holds one accepted value; it holds exactly the latest."""
    held = values_in(text)
    return len(held) == 1 and held <= accepted, held == {latest}


def _accepted(acks: Sequence[Ack], unacked: Sequence[Unacked]) -> tuple[Ack | None, frozenset[str]]:
    """The latest acknowledgement (by ack time) and the values the store may hold last."""
    latest_ack = max(acks, key=lambda a: a.acked_at) if acks else None
    # An attempt sent after the latest acknowledged one was sent may have landed after it.
    pending = {u.value for u in unacked if latest_ack is None or u.sent_at > latest_ack.sent_at}
    latest = {latest_ack.value} if latest_ack is not None else set()
    return latest_ack, frozenset(latest | pending)


def accepted_during(
    search: Searched, acks: Sequence[Ack], unacked: Sequence[Unacked]
) -> frozenset[str]:
    """The values a fact may have held while `search` ran: its latest acknowledged value when
    the search was sent (with failed adds sent after that one, which may have landed), and the
    values of adds in flight while it ran (sent before it answered, not acked before it was
    sent). Empty when the fact had no value yet."""
    before = [a for a in acks if a.acked_at <= search.sent_at]
    _, accepted = _accepted(before, [u for u in unacked if u.sent_at < search.answered_at])
    in_flight = {
        a.value for a in acks if a.sent_at < search.answered_at and a.acked_at > search.sent_at
    }
    return accepted | in_flight


def _holds(hit: Stored, values: frozenset[str]) -> bool:
    """Does `hit` state exactly one value, one of `values`?"""
    found = values_in(hit.text)
    return len(found) == 1 and found <= values


def first_naming_hit(
    hits: Iterable[Stored],
    fact_id: str,
    by_marker: Mapping[str, str],
    markers: Mapping[str, set[str]],
) -> Stored | None:
    """The best-ranked hit whose text names `fact_id` (and no other fact)."""
    for hit in hits:
        if _owner(hit.text, by_marker, markers) == fact_id:
            return hit
    return None


def history_wanted(
    specs: Iterable[FactSpec], acks: Iterable[Ack], stored: Iterable[Stored]
) -> set[str]:
    """The memory ids whose history the check needs: those answered for an acknowledged value
    that no stored memory of its fact holds (every other value is readable already)."""
    markers = {s.fact_id: set(s.markers) for s in specs}
    by_marker = {m: f for f, words in markers.items() for m in words}
    held: dict[str, set[str]] = defaultdict(set)
    for memory in stored:
        owner = _owner(memory.text, by_marker, markers)
        if owner is not None:
            held[owner] |= values_in(memory.text)
    return {
        memory_id
        for ack in acks
        if ack.value not in held.get(ack.fact_id, set())
        for memory_id in ack.memory_ids
    }


def check(
    specs: Iterable[FactSpec],
    acks: Iterable[Ack],
    unacked: Iterable[Unacked],
    stored: Iterable[Stored],
    *,
    searches: Iterable[Searched] = (),
    final_searches: Mapping[str, Sequence[Stored]] | None = None,
    histories: Mapping[str, Sequence[str]] | None = None,
) -> CheckResult:
    """Judge the store against the acknowledgements (see the module docstring).

    `searches`: the workload's answered searches; `final_searches`: per fact id, the hits of
    the search about it after the run (a fact missing was not searched); `histories`: per
    memory id, the texts its history mentions (old and new text of every event).
    """
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
    final = final_searches or {}
    history_of = histories or {}

    for fact_id in sorted(set(acks_of) | set(memories_of) | set(unacked_of)):
        memories = memories_of.get(fact_id, [])
        current = current_memories(memories)
        fact_acks = sorted(acks_of.get(fact_id, []), key=lambda a: a.acked_at)
        latest_ack, accepted = _accepted(fact_acks, unacked_of.get(fact_id, []))
        latest = latest_ack.value if latest_ack else None
        # Every live memory counts for staleness: search may show any wording of the fact.
        held = [_holds_accepted(m.text, latest, accepted) for m in memories if m.live]
        exact = all(e for _, e in held)
        tolerated = all(t for t, _ in held)
        searched = fact_id in final
        first_hit = (
            first_naming_hit(final[fact_id], fact_id, by_marker, markers) if searched else None
        )
        older_first = (
            bool(fact_acks)
            and first_hit is not None
            and not _holds_accepted(first_hit.text, latest, accepted)[0]
        )
        readable = {v for m in memories for v in values_in(m.text)}
        unreachable = sorted(
            {
                a.value
                for a in fact_acks
                if a.value not in readable
                and not any(
                    a.value in values_in(text)
                    for memory_id in a.memory_ids
                    for text in history_of.get(memory_id, ())
                )
            }
        )
        result.facts[fact_id] = FactVerdict(
            fact_id=fact_id,
            memories=memories,
            current=current,
            acks=len(fact_acks),
            latest=latest,
            accepted=accepted,
            changed=len({a.value for a in fact_acks}) > 1,
            duplicate=len(current) > 1,
            lost=bool(fact_acks) and not memories,
            stale=bool(fact_acks) and bool(held) and not tolerated,
            ambiguous=bool(fact_acks) and bool(held) and tolerated and not exact,
            not_one_current=bool(fact_acks) and len(current) != 1,
            first_hit=first_hit,
            searched=searched,
            older_first=older_first,
            unreachable=tuple(unreachable),
        )

    for search in searches:
        hit = first_naming_hit(search.hits, search.fact_id, by_marker, markers)
        during = accepted_during(
            search, acks_of.get(search.fact_id, []), unacked_of.get(search.fact_id, [])
        )
        if hit is None or not during:
            continue
        result.searches_judged += 1
        if not _holds(hit, during):
            rank = next(
                (
                    i
                    for i, h in enumerate(search.hits, 1)
                    if _owner(h.text, by_marker, markers) == search.fact_id and _holds(h, during)
                ),
                None,
            )
            result.older_first_during_run.append(SearchVerdict(search, hit, during, rank))
    return result

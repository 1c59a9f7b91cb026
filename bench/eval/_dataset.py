"""The eval dataset as typed records: loading `bench/data/eval_dataset.json` and checking it.

The JSON is documented in `bench/data/README.md`. Loading never trusts it: `validate` reports
every broken promise (unknown kinds, dangling gold ids, duplicate ids, events out of order, too
few facts or queries of a kind), so a hand edit that breaks the eval fails its test instead of
skewing the numbers.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, fields
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
DATASET_PATH = DATA_DIR / "eval_dataset.json"

GLOBAL = "global"

#: The query kinds, each reported separately (their names are the `kinds.<kind>` keys).
KINDS = (
    "static",
    "reconfirmed",
    "changed",
    "reverted",
    "stale_near_duplicate",
    "other_project",
    "lookalike",
)
FORMS = ("statement", "question")

#: What the issue asks of the dataset as a whole; per kind, enough queries to be worth a row.
MIN_FACTS = 400
MIN_QUERIES = 300
MIN_QUERIES_PER_KIND = 30


@dataclass(frozen=True)
class Fact:
    """One durable fact: a subject's attribute in one scope, whose value may change over time.

    `values` lists every value it was ever stated with, in order of first statement; `current`
    is the value it holds at the end of the replay (what a search must return).
    `role` says why the fact is there: `gold` (some query asks for it), `neighbour` (the
    once-said near-neighbour of a reconfirmed fact) or `background`.
    """

    id: str
    kind: str
    role: str
    scope: str
    subject: str
    attribute: str
    values: tuple[str, ...]
    current: str


@dataclass(frozen=True)
class Event:
    """One `memory_add` of the replay, at `time`, into `scope` (a project name or `global`)."""

    time: datetime
    scope: str
    fact: str
    value: str
    text: str


@dataclass(frozen=True)
class Query:
    """One search, asked from inside `project` (so project + global are searched), at the end."""

    id: str
    kind: str
    form: str
    project: str
    text: str
    gold: str


@dataclass(frozen=True)
class Dataset:
    version: int
    seed: int
    projects: tuple[str, ...]
    query_time: datetime
    facts: tuple[Fact, ...]
    events: tuple[Event, ...]
    queries: tuple[Query, ...]

    def _facts_by_id(self) -> dict[str, Fact]:
        return {f.id: f for f in self.facts}


_Record = TypeVar("_Record", Fact, Event, Query)


def _time(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        raise ValueError(f"timestamp without a time zone: {text!r}")
    return moment


def _record(kind: type[_Record], data: dict[str, Any], **read: Callable[[Any], Any]) -> _Record:
    """A record from its JSON object: each field from its key (KeyError when one is missing),
    through `read[field]` where given; keys that are no field are ignored."""
    return kind(**{f.name: read.get(f.name, _same)(data[f.name]) for f in fields(kind)})


def _same(value: Any) -> Any:
    return value


def _json(record: Fact | Event | Query) -> dict[str, Any]:
    """A record's JSON object: its fields in order, tuples as lists, times in ISO 8601."""
    return {f.name: _json_value(getattr(record, f.name)) for f in fields(record)}


def _json_value(value: Any) -> Any:
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def from_json(data: dict[str, Any]) -> Dataset:
    """Build the records from the parsed JSON (KeyError/ValueError on a malformed file)."""
    return Dataset(
        version=int(data["version"]),
        seed=int(data["seed"]),
        projects=tuple(data["projects"]),
        query_time=_time(data["query_time"]),
        facts=tuple(_record(Fact, f, values=tuple) for f in data["facts"]),
        events=tuple(_record(Event, e, time=_time) for e in data["events"]),
        queries=tuple(_record(Query, q) for q in data["queries"]),
    )


def to_json(dataset: Dataset) -> dict[str, Any]:
    """The JSON form `from_json` reads back (the generator writes this)."""
    return {
        "version": dataset.version,
        "seed": dataset.seed,
        "projects": list(dataset.projects),
        "query_time": dataset.query_time.isoformat(),
        "counts": counts(dataset),
        "facts": [_json(f) for f in dataset.facts],
        "events": [_json(e) for e in dataset.events],
        "queries": [_json(q) for q in dataset.queries],
    }


def counts(dataset: Dataset) -> dict[str, Any]:
    """Facts, events and queries in all and per kind (written into the JSON for readers)."""
    return {
        "facts": len(dataset.facts),
        "events": len(dataset.events),
        "queries": len(dataset.queries),
        "facts_per_kind": dict(sorted(Counter(f.kind for f in dataset.facts).items())),
        "queries_per_kind": dict(sorted(Counter(q.kind for q in dataset.queries).items())),
        "queries_per_form": dict(sorted(Counter(q.form for q in dataset.queries).items())),
        "facts_per_scope": dict(sorted(Counter(f.scope for f in dataset.facts).items())),
    }


def load(path: Path = DATASET_PATH) -> Dataset:
    return from_json(json.loads(path.read_text()))


def validate(
    dataset: Dataset,
    *,
    min_facts: int = MIN_FACTS,
    min_queries: int = MIN_QUERIES,
    min_queries_per_kind: int = MIN_QUERIES_PER_KIND,
) -> list[str]:
    """Every problem found, as sentences; an empty list means the dataset keeps its promises."""
    return [
        *_check_ids(dataset),
        *_check_facts(dataset),
        *_check_events(dataset),
        *_check_queries(dataset),
        *_check_sizes(dataset, min_facts, min_queries, min_queries_per_kind),
    ]


def _check_ids(dataset: Dataset) -> list[str]:
    return [
        f"{name} id {duplicate} is used {n} times"
        for name, ids in (
            ("fact", [f.id for f in dataset.facts]),
            ("query", [q.id for q in dataset.queries]),
        )
        for duplicate, n in Counter(ids).items()
        if n > 1
    ]


def _check_facts(dataset: Dataset) -> list[str]:
    problems: list[str] = []
    scopes = {*dataset.projects, GLOBAL}
    last_said = {e.fact: e.value for e in dataset.events}
    for f in dataset.facts:
        if f.kind not in KINDS:
            problems.append(f"fact {f.id} has unknown kind {f.kind!r}")
        if f.scope not in scopes:
            problems.append(f"fact {f.id} has unknown scope {f.scope!r}")
        if f.current not in f.values:
            problems.append(f"fact {f.id}: current value {f.current!r} is not among its values")
        if f.id not in last_said:
            problems.append(f"fact {f.id} is never stated")
        elif last_said[f.id] != f.current:
            problems.append(f"fact {f.id}: last stated {last_said[f.id]!r}, current {f.current!r}")
    return problems


def _check_events(dataset: Dataset) -> list[str]:
    problems: list[str] = []
    facts = dataset._facts_by_id()
    texts: dict[tuple[str, str], tuple[str, str]] = {}
    previous: datetime | None = None
    for i, e in enumerate(dataset.events):
        fact = facts.get(e.fact)
        if fact is None:
            problems.append(f"event {i} names unknown fact {e.fact}")
            continue
        if e.scope != fact.scope:
            problems.append(f"event {i} is in scope {e.scope}, its fact {e.fact} in {fact.scope}")
        if e.value not in fact.values or e.value not in e.text:
            problems.append(f"event {i} does not state a value of fact {e.fact}: {e.text!r}")
        owner = texts.setdefault((e.scope, e.text.casefold()), (e.fact, e.value))
        if owner != (e.fact, e.value):
            problems.append(f"event {i}'s text also states {owner}: {e.text!r}")
        if (previous is not None and e.time < previous) or e.time >= dataset.query_time:
            problems.append(f"event {i} is out of order (or not before the query time)")
        previous = e.time
    return problems


def _check_queries(dataset: Dataset) -> list[str]:
    problems: list[str] = []
    facts = dataset._facts_by_id()
    for q in dataset.queries:
        gold = facts.get(q.gold)
        if gold is None:
            problems.append(f"query {q.id} has unknown gold fact {q.gold}")
        elif gold.scope not in (q.project, GLOBAL):
            problems.append(f"query {q.id} asks from {q.project} for {gold.scope}'s fact {gold.id}")
        if q.kind not in KINDS or q.form not in FORMS:
            problems.append(f"query {q.id} has unknown kind {q.kind!r} or form {q.form!r}")
        if q.project not in dataset.projects:
            problems.append(f"query {q.id} is asked from unknown project {q.project!r}")
    return problems


def _check_sizes(
    dataset: Dataset, min_facts: int, min_queries: int, min_queries_per_kind: int
) -> list[str]:
    problems: list[str] = []
    if len(dataset.facts) < min_facts:
        problems.append(f"{len(dataset.facts)} facts, fewer than {min_facts}")
    if len(dataset.queries) < min_queries:
        problems.append(f"{len(dataset.queries)} queries, fewer than {min_queries}")
    per_kind = Counter(q.kind for q in dataset.queries)
    problems.extend(
        f"{per_kind[kind]} {kind} queries, fewer than {min_queries_per_kind}"
        for kind in KINDS
        if per_kind[kind] < min_queries_per_kind
    )
    return problems


def subset(dataset: Dataset, per_kind: int) -> Dataset:
    """The first `per_kind` queries of each kind with their facts, and the facts they compete
    with (a reconfirmed fact's neighbour, the other project's twin): a quick, smaller eval."""
    queries = [
        q for kind in KINDS for q in [q for q in dataset.queries if q.kind == kind][:per_kind]
    ]
    by_id = dataset._facts_by_id()
    gold = [by_id[q.gold] for q in queries]
    keep = {
        f.id
        for f in dataset.facts
        for g in gold
        if f.id == g.id
        or (
            f.kind == g.kind
            and f.attribute == g.attribute
            and (f.scope == g.scope or f.subject == g.subject)
        )
    }
    return Dataset(
        version=dataset.version,
        seed=dataset.seed,
        projects=dataset.projects,
        query_time=dataset.query_time,
        facts=tuple(f for f in dataset.facts if f.id in keep),
        events=tuple(e for e in dataset.events if e.fact in keep),
        queries=tuple(q for q in dataset.queries if q.gold in keep and q in queries),
    )

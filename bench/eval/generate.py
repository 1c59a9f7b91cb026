"""Write `bench/data/eval_dataset.json`: the eval's facts, their timed statements and queries.

`python -m bench.eval.generate` rewrites the file; a test checks that the committed file is
exactly what this writes, so the dataset is reviewed as code (its words in
`bench/data/eval_vocabulary.toml`, how it draws from them below) and as data.

The facts are attributes of subjects (services, data stores, jobs, the codebase) in five
projects, plus cross-project facts in `global`, written the way agents store them: one
self-contained sentence each, with the exact value (a port, a count, a time, a tool). Each
attribute has a canonical sentence, paraphrases (restatements say the same fact in other
words, as agents do), a question and a statement-style probe (how an agent searches with a
half sentence). A seeded RNG assigns (subject, attribute) slots to the kinds:

- `static`: said once; asked once, alternately as a question or as a statement probe.
- `reconfirmed`: said 2-6 times over weeks (paraphrases and, after the ranker's dedupe window,
  exact repeats), against a near-neighbour said once: the same attribute of another subject
  of the same project. No other fact of that project has that attribute, and the query does
  not name the subject ("Which port does the service listen on?"), so the two compete on
  equal terms and only the reconfirmation says which one the project keeps talking about.
- `changed`: value A, weeks later value B (in other words): B must come back, not A.
- `reverted`: A, then B, then A again: A must come back.
- `stale_near_duplicate`: A (said 1-3 times, long ago), then the same sentence with one value
  changed: the new one must come back, although the old one may carry more mentions.
- `other_project`: the same subject and attribute in two projects with different values; each
  project's query must get its own value (the other project's memory never comes back).
- `lookalike`: one subject, two attributes whose sentences look alike (port / metrics port,
  request / idle timeout, ...): two distinct facts that must never be merged.
"""

from __future__ import annotations

import json
import random
import tomllib
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from bench.eval._dataset import (
    DATA_DIR,
    DATASET_PATH,
    GLOBAL,
    Dataset,
    Event,
    Fact,
    Query,
    to_json,
    validate,
)

SEED = 12
VERSION = 1
START = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)
SPAN_DAYS = 180
QUERY_TIME = START + timedelta(days=SPAN_DAYS + 1)
#: The ranker's default dedupe window is 7 days: exact repeats are spaced further apart, so they
#: reach the bridge's reconcile step (a reconfirmation) instead of being dropped as duplicates.
REPEAT_GAP_DAYS = (8, 30)


@dataclass(frozen=True)
class Attribute:
    """How facts of one attribute are said and asked (`[attributes.<name>]` of the vocabulary).
    `{s}`/`{S}`: the subject (lower/upper first letter); `{v}`: the value. `vague` asks without
    naming the subject (reconfirmed)."""

    name: str
    kind: str  # the subject type it applies to: service, store, job, repo, global
    statements: tuple[str, ...]
    question: str
    probe: str
    values: tuple[str, ...]
    vague: str | None = None


#: The words the dataset is made of (attributes, subjects); how it draws from them is below.
VOCABULARY_PATH = DATA_DIR / "eval_vocabulary.toml"
_WORDS = tomllib.loads(VOCABULARY_PATH.read_text())

ATTRIBUTES: tuple[Attribute, ...] = tuple(
    Attribute(
        name,
        spec["kind"],
        tuple(spec["statements"]),
        spec["question"],
        spec["probe"],
        tuple(spec["values"]),
        spec.get("vague"),
    )
    for name, spec in _WORDS["attributes"].items()
)
ATTRIBUTE = {a.name: a for a in ATTRIBUTES}

#: Attribute pairs whose sentences look alike: distinct facts that must never be merged.
TWINS: tuple[tuple[str, str], ...] = tuple((a, b) for a, b in _WORDS["twins"]["pairs"])

#: Subjects every project has under the same name (the other_project kind's raw material).
COMMON = {kind: tuple(names) for kind, names in _WORDS["common_subjects"].items()}

PROJECTS: dict[str, dict[str, tuple[str, ...]]] = {
    project: {kind: tuple(names) for kind, names in subjects.items()}
    for project, subjects in _WORDS["projects"].items()
}

#: How many facts of each kind every project gets (global facts are all static).
PER_PROJECT = {
    "reconfirmed": 6,
    "changed": 8,
    "reverted": 6,
    "stale_near_duplicate": 8,
    "lookalike": 6,  # pairs: twice as many facts
    "static": 38,
}
OTHER_PROJECT_PAIRS = 15

Slot = tuple[str, str, str]  # (scope, subject, attribute)


def _subjects(project: str) -> dict[str, tuple[str, ...]]:
    own = PROJECTS[project]
    return {
        "service": (*COMMON["service"], *own["service"]),
        "store": (*COMMON["store"], *own["store"]),
        "job": own["job"],
        "repo": ("",),
    }


def _say(template: str, subject: str, value: str = "") -> str:
    upper = subject[:1].upper() + subject[1:]
    text = template.format(s=subject, S=upper, v=value)
    return text[:1].upper() + text[1:]


@dataclass
class _Builder:
    rng: random.Random
    facts: list[Fact] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    queries: list[Query] = field(default_factory=list)
    forms: int = 0

    def day(self, low: float, high: float) -> datetime:
        """A moment between `low` and `high` days after the start, on a whole minute."""
        minutes = self.rng.uniform(low, high) * 24 * 60
        return START + timedelta(minutes=int(minutes))

    def values(self, attribute: str, n: int) -> list[str]:
        return self.rng.sample(ATTRIBUTE[attribute].values, n)

    def fact(
        self, kind: str, role: str, slot: Slot, values: list[str], current: str | None = None
    ) -> Fact:
        scope, subject, attribute = slot
        fact = Fact(
            id=f"F{len(self.facts) + 1:04d}",
            kind=kind,
            role=role,
            scope=scope,
            subject=subject,
            attribute=attribute,
            values=tuple(dict.fromkeys(values)),
            current=current if current is not None else values[-1],
        )
        self.facts.append(fact)
        return fact

    def say(self, fact: Fact, value: str, when: datetime, template: int = 0) -> None:
        attribute = ATTRIBUTE[fact.attribute]
        text = _say(attribute.statements[template], fact.subject, value)
        self.events.append(Event(when, fact.scope, fact.id, value, text))

    def ask(self, fact: Fact, kind: str, project: str, form: str | None = None) -> None:
        attribute = ATTRIBUTE[fact.attribute]
        if form is None:
            form = ("question", "statement")[self.forms % 2]
            self.forms += 1
        if form == "vague":
            if attribute.vague is None:
                raise ValueError(f"{attribute.name} has no vague question")
            text, form = attribute.vague, "question"
        elif form == "question":
            text = _say(attribute.question, fact.subject)
        else:
            text = _say(attribute.probe, fact.subject)
        self.queries.append(
            Query(f"Q{len(self.queries) + 1:04d}", kind, form, project, text, fact.id)
        )


def _slots(project: str) -> list[Slot]:
    return [
        (project, subject, a.name)
        for kind, subjects in _subjects(project).items()
        for subject in subjects
        for a in ATTRIBUTES
        if a.kind == kind
    ]


class _Kinds(_Builder):
    """One method per kind, each taking its (subject, attribute) slots from what is free."""

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        self.free: dict[str, list[Slot]] = {p: _slots(p) for p in PROJECTS}

    def take(self, slot: Slot) -> None:
        self.free[slot[0]].remove(slot)

    def pick(self, project: str, n: int) -> list[Slot]:
        chosen = self.rng.sample(self.free[project], n)
        for slot in chosen:
            self.take(slot)
        return chosen

    def once(self, kind: str, slot: Slot, project: str) -> None:
        """A fact said once at a random time and asked once."""
        (value,) = self.values(slot[2], 1)
        fact = self.fact(kind, "gold", slot, [value])
        self.say(fact, value, self.day(0, SPAN_DAYS - 1), self.rng.randrange(3))
        self.ask(fact, kind, project)

    def other_project(self) -> None:
        """A common subject's attribute in two projects, different values; each one asked."""
        common = [
            (subject, a.name)
            for kind in ("service", "store")
            for subject in COMMON[kind]
            for a in ATTRIBUTES
            if a.kind == kind
        ] + [("", a.name) for a in ATTRIBUTES if a.kind == "repo"]
        for subject, attribute in self.rng.sample(common, OTHER_PROJECT_PAIRS):
            pair = self.rng.sample(list(PROJECTS), 2)
            values = self.values(attribute, 2)
            for project, value in zip(pair, values, strict=True):
                slot = (project, subject, attribute)
                self.take(slot)
                fact = self.fact("other_project", "gold", slot, [value])
                self.say(fact, value, self.day(0, SPAN_DAYS - 1), self.rng.randrange(3))
                self.ask(fact, "other_project", project, "question")

    def reconfirmed(self, project: str) -> None:
        """An attribute no other fact of the project has, on two services: one said 2-6 times,
        its neighbour once; the query does not name the service."""
        services = _subjects(project)["service"]
        vague = [a.name for a in ATTRIBUTES if a.vague is not None]
        for attribute in self.rng.sample(vague, PER_PROJECT["reconfirmed"]):
            gold_subject, neighbour_subject = self.rng.sample(services, 2)
            gold_value, neighbour_value = self.values(attribute, 2)
            gold = self.fact(
                "reconfirmed", "gold", (project, gold_subject, attribute), [gold_value]
            )
            when = self.day(0, 20)
            for i in range(self.rng.randint(2, 6)):
                self.say(gold, gold_value, when, i % 3)
                when += timedelta(days=self.rng.uniform(*REPEAT_GAP_DAYS))
            neighbour = self.fact(
                "reconfirmed",
                "neighbour",
                (project, neighbour_subject, attribute),
                [neighbour_value],
            )
            self.say(neighbour, neighbour_value, self.day(0, SPAN_DAYS - 1), self.rng.randrange(3))
            self.ask(gold, "reconfirmed", project, "vague")
            for slot in [s for s in self.free[project] if s[2] == attribute]:
                self.take(slot)

    def lookalike(self, project: str) -> None:
        """One subject, two attributes that read alike; both said once and asked."""
        pairs = [
            (subject, twin)
            for twin in TWINS
            for kind, names in _subjects(project).items()
            if ATTRIBUTE[twin[0]].kind == kind
            for subject in names
            if all((project, subject, t) in self.free[project] for t in twin)
        ]
        for subject, twin in self.rng.sample(pairs, PER_PROJECT["lookalike"]):
            slots = [(project, subject, attribute) for attribute in twin]
            if all(slot in self.free[project] for slot in slots):
                for slot in slots:
                    self.take(slot)
                    self.once("lookalike", slot, project)

    def changed(self, project: str) -> None:
        """A, then weeks later B in other words."""
        for slot in self.pick(project, PER_PROJECT["changed"]):
            old, new = self.values(slot[2], 2)
            fact = self.fact("changed", "gold", slot, [old, new])
            first = self.day(0, 90)
            self.say(fact, old, first, 0)
            later = first + timedelta(days=self.rng.uniform(20, 80))
            self.say(fact, new, later, self.rng.choice((1, 2)))
            self.ask(fact, "changed", project)

    def reverted(self, project: str) -> None:
        """A, B, then A again."""
        for slot in self.pick(project, PER_PROJECT["reverted"]):
            a_value, b_value = self.values(slot[2], 2)
            fact = self.fact("reverted", "gold", slot, [a_value, b_value, a_value], a_value)
            when = self.day(0, 60)
            for template, value in enumerate((a_value, b_value, a_value)):
                self.say(fact, value, when, template)
                when += timedelta(days=self.rng.uniform(15, 45))
            self.ask(fact, "reverted", project)

    def stale_near_duplicate(self, project: str) -> None:
        """A said 1-3 times long ago, then the same sentence with the new value."""
        for slot in self.pick(project, PER_PROJECT["stale_near_duplicate"]):
            old, new = self.values(slot[2], 2)
            fact = self.fact("stale_near_duplicate", "gold", slot, [old, new])
            when = self.day(0, 30)
            template = self.rng.randrange(3)
            for _ in range(self.rng.randint(1, 3)):
                self.say(fact, old, when, template)
                when += timedelta(days=self.rng.uniform(*REPEAT_GAP_DAYS))
            self.say(fact, new, self.day((when - START).days + 10, SPAN_DAYS - 1), template)
            self.ask(fact, "stale_near_duplicate", project)

    def static(self, project: str) -> None:
        for slot in self.pick(project, PER_PROJECT["static"]):
            self.once("static", slot, project)

    def global_facts(self) -> None:
        """Every global attribute once, asked from a random project (search merges global)."""
        for attribute in [a for a in ATTRIBUTES if a.kind == "global"]:
            slot = (GLOBAL, "", attribute.name)
            self.once("static", slot, self.rng.choice(list(PROJECTS)))


def generate(seed: int = SEED) -> Dataset:
    kinds = _Kinds(random.Random(seed))
    kinds.other_project()
    for project in PROJECTS:
        kinds.reconfirmed(project)
        kinds.lookalike(project)
        kinds.changed(project)
        kinds.reverted(project)
        kinds.stale_near_duplicate(project)
        kinds.static(project)
    kinds.global_facts()
    events = sorted(kinds.events, key=lambda e: e.time)  # stable: a fact's own order is kept
    return Dataset(
        version=VERSION,
        seed=seed,
        projects=tuple(PROJECTS),
        query_time=QUERY_TIME,
        facts=tuple(kinds.facts),
        events=tuple(events),
        queries=tuple(kinds.queries),
    )


def render(dataset: Dataset) -> str:
    return json.dumps(to_json(dataset), indent=1, ensure_ascii=False) + "\n"


def main() -> None:
    dataset = generate()
    problems = validate(dataset)
    if problems:
        raise SystemExit("the generated dataset is invalid:\n" + "\n".join(problems))
    DATASET_PATH.parent.mkdir(parents=True, exist_ok=True)
    DATASET_PATH.write_text(render(dataset))
    print(f"wrote {DATASET_PATH}: {json.dumps(to_json(dataset)['counts'])}")


if __name__ == "__main__":
    main()

"""The facts the load clients write: stable ids, several wordings, several values each.

The texts are built for the fake judge's rule (tests/fakes/judge_responder.py), so that what
the *right* answer is never depends on luck:

* a fact's content words are two made-up words no other fact uses, plus at most one shared
  word: its kind (`port`, `version`, ...) in the plain `TEMPLATES`, the kind or one verb
  (`moved`, `back`, `used`, `uses`) in the `NEW_TEMPLATES` agents use for a change, a change
  back and a restatement; every other word is a stop word (`now`, `by`, `on`, ...). Two
  wordings of one fact therefore share both made-up words (overlap >= 2/3), and two different
  facts share at most that one word (overlap <= 1/3 < 0.5). A wording with both the kind and
  a verb ("X moved to port N") would break this: two facts of one kind in that wording would
  share two of four words, and the fake judge calls 0.5 related, so the verb wordings leave
  the kind to the value's shape ("X moved to 9443");
* the value is the only token with a digit.

So the judge calls two wordings with the same value SAME (a restatement must reinforce), two
with different values SUPERSEDES (a change must update in place), and two facts UNRELATED.
`tests/bench/test_load_facts.py` checks exactly that against the fake judge's own rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: (kind word, values in the order a change walks them). Values carry digits; kinds do not.
KINDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("port", ("8080", "9000", "9443")),
    ("version", ("1.4.2", "1.5.0", "2.0.1")),
    ("timeout", ("30s", "45s", "90s")),
    ("replicas", ("3", "5", "7")),
)

#: Ways to say "the <kind> of <a b> is <value>" using stop words only besides the fact's own
#: three content words (see the module docstring for why).
TEMPLATES: tuple[str, ...] = (
    "The {a} {b} {kind} is {value}.",
    "Our {a} {b} {kind} is now {value}.",
    "{value} is the {kind} of the {a} {b}.",
    "The {kind} of our {a} {b} is {value}.",
    "For the {a} {b}, the {kind} is {value}.",
    "As of now the {a} {b} has {kind} {value}.",
)

#: How agents word a change, a change back and a restatement when they do not repeat the
#: original sentence: a verb (never together with the kind, see the module docstring) or stop
#: words only, the value first, in the middle or last.
CHANGE_TEMPLATES: tuple[str, ...] = (
    "The {a} {b} moved to {value}.",
    "{value} is now used by the {a} {b}.",
    "From now on the {a} {b} has {kind} {value}.",
)
BACK_TEMPLATES: tuple[str, ...] = (
    "The {a} {b} is back on {value}.",
    "Back to {value} for the {a} {b}.",
    "The {a} {b} has {kind} {value} now.",
)
RESTATE_TEMPLATES: tuple[str, ...] = (
    "{value} is used by the {a} {b}.",
    "The {a} {b} is on {kind} {value}.",
    "The {a} {b} uses {value}.",
)
NEW_TEMPLATES: tuple[str, ...] = CHANGE_TEMPLATES + BACK_TEMPLATES + RESTATE_TEMPLATES
#: Every wording a fact has: `Fact.text(wording, ...)` indexes this (plain ones first).
WORDINGS: tuple[str, ...] = TEMPLATES + NEW_TEMPLATES
#: The indices into WORDINGS of the new-style wordings for each workload operation.
NEW_WORDINGS: dict[str, tuple[int, ...]] = {
    op: tuple(WORDINGS.index(t) for t in templates)
    for op, templates in (
        ("change", CHANGE_TEMPLATES),
        ("change_back", BACK_TEMPLATES),
        ("restate", RESTATE_TEMPLATES),
    )
}

_CONSONANTS = "bdfgklmnprtvz"
_VOWELS = "aeiou"
_SYLLABLES = len(_CONSONANTS) * len(_VOWELS)
_WORDS = _SYLLABLES**3
#: Coprime with _WORDS, so `n -> n * _SCATTER % _WORDS` is a bijection that makes neighbouring
#: words differ in every syllable (MiniLM would find "zubaba" and "kubaba" close).
_SCATTER = 7919
#: The fake judge's tokens: words joined across `.`/`:` so `1.4.2` stays one value.
_TOKEN = re.compile(r"\w+(?:[.:]\w+)*")


def made_up_word(n: int) -> str:
    """The n-th word of three consonant-vowel syllables: distinct per n, no digit, no final `s`
    (the judge's stemmer would fold it), and no stop word."""
    if not 0 <= n < _WORDS:
        raise ValueError("word index out of range")
    n = (n * _SCATTER + 1) % _WORDS
    syllables = []
    for _ in range(3):
        n, c = divmod(n, len(_CONSONANTS))
        n, v = divmod(n, len(_VOWELS))
        syllables.append(_CONSONANTS[c] + _VOWELS[v])
    return "".join(syllables)


@dataclass(frozen=True)
class Fact:
    """One fact of the pool; `fact_id` is stable for the run and names its project."""

    fact_id: str
    project: str
    words: tuple[str, str]
    kind: str
    values: tuple[str, ...]

    def text(self, wording: int, value: int) -> str:
        a, b = self.words
        template = WORDINGS[wording % len(WORDINGS)]
        sentence = template.format(a=a, b=b, kind=self.kind, value=self.values[value])
        return sentence[:1].upper() + sentence[1:]

    def question(self) -> str:
        a, b = self.words
        return f"What is the {self.kind} of the {a} {b}?"


def fact_pool(count: int, projects: tuple[str, ...], *, offset: int = 0) -> list[Fact]:
    """`count` facts spread round-robin over `projects`; `offset` shifts the vocabulary, so each
    run of one process writes words no earlier run wrote (no judge cache or ranker record
    carries over between runs)."""
    facts = []
    for i in range(count):
        kind, values = KINDS[i % len(KINDS)]
        project = projects[i % len(projects)]
        n = 2 * (offset + i)
        facts.append(
            Fact(
                fact_id=f"{project}/{i:03d}",
                project=project,
                words=(made_up_word(n), made_up_word(n + 1)),
                kind=kind,
                values=values,
            )
        )
    return facts


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def values_in(text: str) -> frozenset[str]:
    """The value tokens of a text (those with a digit), as the fake judge reads them."""
    return frozenset(t for t in tokens(text) if any(ch.isdigit() for ch in t))

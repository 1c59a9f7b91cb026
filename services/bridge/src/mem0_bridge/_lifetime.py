"""When a memory's value held: its validity spans, what superseded it, what it was folded into.

A change never overwrites or deletes a fact. The memory holding the old value is marked
superseded by the one holding the new value, with the span during which it held; a change-back
makes the older memory current again (a second span). A restatement stored on its own and later
folded into the memory it restates is marked, not removed, so its id keeps answering. Everything
lives in the memory's mem0 metadata, which both mem0-local and mem0's official server keep
through add, get, list, search and update, so no other store is needed:

- `validity`: the spans `[from, until]` (RFC 3339; `until` null while it holds), oldest first;
  `valid_from` / `valid_until` repeat the newest span for readers of the raw metadata;
- `superseded_by`: the memory that replaced this value; `supersedes`: the ones this replaced;
- `folded_into`: the memory this restatement was folded into;
- `restates`: the memory this one says again in other words (kept apart, shown as one fact);
  `wordings`: the memories that restate this one (superseded with it);
- `stated_at`: when a restatement last said its value again (a value stored unjudged before
  that and reconciled after it is the older one);
- `unjudged`: true while the memory waits for the reconciler (stored while no verdict could be
  had), so that search can rank it above the older memories that share most of its words.

A memory without these fields (stored before them, or by another client) is current since it was
created.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

from mem0_common import linked_groups
from mem0mcp.contract import MAX_ID_CHARS

VALIDITY = "validity"
VALID_FROM = "valid_from"
VALID_UNTIL = "valid_until"
SUPERSEDED_BY = "superseded_by"
SUPERSEDES = "supersedes"
FOLDED_INTO = "folded_into"
RESTATES = "restates"
WORDINGS = "wordings"
STATED_AT = "stated_at"
UNJUDGED = "unjudged"

#: Spans kept per memory: a fact changed back and forth forever keeps its latest spans.
MAX_SPANS = 32
#: Ids kept in `supersedes`.
MAX_SUPERSEDES = 16

Span = tuple[datetime, datetime | None]
_T = TypeVar("_T")


def parse_time(value: object) -> datetime | None:
    """An RFC 3339 time as an aware datetime (UTC when no offset is given), else None."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def said_by(said: datetime | None, moment: datetime | None) -> bool:
    """Was a value last said at `said` said by `moment`, at it or before? An unknown time
    counts as yes: a memory without times is taken as said before anything judged with it."""
    return said is None or moment is None or said <= moment


def rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat()


def _memory_id(value: object) -> str | None:
    return value if isinstance(value, str) and 0 < len(value) <= MAX_ID_CHARS else None


def _spans(value: object) -> tuple[Span, ...]:
    if not isinstance(value, list):
        return ()
    spans: list[Span] = []
    for item in value:
        if not isinstance(item, list | tuple) or len(item) != 2:
            continue
        start, end = parse_time(item[0]), parse_time(item[1])
        if start is not None and (item[1] is None or end is not None):
            spans.append((start, end))
    return tuple(spans)


@dataclass(frozen=True)
class Lifetime:
    """What a memory's metadata says about when its value held (see the module doc)."""

    spans: tuple[Span, ...]
    superseded_by: str | None = None
    supersedes: tuple[str, ...] = ()
    folded_into: str | None = None
    restates: str | None = None
    wordings: tuple[str, ...] = ()
    #: When its value was last stated again (a restatement reinforced it), if after it began.
    stated_at: datetime | None = None
    #: Stored without a verdict, and not reconciled yet.
    unjudged: bool = False

    @classmethod
    def of(cls, metadata: Mapping[str, Any], created_at: str | None) -> Lifetime:
        """Read the fields from `metadata`; a memory without spans held since `created_at`
        (until it was superseded, when that is all it says)."""
        spans = _spans(metadata.get(VALIDITY))
        superseded_by = _memory_id(metadata.get(SUPERSEDED_BY))
        if not spans:
            start = parse_time(created_at)
            until = parse_time(metadata.get(VALID_UNTIL))
            spans = () if start is None else ((start, until),)
        supersedes = metadata.get(SUPERSEDES)
        wordings = metadata.get(WORDINGS)
        return cls(
            spans=spans,
            superseded_by=superseded_by,
            supersedes=tuple(
                i for i in map(_memory_id, supersedes if isinstance(supersedes, list) else ()) if i
            ),
            folded_into=_memory_id(metadata.get(FOLDED_INTO)),
            restates=_memory_id(metadata.get(RESTATES)),
            wordings=tuple(
                i for i in map(_memory_id, wordings if isinstance(wordings, list) else ()) if i
            ),
            stated_at=parse_time(metadata.get(STATED_AT)),
            unjudged=metadata.get(UNJUDGED) is True,
        )

    @property
    def wording_links(self) -> tuple[str, ...]:
        """The memories linked to this one as wordings of one fact, either way round."""
        return (*self.wordings, *((self.restates,) if self.restates else ()))

    @property
    def current(self) -> bool:
        """Does the memory hold its fact's value now (neither superseded nor folded)?"""
        return self.superseded_by is None and self.folded_into is None

    @property
    def onward(self) -> str | None:
        """The next link of its fact's chain: the memory that superseded it, or that it was
        folded into; None while it is current."""
        return self.superseded_by or self.folded_into

    @property
    def valid_from(self) -> datetime | None:
        return self.spans[-1][0] if self.spans else None

    @property
    def said_at(self) -> datetime | None:
        """When its value was last said: when it began to hold, or a later restatement."""
        since = self.valid_from
        if since is None or (self.stated_at is not None and self.stated_at > since):
            return self.stated_at
        return since

    @property
    def valid_until(self) -> datetime | None:
        return None if self.current or not self.spans else self.spans[-1][1]

    def held_at(self, moment: datetime) -> bool:
        """Was the value current at `moment`? A folded memory never answers for itself."""
        if self.folded_into is not None:
            return False
        for start, end in self.spans:
            if start <= moment and (end is None or moment < end):
                return not (end is None and self.superseded_by is not None)
        return False

    def _written(self, spans: Sequence[Span], **fields: object) -> dict[str, Any]:
        kept = list(spans)[-MAX_SPANS:]
        start, end = kept[-1] if kept else (None, None)
        return {
            VALIDITY: [[rfc3339(s), None if e is None else rfc3339(e)] for s, e in kept],
            VALID_FROM: None if start is None else rfc3339(start),
            VALID_UNTIL: None if end is None else rfc3339(end),
            **fields,
        }

    def superseded(self, by: str, at: datetime) -> dict[str, Any]:
        """The metadata that marks this memory superseded by `by` from `at` on."""
        spans = list(self.spans)
        if spans and spans[-1][1] is None:
            start = spans[-1][0]
            spans[-1] = (start, max(at, start))
        return self._written(spans, **{SUPERSEDED_BY: by})

    def reinstated(self, at: datetime, *, replacing: Iterable[str] = ()) -> dict[str, Any]:
        """The metadata that makes this memory current again from `at` on; `replacing`: the
        memories it supersedes now (added to `supersedes`)."""
        spans = list(self.spans)
        if not spans or spans[-1][1] is not None or not self.current:
            spans.append((at, None))
        return self._written(
            spans,
            **{
                SUPERSEDED_BY: None,
                FOLDED_INTO: None,
                SUPERSEDES: _merged(self.supersedes, replacing),
            },
        )

    @staticmethod
    def stated(at: datetime) -> dict[str, Any]:
        """The metadata that records its value stated again at `at`."""
        return {STATED_AT: rfc3339(at)}

    def worded(self, *wordings: str) -> dict[str, Any]:
        """The metadata that records `wordings` as memories restating this one."""
        return {WORDINGS: _merged(self.wordings, wordings)}

    def folded(self, into: str, at: datetime) -> dict[str, Any]:
        """The metadata that folds this memory (a restatement) into `into`."""
        spans = list(self.spans)
        if spans and spans[-1][1] is None:
            spans[-1] = (spans[-1][0], max(at, spans[-1][0]))
        return self._written(spans, **{FOLDED_INTO: into})


def _merged(kept: Iterable[str], added: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(itertools.chain(kept, added)))[-MAX_SUPERSEDES:]


def fresh(
    at: datetime,
    *,
    supersedes: Iterable[str] = (),
    restates: str | None = None,
    unjudged: bool = False,
) -> dict[str, Any]:
    """The metadata of a new memory, current from `at` on (`unjudged`: stored without the
    verdict it needed, until the reconciler judges it)."""
    fields: dict[str, Any] = {
        VALIDITY: [[rfc3339(at), None]],
        VALID_FROM: rfc3339(at),
    }
    if unjudged:
        fields[UNJUDGED] = True
    replaced = _merged((), supersedes)
    if replaced:
        fields[SUPERSEDES] = replaced
    if restates is not None:
        fields[RESTATES] = restates
    return fields


def superseded_last(
    items: Sequence[_T], key: Callable[[_T], str], superseder: Callable[[_T], str | None]
) -> list[_T]:
    """`items` (best first) with every superseded item moved just below the item that
    superseded it, directly or through a chain, when that one is among `items`.

    An item keeps its place unless a memory that superseded it ranks lower; then it follows
    that memory, below every superseder on its chain (the older the value, the lower).
    """
    position = {key(item): index for index, item in enumerate(items)}

    def order(item: _T) -> tuple[int, int, int]:
        lowest, depth, seen = position[key(item)], 0, {key(item)}
        successor = superseder(item)
        while successor is not None and successor in position and successor not in seen:
            seen.add(successor)
            depth += 1
            lowest = max(lowest, position[successor])
            successor = superseder(items[position[successor]])
        return lowest, depth, position[key(item)]

    return sorted(items, key=order)


def one_per_fact(
    items: Sequence[_T], key: Callable[[_T], str], restates: Callable[[_T], str | None]
) -> list[_T]:
    """`items` (best first) keeping only the best-ranked wording of each fact: an item that
    restates another item, or that another item restates (directly or through a chain), is
    dropped when one of them already ranks above it."""
    by_key = {key(item): item for item in items}

    def linked(node: str) -> tuple[str, ...]:
        target = restates(by_key[node])
        return () if target is None else (target,)

    group = linked_groups(list(by_key), linked)
    seen: set[str] = set()
    kept = []
    for item in items:
        if group[key(item)] not in seen:
            seen.add(group[key(item)])
            kept.append(item)
    return kept

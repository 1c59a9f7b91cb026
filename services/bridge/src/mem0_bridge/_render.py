"""What an agent reads: memories as hits and pins, and each result as compact text.

Hits are one tab-separated line each, `id<TAB>score<TAB>age<TAB>text`, with the age of the
newer of updated and created time, so staleness is visible at recall time without reading
timestamps.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from mem0_bridge._lifetime import rfc3339
from mem0_bridge._mem0 import Memory, newest_time
from mem0_bridge._models import (
    AddResult,
    ChangeResult,
    HistoryResult,
    Hit,
    ListResult,
    Pin,
    PinResult,
    PinsResult,
    ResetResult,
    SearchResult,
)


def format_age(created_at: str | None, updated_at: str | None, now: datetime | None = None) -> str:
    """`<1h`, `5h`, `3d`, `2mo`, `3y`; `?` when mem0 gave no usable time."""
    newest = newest_time(created_at, updated_at)
    if newest is None:
        return "?"
    hours = max(((now or datetime.now(UTC)) - newest).total_seconds(), 0.0) / 3600
    if hours < 1:
        return "<1h"
    if hours < 24:
        return f"{int(hours)}h"
    days = hours / 24
    if days < 60:
        return f"{int(days)}d"
    if days < 365:
        return f"{int(days // 30)}mo"
    return f"{int(days // 365)}y"


def to_hit(memory: Memory, *, score: float | None, mentions: int | None = None) -> Hit:
    life = memory.lifetime
    return Hit(
        id=memory.id,
        text=memory.text,
        namespace=memory.run_id,
        score=score,
        similarity=memory.score,
        mentions=mentions,
        age=format_age(memory.created_at, memory.updated_at),
        created_at=memory.created_at,
        updated_at=memory.updated_at,
        current=life.current,
        valid_from=None if life.valid_from is None else rfc3339(life.valid_from),
        valid_until=None if life.valid_until is None else rfc3339(life.valid_until),
        superseded_by=life.superseded_by,
        restates=life.restates,
    )


def to_pin(memory: Memory) -> Pin:
    return Pin(
        id=memory.id,
        text=memory.text,
        namespace=memory.run_id or "",
        created_at=memory.created_at,
    )


def _one_line(text: str) -> str:
    return " ".join(text.split())


def hit_line(hit: Hit) -> str:
    score = "-" if hit.score is None else f"{hit.score:.3f}"
    if not hit.current:
        mark = f"[superseded by {hit.superseded_by}] "
    elif hit.restates is not None:
        mark = f"[wording of {hit.restates}] "
    else:
        mark = ""
    return f"{hit.id}\t{score}\t{hit.age}\t{mark}{_one_line(hit.text)}"


def _with_notes(lines: Iterable[str], notes: Iterable[str]) -> str:
    return "\n".join([*lines, *(f"note: {note}" for note in notes)])


def render_search(result: SearchResult) -> str:
    lines = [hit_line(hit) for hit in result.hits] or [f"no memories match {result.query!r}"]
    return _with_notes(lines, result.notes)


def render_list(result: ListResult) -> str:
    lines = [hit_line(hit) for hit in result.hits] or ["no memories in this scope"]
    return _with_notes(lines, result.notes)


def render_add(result: AddResult) -> str:
    ids = ", ".join(result.memory_ids) or "-"
    head = {
        "added": f"added {ids} in {result.namespace}",
        "duplicate": f"duplicate: already stored as {ids}; nothing added",
        "reinforced": f"reinforced {ids}: the same fact was already stored; nothing added"
        + (f" (mentions: {result.mentions})" if result.mentions is not None else ""),
        "updated": f"updated: {ids} holds the new value"
        + (f", replacing {result.previous_text!r}" if result.previous_text else ""),
        "unchanged": "unchanged: mem0 stored nothing new",
    }[result.action]
    lines = [head, *(f"  {_one_line(text)}" for text in result.memories)]
    if result.folded_ids:
        lines.append(f"  folded copies: {', '.join(result.folded_ids)}")
    if result.superseded_ids:
        lines.append(f"  superseded (kept): {', '.join(result.superseded_ids)}")
    return _with_notes(lines, result.notes)


def _pin_line(pin: Pin) -> str:
    return f"{pin.id}\t{_one_line(pin.text)}"


def render_pin(result: PinResult) -> str:
    verb = "pinned" if result.action == "pinned" else "already pinned"
    return f"{verb} {result.pin.id} in {result.pin.namespace}: {_one_line(result.pin.text)}"


def render_pins(result: PinsResult) -> str:
    lines = ["global pins:", *(_pin_line(p) for p in result.global_pins)]
    if not result.global_pins:
        lines.append("(none)")
    lines.append(f"pins of project {result.project}:" if result.project else "local pins:")
    lines.extend(_pin_line(p) for p in result.local_pins)
    if not result.local_pins:
        lines.append("(none)")
    return _with_notes(lines, result.notes)


def render_change(result: ChangeResult) -> str:
    line = f"{result.action} {result.memory_id}: {_one_line(result.text)}"
    return _with_notes([line], result.notes)


def render_history(result: HistoryResult) -> str:
    lines = [
        f"{e.at or '?'}\t{e.event}\t{_one_line(e.old_text or '')} -> {_one_line(e.new_text or '')}"
        for e in result.events
    ]
    if not lines:
        lines = [f"no history for {result.memory_id}"]
    lines += [
        f"valid\t{span.valid_from} -> {span.valid_until or 'now'}" for span in result.validity
    ]
    return _with_notes(lines, result.notes)


def render_reset(result: ResetResult) -> str:
    return _with_notes(
        ["the memory store was wiped" if result.reset else "nothing wiped"], result.notes
    )

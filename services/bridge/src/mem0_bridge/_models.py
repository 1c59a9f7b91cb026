"""What each tool returns as structured content (its output schema is derived from these)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class Hit(BaseModel):
    id: str
    text: str
    namespace: str | None = Field(description="mem0 run_id the memory lives in.")
    score: float | None = Field(description="Final score (reranked when the ranker answered).")
    similarity: float | None = Field(description="mem0's similarity score, when searched.")
    mentions: int | None = Field(default=None, description="Reinforcements the ranker counted.")
    age: str = Field(description="Age of the newer of updated and created time: <1h, 5h, 3d, 2mo.")
    created_at: str | None
    updated_at: str | None
    current: bool = Field(
        default=True, description="False when a newer memory superseded this value."
    )
    valid_from: str | None = Field(default=None, description="Since when the value holds.")
    valid_until: str | None = Field(
        default=None, description="Until when the value held (superseded memories only)."
    )
    superseded_by: str | None = Field(
        default=None, description="The memory holding the newer value, when superseded."
    )
    restates: str | None = Field(
        default=None,
        description="The memory this one says again in other words, when it is a wording of "
        "that fact: the two hold one value and search shows one of them.",
    )


class SearchResult(BaseModel):
    query: str
    rewritten_query: str | None = Field(
        description="The statement the question was rewritten to, when it was searched too."
    )
    as_of: str | None = Field(
        default=None, description="The time asked about: hits are the memories current then."
    )
    reranked: bool = Field(description="False when the ranker was unavailable (mem0's order).")
    hits: list[Hit]
    notes: list[str] = Field(description="Degradations and hints worth telling the user about.")


class ListResult(BaseModel):
    namespaces: list[str] | None = Field(description="run_ids read; null means all (no pins).")
    hits: list[Hit]
    notes: list[str]


AddAction = Literal["added", "duplicate", "reinforced", "updated", "unchanged"]


class AddResult(BaseModel):
    action: AddAction = Field(
        description="added: new memory; duplicate: identical text already stored, nothing done; "
        "reinforced: the judge found the same fact, its mention count grew (the memory takes the "
        "new words when they name a value or name it lacked); updated: the fact changed: the "
        "memory in memory_ids holds the new value (a new memory, or an older one holding that "
        "value again) and the memories in superseded_ids, which held the older value, are kept "
        "but marked superseded; unchanged: mem0 stored nothing."
    )
    memory_ids: list[str]
    namespace: str
    memories: list[str] = Field(description="Text of the memories added or touched.")
    previous_text: str | None = Field(
        default=None, description="The replaced text (updated, or reinforced in new words)."
    )
    mentions: int | None = Field(default=None, description="Mention count after reinforcing.")
    folded_ids: list[str] = Field(
        default_factory=list,
        description="Other copies of the same value folded into this memory, their mentions "
        "carried over; their ids keep answering by-id tools for it.",
    )
    superseded_ids: list[str] = Field(
        default_factory=list,
        description="Memories holding an older value of this fact, now marked superseded by "
        "memory_ids[0] (kept: readable by id, in memory_history and with as_of; undo with "
        "memory_reinstate).",
    )
    restates: str | None = Field(
        default=None,
        description="The memory the judge took this fact for a restatement of, too unlike it to "
        "merge: stored as a wording of it (search shows one of them), counted as a mention.",
    )
    notes: list[str]


class Pin(BaseModel):
    id: str
    text: str
    namespace: str
    created_at: str | None


class PinResult(BaseModel):
    action: Literal["pinned", "already_pinned"]
    pin: Pin


class PinsResult(BaseModel):
    project: str | None
    global_pins: list[Pin]
    local_pins: list[Pin]
    notes: list[str]


class ChangeResult(BaseModel):
    """The outcome of an update, delete or unpin of one memory."""

    action: Literal["updated", "deleted", "unpinned", "reinstated"]
    memory_id: str
    namespace: str | None
    text: str = Field(description="The memory's text now (updated) or before removal.")
    previous_text: str | None = None
    notes: list[str]


class HistoryEvent(BaseModel):
    event: str
    old_text: str | None
    new_text: str | None
    at: str | None


class Span(BaseModel):
    valid_from: str
    valid_until: str | None = Field(description="null while the value holds.")


class HistoryResult(BaseModel):
    memory_id: str
    events: list[HistoryEvent]
    current: bool = Field(description="Whether the memory holds its fact's value now.")
    validity: list[Span] = Field(description="When the value held, oldest first.")
    superseded_by: str | None = Field(description="The memory holding the newer value.")
    supersedes: list[str] = Field(description="The memories whose older values this replaced.")
    folded_into: str | None = Field(description="The memory this restatement was folded into.")
    notes: list[str] = Field(default_factory=list)


class ResetResult(BaseModel):
    reset: bool
    notes: list[str]

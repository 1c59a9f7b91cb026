"""What both ends of the wire must agree on, beyond the message shapes: bounds and text identity.

The bounds are read from the `max_chars` / `max_items` options written next to each field in the
`.proto` files, so the bridge, the ranker and the judge use one set of limits and a change to a
`.proto` changes them everywhere. `normalise_text` is the one definition of "the same text" for
exact-content dedupe, used by the bridge (before it answers `duplicate`) and the ranker (the key
it stores).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Protocol

from google.protobuf.message import Message

from mem0mcp.judge.v1 import judge_pb2
from mem0mcp.limits.v1 import limits_pb2
from mem0mcp.ranker.v1 import ranker_pb2


def _option(message: type[Message], field: str, option: object) -> int:
    options = message.DESCRIPTOR.fields_by_name[field].GetOptions()
    value = int(options.Extensions[option])  # type: ignore[index]
    if value <= 0:
        raise RuntimeError(f"{message.DESCRIPTOR.full_name}.{field} declares no limit")
    return value


def max_chars(message: type[Message], field: str) -> int:
    """The `max_chars` bound a `.proto` declares for this string field."""
    return _option(message, field, limits_pb2.max_chars)


def max_items(message: type[Message], field: str) -> int:
    """The `max_items` bound a `.proto` declares for this repeated field."""
    return _option(message, field, limits_pb2.max_items)


#: Longest fact, memory text or query any service accepts.
MAX_TEXT_CHARS = max_chars(judge_pb2.CompareRequest, "fact")
#: Most stored memories one Compare call may judge a new fact against.
MAX_COMPARE_CANDIDATES = max_items(judge_pb2.CompareRequest, "candidates")
#: Longest memory id and ranker scope.
MAX_ID_CHARS = max_chars(ranker_pb2.RecordStoredRequest, "memory_id")
MAX_SCOPE_CHARS = max_chars(ranker_pb2.RecordStoredRequest, "scope")
#: Most candidates one Rerank call may carry (and ids one Forget, Fold or Resolve may name).
MAX_RERANK_CANDIDATES = max_items(ranker_pb2.RerankRequest, "candidates")


def normalise_text(text: str) -> str:
    """The form two texts must share to be "the same" for exact-content dedupe.

    Only what never changes a meaning is ignored: surrounding and repeated whitespace, and
    canonical Unicode composition (NFC: a precomposed "é" and "e" + combining accent are one
    character). Case and compatibility forms are kept: "Prod-Logs" is not "prod-logs", "10²" is
    not "102" and full-width digits are not ASCII ones; telling such texts apart is worth more than
    catching a cosmetic repeat, which the judge's SAME verdict handles anyway.
    """
    return " ".join(unicodedata.normalize("NFC", text).split())


class CandidateFields(Protocol):
    """What a rerank candidate carries, named as `ranker_pb2.Candidate` names it."""

    @property
    def memory_id(self) -> str: ...
    @property
    def similarity(self) -> float: ...
    @property
    def created_at(self) -> str: ...
    @property
    def updated_at(self) -> str: ...
    @property
    def restated_at(self) -> str: ...
    @property
    def related_ids(self) -> Sequence[str]: ...
    @property
    def restatement_ids(self) -> Sequence[str]: ...


def candidate_columns(candidates: Sequence[CandidateFields]) -> ranker_pb2.CandidateColumns:
    """`candidates` as `RerankRequest.columns`, the form the ranker reads fastest: a column is
    left out when no candidate fills it (the .proto allows one entry per candidate or none)."""
    restated = [c.restated_at for c in candidates]
    related = [c.related_ids for c in candidates]
    restating = [c.restatement_ids for c in candidates]
    return ranker_pb2.CandidateColumns(
        memory_ids=[c.memory_id for c in candidates],
        similarities=[c.similarity for c in candidates],
        created_at=[c.created_at for c in candidates],
        updated_at=[c.updated_at for c in candidates],
        restated_at=restated if any(restated) else (),
        related_ids=[i for ids in related for i in ids],
        related_counts=[len(ids) for ids in related] if any(related) else (),
        restatement_ids=[i for ids in restating for i in ids],
        restatement_counts=[len(ids) for ids in restating] if any(restating) else (),
    )

"""Request checks: every bad input becomes INVALID_ARGUMENT naming its field, before any write.

The checks return the validated values the store and the scorer need, so a handler cannot use
a field it did not check.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from datetime import datetime

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.unknown_fields import UnknownFieldSet

from mem0_ranker._content import content_key
from mem0_ranker._scoring import Candidate
from mem0_ranker._timestamps import parse_moment
from mem0mcp.ranker.v1 import ranker_pb2


class InvalidArgument(ValueError):  # noqa: N818 - named after the gRPC status it becomes
    """A request field is wrong; the message starts with the field's name."""


@dataclass(frozen=True, slots=True)
class Limits:
    max_candidates: int
    max_id_length: int
    max_scope_length: int
    max_text_length: int


@functools.cache
def _message_fields(descriptor: Descriptor) -> tuple[FieldDescriptor, ...]:
    return tuple(f for f in descriptor.fields if f.type == FieldDescriptor.TYPE_MESSAGE)


def _unknown_fields(message: Message, path: str) -> list[str]:
    # Rerank requests carry up to thousands of candidates: keep the common case (none) cheap.
    unknown = UnknownFieldSet(message)
    found = [
        f"{path or 'request'}: unknown field number {unknown[i].field_number}"
        for i in range(len(unknown))
    ]
    for field in _message_fields(message.DESCRIPTOR):
        value = getattr(message, field.name)
        where = f"{path}.{field.name}" if path else field.name
        if field.is_repeated:
            for index, item in enumerate(value):
                if len(UnknownFieldSet(item)) or _message_fields(item.DESCRIPTOR):
                    found += _unknown_fields(item, f"{where}[{index}]")
        elif message.HasField(field.name):
            found += _unknown_fields(value, where)
    return found


def reject_unknown_fields(message: Message) -> None:
    """A field this version does not know is a client built against another contract: say so."""
    found = _unknown_fields(message, "")
    if found:
        raise InvalidArgument("; ".join(found[:5]) + ("; ..." if len(found) > 5 else ""))


def _bounded(value: str, field: str, maximum: int) -> str:
    if not value:
        raise InvalidArgument(f"{field}: must not be empty")
    if len(value) > maximum:
        raise InvalidArgument(f"{field}: {len(value)} characters, at most {maximum} allowed")
    return value


def memory_id(value: str, field: str, limits: Limits) -> str:
    return _bounded(value, field, limits.max_id_length)


def scope(value: str, limits: Limits, field: str = "scope") -> str:
    return _bounded(value, field, limits.max_scope_length)


def text_key(value: str, limits: Limits) -> str:
    """The dedupe key of a text; a text that normalises to nothing cannot be deduplicated."""
    _bounded(value, "text", limits.max_text_length)
    if not value.strip():
        raise InvalidArgument("text: must contain more than whitespace")
    return content_key(value)


def _moment(value: str, index: int, field: str) -> datetime:
    try:
        return parse_moment(value)
    except ValueError:
        raise InvalidArgument(
            f"candidates[{index}].{field}: not an RFC 3339 timestamp: {value[:64]!r}"
        ) from None


def candidates(request: ranker_pb2.RerankRequest, limits: Limits) -> list[Candidate]:
    count = len(request.candidates)
    if count > limits.max_candidates:
        raise InvalidArgument(f"candidates: {count} given, at most {limits.max_candidates} allowed")
    checked = []
    max_id = limits.max_id_length
    for index, c in enumerate(request.candidates):
        similarity = c.similarity
        if not (math.isfinite(similarity) and similarity >= 0):
            raise InvalidArgument(
                f"candidates[{index}].similarity: must be a finite number >= 0, got {similarity!r}"
            )
        id_ = c.memory_id
        if not id_ or len(id_) > max_id:
            memory_id(id_, f"candidates[{index}].memory_id", limits)  # raises, naming the field
        created, updated = c.created_at, c.updated_at
        if not created:
            raise InvalidArgument(f"candidates[{index}].created_at: must not be empty")
        # Both are checked, but only the newer is converted to epoch seconds (the costly step).
        activity = _moment(created, index, "created_at")
        if updated:
            activity = max(activity, _moment(updated, index, "updated_at"))
        checked.append(Candidate(id_, similarity, activity.timestamp()))
    return checked


def forget_ids(request: ranker_pb2.ForgetRequest, limits: Limits) -> list[str]:
    ids = request.memories.memory_ids
    if not ids:
        raise InvalidArgument("memories.memory_ids: must name at least one memory")
    if len(ids) > limits.max_candidates:
        raise InvalidArgument(
            f"memories.memory_ids: {len(ids)} given, at most {limits.max_candidates} allowed"
        )
    return [memory_id(v, f"memories.memory_ids[{i}]", limits) for i, v in enumerate(ids)]

"""Request checks: every bad input becomes INVALID_ARGUMENT naming its field, before any write.

The checks return the validated values the store and the scorer need, so a handler cannot use
a field it did not check.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NoReturn

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.unknown_fields import UnknownFieldSet

from mem0_common import quote_input
from mem0_ranker._content import content_key
from mem0_ranker._scoring import Columns
from mem0_ranker._timestamps import cached_timestamp
from mem0mcp import contract
from mem0mcp.ranker.v1 import ranker_pb2

#: The activity time of a candidate with no timestamp: never older than now, so recency is 1.
UNKNOWN_AGE = math.inf
#: A reconciler holding a lease longer than this is stuck, not slow.
MAX_LEASE_SECONDS = 3600.0


class InvalidArgument(ValueError):  # noqa: N818 - named after the gRPC status it becomes
    """A request field is wrong; the message starts with the field's name."""


@dataclass(frozen=True, slots=True)
class Limits:
    """The bounds the `.proto` files declare (`mem0mcp.contract`), shared with every service."""

    max_candidates: int = contract.MAX_RERANK_CANDIDATES
    max_id_length: int = contract.MAX_ID_CHARS
    max_scope_length: int = contract.MAX_SCOPE_CHARS
    max_text_length: int = contract.MAX_TEXT_CHARS
    max_reason_length: int = contract.max_chars(ranker_pb2.MarkPendingRequest, "reason")
    max_related: int = contract.max_items(ranker_pb2.Candidate, "related_ids")
    max_restatements: int = contract.max_items(ranker_pb2.Candidate, "restatement_ids")
    max_lease_key_length: int = contract.max_chars(ranker_pb2.AcquireLeaseRequest, "key")
    max_holder_length: int = contract.max_chars(ranker_pb2.AcquireLeaseRequest, "holder")


LIMITS = Limits()


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
        if not field.is_repeated:
            if message.HasField(field.name):
                found += _unknown_fields(value, where)
        elif _message_fields(field.message_type):
            for index, item in enumerate(value):
                found += _unknown_fields(item, f"{where}[{index}]")
        else:  # leaf messages (a rerank's candidates): only their own unknown fields to check
            for index, item in enumerate(value):
                if len(UnknownFieldSet(item)):
                    found += _unknown_fields(item, f"{where}[{index}]")
    return found


def reject_unknown_fields(message: Message) -> None:
    """A field this version does not know is a client built against another contract: say so."""
    found = _unknown_fields(message, "")
    if found:
        raise InvalidArgument("; ".join(found[:5]) + ("; ..." if len(found) > 5 else ""))


def _without_nul(value: str, field: str) -> str:
    """PostgreSQL text cannot hold a NUL; both backends refuse it, so what a deployment accepts
    does not depend on its storage."""
    if "\x00" in value:
        raise InvalidArgument(f"{field}: must not contain a NUL character")
    return value


def _bounded(value: str, field: str, maximum: int) -> str:
    if not value:
        raise InvalidArgument(f"{field}: must not be empty")
    if len(value) > maximum:
        raise InvalidArgument(f"{field}: {len(value)} characters, at most {maximum} allowed")
    return _without_nul(value, field)


def memory_id(value: str, field: str, limits: Limits) -> str:
    return _bounded(value, field, limits.max_id_length)


def scope(value: str, limits: Limits, field: str = "scope") -> str:
    return _bounded(value, field, limits.max_scope_length)


def scoped_text(
    request: ranker_pb2.CheckDuplicateRequest | ranker_pb2.RecordStoredRequest, limits: Limits
) -> tuple[str, str]:
    """The scope and the text's dedupe key of a request naming both."""
    return scope(request.scope, limits), text_key(request.text, limits)


def text_key(value: str, limits: Limits) -> str:
    """The dedupe key of a text; a text that normalises to nothing cannot be deduplicated."""
    _bounded(value, "text", limits.max_text_length)
    if not value.strip():
        raise InvalidArgument("text: must contain more than whitespace")
    return content_key(value)


def _moment(value: str, index: int, field: str) -> float:
    try:
        return cached_timestamp(value)
    except ValueError:
        raise InvalidArgument(
            f"candidates[{index}].{field}: not an RFC 3339 timestamp: {quote_input(value)}"
        ) from None


def _reject_candidate(
    request: ranker_pb2.RerankRequest, index: int, c: ranker_pb2.Candidate, limits: Limits
) -> NoReturn:
    """Raise the error naming the first bad field of a candidate the fast loop refused.

    Unknown fields anywhere in the request come first, as for every other call.
    """
    reject_unknown_fields(request)
    similarity = c.similarity
    if not (math.isfinite(similarity) and similarity >= 0):
        raise InvalidArgument(
            f"candidates[{index}].similarity: must be a finite number >= 0, got {similarity!r}"
        )
    memory_id(c.memory_id, f"candidates[{index}].memory_id", limits)
    _check_named_ids(c, index, limits)
    if c.created_at:
        _moment(c.created_at, index, "created_at")
    if c.updated_at:
        _moment(c.updated_at, index, "updated_at")
    if c.restated_at:
        _moment(c.restated_at, index, "restated_at")
    raise AssertionError(f"candidates[{index}] was refused but has no bad field")


def _check_named_ids(c: ranker_pb2.Candidate, index: int, limits: Limits) -> None:
    """The candidate's lists of other memories' ids (`related_ids`, `restatement_ids`)."""
    for field, named, most in (
        ("related_ids", c.related_ids, limits.max_related),
        ("restatement_ids", c.restatement_ids, limits.max_restatements),
    ):
        if len(named) > most:
            raise InvalidArgument(
                f"candidates[{index}].{field}: {len(named)} given, at most {most} allowed"
            )
        for i, other in enumerate(named):
            memory_id(other, f"candidates[{index}].{field}[{i}]", limits)


# `candidates` looks for unknown fields only in the request and in each candidate, which is
# everywhere they can be while neither holds any other message: refuse to run otherwise.
if not (
    [f.name for f in _message_fields(ranker_pb2.RerankRequest.DESCRIPTOR)] == ["candidates"]
    and not _message_fields(ranker_pb2.Candidate.DESCRIPTOR)
):
    raise RuntimeError("RerankRequest grew nested messages: extend candidates()' field checks")


def candidates(request: ranker_pb2.RerankRequest, limits: Limits) -> Columns:
    """Every candidate checked (unknown fields included), with the newest of its times
    (created, updated, restated) as epoch seconds (`UNKNOWN_AGE` when it has neither created
    nor updated: recency then leaves its score alone).

    One flat loop that only tests (the common case is a valid request); the first refusal
    goes to `_reject_candidate`, which finds the field to name.
    """
    count = len(request.candidates)
    if len(UnknownFieldSet(request)) or count > limits.max_candidates:
        reject_unknown_fields(request)
        raise InvalidArgument(f"candidates: {count} given, at most {limits.max_candidates} allowed")
    columns = Columns([], [], [], [])
    restatements: list[Sequence[str]] = []
    add_id = columns.memory_ids.append
    add_similarity = columns.similarities.append
    add_activity = columns.activity_at.append
    add_related = columns.related.append
    add_restatements = restatements.append
    max_id = limits.max_id_length
    max_related = limits.max_related
    max_restatements = limits.max_restatements
    stamp = cached_timestamp
    unknown = UnknownFieldSet
    inf = math.inf
    for index, c in enumerate(request.candidates):
        id_ = c.memory_id
        similarity = c.similarity
        created = c.created_at
        updated = c.updated_at
        related = c.related_ids
        restating = c.restatement_ids
        # The comparison chain is False for NaN, negatives and infinity alike.
        if (
            not (0.0 <= similarity < inf and id_ and len(id_) <= max_id and "\x00" not in id_)
            or len(unknown(c))
            or len(related) > max_related
            or len(restating) > max_restatements
        ):
            _reject_candidate(request, index, c, limits)
        try:
            if created and updated:
                activity = max(stamp(created), stamp(updated))
            elif created or updated:
                activity = stamp(created or updated)
            else:
                activity = UNKNOWN_AGE
            if c.restated_at:
                activity = max(activity, stamp(c.restated_at))
        except ValueError:
            _reject_candidate(request, index, c, limits)
        add_id(id_)
        add_similarity(similarity)
        add_activity(activity)
        add_related(related)
        add_restatements(restating)
    # Named ids checked all at once, in C: most candidates name none or a few.
    named = list(itertools.chain.from_iterable(columns.related))
    restated = list(itertools.chain.from_iterable(restatements))
    if restated:
        named += restated
        columns = columns._replace(restatements=restatements)
    if named and (
        min(map(len, named)) == 0 or max(map(len, named)) > max_id or "\x00" in "".join(named)
    ):
        for index, c in enumerate(request.candidates):
            _check_named_ids(c, index, limits)  # raises at the first bad id
    return columns


def memory_ids(ids: Sequence[str], field: str, limits: Limits) -> list[str]:
    """A non-empty list of ids, each checked, none repeated."""
    if not ids:
        raise InvalidArgument(f"{field}: must name at least one memory")
    if len(ids) > limits.max_candidates:
        raise InvalidArgument(f"{field}: {len(ids)} given, at most {limits.max_candidates} allowed")
    return list(dict.fromkeys(memory_id(v, f"{field}[{i}]", limits) for i, v in enumerate(ids)))


def reason(value: str, limits: Limits) -> str:
    if len(value) > limits.max_reason_length:
        raise InvalidArgument(
            f"reason: {len(value)} characters, at most {limits.max_reason_length} allowed"
        )
    return _without_nul(value, "reason")


def claim(request: ranker_pb2.ClaimPendingRequest, limits: Limits) -> tuple[int, float]:
    """The batch size and lease of a ClaimPending request."""
    if not 1 <= request.limit <= limits.max_candidates:
        raise InvalidArgument(f"limit: must be 1..{limits.max_candidates}, got {request.limit}")
    return request.limit, lease_seconds(request.lease_seconds, "lease_seconds")


def lease(
    request: ranker_pb2.AcquireLeaseRequest | ranker_pb2.ReleaseLeaseRequest, limits: Limits
) -> tuple[str, str]:
    """The key and holder of a lease request."""
    return (
        _bounded(request.key, "key", limits.max_lease_key_length),
        _bounded(request.holder, "holder", limits.max_holder_length),
    )


def lease_seconds(value: float, field: str) -> float:
    """A lease's length: in (0, MAX_LEASE_SECONDS]; longer is a holder stuck, not slow."""
    if not (math.isfinite(value) and 0 < value <= MAX_LEASE_SECONDS):
        raise InvalidArgument(f"{field}: must be in (0, {MAX_LEASE_SECONDS:g}], got {value!r}")
    return value


def fold(request: ranker_pb2.FoldRequest, limits: Limits) -> tuple[str, str, list[str]]:
    """The scope, the memory that stays and the memories folded into it, of a Fold request."""
    where = scope(request.scope, limits)
    into = memory_id(request.into_memory_id, "into_memory_id", limits)
    others = memory_ids(request.from_memory_ids, "from_memory_ids", limits)
    if into in others:
        raise InvalidArgument("from_memory_ids: must not contain into_memory_id")
    return where, into, others

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
from typing import NoReturn, cast, overload

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.unknown_fields import UnknownFieldSet

from mem0_common import quote_input
from mem0_ranker._content import content_key
from mem0_ranker._scoring import Columns
from mem0_ranker._timestamps import cached_timestamp, known_timestamps, learn_timestamp
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


# `candidates` looks for unknown fields only in the request, in each candidate and in the
# columns, which is everywhere they can be while none of those holds any other message: refuse
# to run otherwise.
if not (
    [f.name for f in _message_fields(ranker_pb2.RerankRequest.DESCRIPTOR)]
    == ["candidates", "columns"]
    and not _message_fields(ranker_pb2.Candidate.DESCRIPTOR)
    and not _message_fields(ranker_pb2.CandidateColumns.DESCRIPTOR)
):
    raise RuntimeError("RerankRequest grew nested messages: extend candidates()' field checks")


def candidates(request: ranker_pb2.RerankRequest, limits: Limits) -> Columns:
    """Every candidate checked (unknown fields included), with the newest of its times
    (created, updated, restated) as epoch seconds (`UNKNOWN_AGE` when it has neither created
    nor updated: recency then leaves its score alone). Either form: `columns` or `candidates`.
    """
    if request.HasField("columns"):
        if request.candidates:
            _refuse(request, "columns: give the candidates as candidates or as columns, not both")
        return _columns(request, limits)
    return _candidate_messages(request, limits)


def _candidate_messages(request: ranker_pb2.RerankRequest, limits: Limits) -> Columns:
    """`candidates` of the `candidates` form.

    One flat loop that only tests (the common case is a valid request); the first refusal
    goes to `_reject_candidate`, which finds the field to name.
    """
    count = len(request.candidates)
    if len(UnknownFieldSet(request)) or count > limits.max_candidates:
        reject_unknown_fields(request)
        raise InvalidArgument(f"candidates: {count} given, at most {limits.max_candidates} allowed")
    relations: list[Sequence[str]] = []
    columns = Columns([], [], [], relations)
    restatements: list[Sequence[str]] = []
    add_id = columns.memory_ids.append
    add_similarity = columns.similarities.append
    add_activity = columns.activity_at.append
    add_related = relations.append
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
    named = list(itertools.chain.from_iterable(relations))
    restated = list(itertools.chain.from_iterable(restatements))
    if restated:
        named += restated
        columns = columns._replace(restatements=restatements)
    if named and _has_bad_id(named, limits):
        for index, c in enumerate(request.candidates):
            _check_named_ids(c, index, limits)  # raises at the first bad id
    return columns


def _refuse(request: ranker_pb2.RerankRequest, message: str) -> NoReturn:
    """Refuse a Rerank request; unknown fields anywhere in it come first, as for every call."""
    reject_unknown_fields(request)
    raise InvalidArgument(message)


def _columns(request: ranker_pb2.RerankRequest, limits: Limits) -> Columns:
    """`candidates` of the `columns` form: each check covers a whole column with a few calls
    that loop in C; only a column that fails one is walked in Python, to name the bad entry."""
    columns = request.columns
    if len(UnknownFieldSet(request)) or len(UnknownFieldSet(columns)):
        reject_unknown_fields(request)
    ids = list(columns.memory_ids)
    count = len(ids)
    if count > limits.max_candidates:
        _refuse(
            request,
            f"columns.memory_ids: {count} given, at most {limits.max_candidates} allowed",
        )
    similarities = list(columns.similarities)
    _same_length(request, "similarities", len(similarities), count)
    if not count:
        _check_absent(request, columns)
        return Columns([], [], [], [])
    if _has_bad_id(ids, limits):
        _check_ids(request, ids, "memory_ids", limits)
    # NaN fails `>=` when it comes first and makes the sum NaN anywhere else; an infinity makes
    # it infinite. A sum that overflows only sends the column to the exact check below.
    if not (min(similarities) >= 0.0 and sum(similarities) < math.inf):
        for index, similarity in enumerate(similarities):
            if not (math.isfinite(similarity) and similarity >= 0):
                _refuse(
                    request,
                    f"columns.similarities[{index}]: must be a finite number >= 0, "
                    f"got {similarity!r}",
                )
    related = _named_ids(request, "related_ids", "related_counts", limits.max_related, limits)
    restatements = _named_ids(
        request, "restatement_ids", "restatement_counts", limits.max_restatements, limits
    )
    return Columns(
        ids,
        similarities,
        _activity(request, count),
        related or [()] * count,
        restatements or (),
    )


def _same_length(request: ranker_pb2.RerankRequest, field: str, given: int, count: int) -> None:
    if given != count:
        _refuse(request, f"columns.{field}: {given} given for {count} memory_ids")


def _check_absent(request: ranker_pb2.RerankRequest, columns: ranker_pb2.CandidateColumns) -> None:
    """With no candidates, every column must be empty too."""
    for field, _ in columns.ListFields():
        _refuse(
            request,
            f"columns.{field.name}: {len(getattr(columns, field.name))} given for 0 memory_ids",
        )


def _has_bad_id(ids: list[str], limits: Limits) -> bool:
    """Whether any of a non-empty column's ids is empty, too long or holds a NUL (in C)."""
    return "" in ids or max(map(len, ids)) > limits.max_id_length or "\x00" in "".join(ids)


def _check_ids(
    request: ranker_pb2.RerankRequest, ids: Sequence[str], field: str, limits: Limits
) -> None:
    """Raise naming the first bad id of a column (it must have one)."""
    try:
        for index, value in enumerate(ids):
            memory_id(value, f"columns.{field}[{index}]", limits)
    except InvalidArgument as exc:
        _refuse(request, str(exc))


def _moments(request: ranker_pb2.RerankRequest, field: str, count: int) -> list[float] | None:
    """A timestamp column as epoch seconds, -inf for an empty entry; None for no column."""
    texts = getattr(request.columns, field)
    if not texts:
        return None
    _same_length(request, field, len(texts), count)
    moments = known_timestamps(texts)
    if None not in moments:
        return cast("list[float]", moments)
    texts = list(texts)
    for index, moment in enumerate(moments):
        if moment is None:
            try:
                moments[index] = learn_timestamp(texts[index])
            except ValueError:
                _refuse(
                    request,
                    f"columns.{field}[{index}]: not an RFC 3339 timestamp: "
                    f"{quote_input(texts[index])}",
                )
    return cast("list[float]", moments)


def _activity(request: ranker_pb2.RerankRequest, count: int) -> list[float]:
    """Each candidate's newest time, as `candidates` defines it, from the timestamp columns."""
    created = _moments(request, "created_at", count)
    updated = _moments(request, "updated_at", count)
    restated = _moments(request, "restated_at", count)
    if created is None or updated is None:
        activity = created or updated or [-math.inf] * count
    else:
        # Not max(): a call per candidate costs more than the comparison.
        activity = [c if c > u else u for c, u in zip(created, updated, strict=True)]  # noqa: FURB136
    if -math.inf in activity:  # neither created nor updated: the age is unknown
        activity = [UNKNOWN_AGE if moment == -math.inf else moment for moment in activity]
    if restated is not None:
        activity = [a if a > r else r for a, r in zip(activity, restated, strict=True)]  # noqa: FURB136
    return activity


def _named_ids(
    request: ranker_pb2.RerankRequest,
    field: str,
    counts_field: str,
    most: int,
    limits: Limits,
) -> Sequence[list[str]] | None:
    """A flattened id-list column split per candidate; None when no candidate names any."""
    columns = request.columns
    named: list[str] = list(getattr(columns, field))
    counts: list[int] = list(getattr(columns, counts_field))
    if not counts:
        if named:
            _refuse(
                request, f"columns.{counts_field}: empty, but columns.{field} names {len(named)}"
            )
        return None
    _same_length(request, counts_field, len(counts), len(columns.memory_ids))
    if max(counts) > most:
        index = next(i for i, n in enumerate(counts) if n > most)
        _refuse(
            request,
            f"columns.{counts_field}[{index}]: {counts[index]} {field} given, "
            f"at most {most} allowed",
        )
    if sum(counts) != len(named):
        _refuse(
            request,
            f"columns.{counts_field}: they add up to {sum(counts)}, "
            f"but columns.{field} holds {len(named)}",
        )
    if not named:
        return None
    if _has_bad_id(named, limits):
        _check_ids(request, named, field, limits)
    return _Split(named, list(itertools.accumulate(counts)))


class _Split(Sequence[list[str]]):
    """One flat column seen as a list per candidate: item i is `flat[ends[i - 1]:ends[i]]`, cut
    when asked for. Scoring asks for the few candidates of the band, not all of them."""

    __slots__ = ("_ends", "_flat")

    def __init__(self, flat: list[str], ends: list[int]) -> None:
        self._flat = flat
        self._ends = ends

    def __len__(self) -> int:
        return len(self._ends)

    @overload
    def __getitem__(self, index: int) -> list[str]: ...
    @overload
    def __getitem__(self, index: slice) -> list[list[str]]: ...
    def __getitem__(self, index: int | slice) -> list[str] | list[list[str]]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        ends = self._ends
        if index < 0:
            index += len(ends)
        if not 0 <= index < len(ends):
            raise IndexError("candidate index out of range")
        return self._flat[ends[index - 1] if index else 0 : ends[index]]


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

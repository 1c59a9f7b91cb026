"""Request checks done before any LLM call; each failure names the offending field.

Limits are the ones the `.proto` declares next to each field (`mem0mcp.contract`, shared with
the bridge and the ranker), in characters, not bytes, so a Unicode text is measured as a reader
would. Unknown fields (a newer client's request) and enum numbers this server does not know are
rejected rather than silently ignored.
"""

from __future__ import annotations

from google.protobuf.message import Message
from google.protobuf.unknown_fields import UnknownFieldSet

from mem0mcp import contract
from mem0mcp.judge.v1 import judge_pb2


class InvalidRequestError(ValueError):
    """Carries the message sent back with INVALID_ARGUMENT."""


def _check_wire_compatible(message: Message, path: str) -> None:
    fields = UnknownFieldSet(message)
    unknown = sorted({int(fields[i].field_number) for i in range(len(fields))})
    if unknown:
        raise InvalidRequestError(f"{path or 'request'}: unknown field number(s) {unknown}")
    for field, value in message.ListFields():
        name = f"{path}.{field.name}" if path else field.name
        values = value if field.is_repeated else [value]
        for index, item in enumerate(values):
            where = f"{name}[{index}]" if field.is_repeated else name
            if field.enum_type is not None and field.enum_type.values_by_number.get(item) is None:
                raise InvalidRequestError(f"{where}: unknown {field.enum_type.name} value {item}")
            if field.message_type is not None:
                _check_wire_compatible(item, where)


def check_wire_compatible(message: Message) -> None:
    """Reject unknown fields and unknown enum numbers anywhere in `message`."""
    _check_wire_compatible(message, "")


def _check_text(text: str, field: str, limit: int) -> None:
    if not text.strip():
        raise InvalidRequestError(f"{field} is empty")
    if len(text) > limit:
        raise InvalidRequestError(f"{field} is {len(text)} characters; the limit is {limit}")


MAX_TEXT_CHARS = contract.max_chars(judge_pb2.CompareCandidate, "text")
MAX_ID_CHARS = contract.max_chars(judge_pb2.CompareCandidate, "memory_id")


def check_compare(request: judge_pb2.CompareRequest) -> None:
    check_wire_compatible(request)
    _check_text(request.fact, "fact", contract.MAX_TEXT_CHARS)
    if not request.candidates:
        raise InvalidRequestError("candidates is empty")
    if len(request.candidates) > contract.MAX_COMPARE_CANDIDATES:
        raise InvalidRequestError(
            f"candidates has {len(request.candidates)} entries; "
            f"the limit is {contract.MAX_COMPARE_CANDIDATES}"
        )
    seen: dict[str, int] = {}
    for index, candidate in enumerate(request.candidates):
        if not candidate.memory_id.strip():
            raise InvalidRequestError(f"candidates[{index}].memory_id is empty")
        if len(candidate.memory_id) > MAX_ID_CHARS:
            raise InvalidRequestError(
                f"candidates[{index}].memory_id is {len(candidate.memory_id)} characters; "
                f"the limit is {MAX_ID_CHARS}"
            )
        if candidate.memory_id in seen:
            raise InvalidRequestError(
                f"candidates[{index}].memory_id repeats candidates[{seen[candidate.memory_id]}]"
            )
        seen[candidate.memory_id] = index
        _check_text(candidate.text, f"candidates[{index}].text", MAX_TEXT_CHARS)


def check_rewrite(request: judge_pb2.RewriteRequest) -> None:
    check_wire_compatible(request)
    _check_text(request.query, "query", contract.max_chars(judge_pb2.RewriteRequest, "query"))

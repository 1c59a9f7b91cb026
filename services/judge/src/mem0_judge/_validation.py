"""Request checks done before any LLM call; each failure names the offending field.

Limits are the settings' `max_candidates` and `max_text_chars` (characters, not bytes, so a
Unicode text is measured as a reader would). Unknown fields (a newer client's request) and enum
numbers this server does not know are rejected rather than silently ignored.
"""

from __future__ import annotations

from google.protobuf.message import Message
from google.protobuf.unknown_fields import UnknownFieldSet

from mem0_judge._settings import JudgeSettings
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


def check_compare(request: judge_pb2.CompareRequest, settings: JudgeSettings) -> None:
    check_wire_compatible(request)
    _check_text(request.fact, "fact", settings.max_text_chars)
    if not request.candidates:
        raise InvalidRequestError("candidates is empty")
    if len(request.candidates) > settings.max_candidates:
        raise InvalidRequestError(
            f"candidates has {len(request.candidates)} entries; "
            f"the limit is {settings.max_candidates}"
        )
    seen: dict[str, int] = {}
    for index, candidate in enumerate(request.candidates):
        if not candidate.memory_id.strip():
            raise InvalidRequestError(f"candidates[{index}].memory_id is empty")
        if candidate.memory_id in seen:
            raise InvalidRequestError(
                f"candidates[{index}].memory_id repeats candidates[{seen[candidate.memory_id]}]"
            )
        seen[candidate.memory_id] = index
        _check_text(candidate.text, f"candidates[{index}].text", settings.max_text_chars)


def check_rewrite(request: judge_pb2.RewriteRequest, settings: JudgeSettings) -> None:
    check_wire_compatible(request)
    _check_text(request.query, "query", settings.max_text_chars)

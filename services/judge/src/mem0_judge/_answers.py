"""The strict shapes an LLM answer must have; anything else fails the call cleanly.

Extra keys, a missing or repeated memory id, an unknown verdict or an empty statement all raise
`LLMBadAnswerError` rather than being guessed around: a judgement the caller cannot trust is
worse than none, which the caller already handles. One leniency, seen with real models: a memory
id written as a string of digits (`"1"`) is read as that number. One extra check, also seen: a
"statement" that is the question echoed back (ends in `?`) is a bad answer, not a rewrite.

`compare_schema(n)` and `REWRITE_SCHEMA` are the same shapes as JSON Schema, sent to endpoints that
constrain their output with one (`JUDGE_LLM_RESPONSE_FORMAT`); the answer is validated here all
the same.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from mem0_judge._errors import LLMBadAnswerError

VerdictName = Literal["SAME", "SUPERSEDES", "UNRELATED"]

#: Longest reason or statement kept; longer ones fail the schema (the prompts ask for short).
MAX_REASON_CHARS = 500
MAX_STATEMENT_CHARS = 500


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def _digits_as_int(value: object) -> object:
    """`"1"` -> 1: small models quote the id they were shown; anything else is left to fail."""
    if isinstance(value, str) and value.strip().isdecimal():
        return int(value.strip())
    return value


class JudgementAnswer(_Strict):
    id: Annotated[int, BeforeValidator(_digits_as_int)] = Field(ge=1)
    verdict: VerdictName
    reason: str = Field(default="", max_length=MAX_REASON_CHARS)


class CompareAnswer(_Strict):
    judgements: list[JudgementAnswer]


class RewriteAnswer(_Strict):
    statement: str = Field(min_length=1, max_length=MAX_STATEMENT_CHARS)


def compare_schema(candidates: int) -> dict[str, Any]:
    """JSON Schema of a Compare answer for `candidates` memories: exactly one judgement per id,
    in order (`prefixItems`), so a grammar-constrained model cannot skip or repeat one."""
    verdicts = list(get_args(VerdictName))

    def judgement(memory_id: int) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "id": {"type": "integer", "enum": [memory_id]},
                "verdict": {"type": "string", "enum": verdicts},
                "reason": {"type": "string", "maxLength": 120},
            },
            "required": ["id", "verdict", "reason"],
            "additionalProperties": False,
        }

    return {
        "type": "object",
        "properties": {
            "judgements": {
                "type": "array",
                "prefixItems": [judgement(i) for i in range(1, candidates + 1)],
                "items": False,
                "minItems": candidates,
                "maxItems": candidates,
            }
        },
        "required": ["judgements"],
        "additionalProperties": False,
    }


REWRITE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"statement": {"type": "string", "minLength": 1, "maxLength": 200}},
    "required": ["statement"],
    "additionalProperties": False,
}


def _schema_error(exc: ValidationError) -> LLMBadAnswerError:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "answer"
    return LLMBadAnswerError(f"LLM answer did not match the schema: {where}: {first['msg']}")


def parse_compare(answer: dict[str, Any], candidates: int) -> list[JudgementAnswer]:
    """The judgements in candidate order (ids 1..candidates, each exactly once)."""
    try:
        parsed = CompareAnswer.model_validate(answer)
    except ValidationError as exc:
        raise _schema_error(exc) from None
    by_id: dict[int, JudgementAnswer] = {}
    for judgement in parsed.judgements:
        if judgement.id in by_id or judgement.id > candidates:
            raise LLMBadAnswerError(
                f"LLM answer did not match the schema: judgement id {judgement.id} is "
                f"{'repeated' if judgement.id in by_id else 'not a memory id'}"
            )
        by_id[judgement.id] = judgement
    missing = [i for i in range(1, candidates + 1) if i not in by_id]
    if missing:
        raise LLMBadAnswerError(
            f"LLM answer did not match the schema: no judgement for memory ids {missing}"
        )
    return [by_id[i] for i in range(1, candidates + 1)]


def parse_rewrite(answer: dict[str, Any]) -> str:
    try:
        statement = RewriteAnswer.model_validate(answer).statement.strip()
    except ValidationError as exc:
        raise _schema_error(exc) from None
    if not statement:
        raise LLMBadAnswerError("LLM answer did not match the schema: statement is blank")
    if statement.endswith("?"):
        # Small models echo the question back; searching it again would add nothing.
        raise LLMBadAnswerError("LLM answer is a question, not a statement")
    return statement

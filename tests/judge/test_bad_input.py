"""Bad requests are INVALID_ARGUMENT naming the field, and never reach the LLM."""

from __future__ import annotations

import grpc
import pytest

from mem0_judge._validation import InvalidRequestError, check_wire_compatible
from mem0mcp import contract
from mem0mcp.judge.v1 import judge_pb2
from tests.fakes.llm import FakeLLM
from tests.judge.conftest import RunningJudge

pytestmark = pytest.mark.anyio

MAX_CANDIDATES = contract.MAX_COMPARE_CANDIDATES


def _candidate(
    memory_id: str = "m1", text: str = "The API listens on port 8080"
) -> judge_pb2.CompareCandidate:
    return judge_pb2.CompareCandidate(memory_id=memory_id, text=text)


def _compare(
    fact: str = "We moved the API to port 9000", *candidates: judge_pb2.CompareCandidate
) -> bytes:
    request = judge_pb2.CompareRequest(fact=fact, candidates=list(candidates) or [_candidate()])
    return request.SerializeToString()


BAD_COMPARES = {
    "empty fact": (_compare("  "), "fact is empty"),
    "no candidates": (
        judge_pb2.CompareRequest(fact="x").SerializeToString(),
        "candidates is empty",
    ),
    "too many candidates": (
        _compare("fact", *(_candidate(f"m{i}") for i in range(MAX_CANDIDATES + 1))),
        f"candidates has {MAX_CANDIDATES + 1} entries; the limit is {MAX_CANDIDATES}",
    ),
    "empty memory id": (_compare("fact", _candidate("")), "candidates[0].memory_id is empty"),
    "repeated memory id": (
        _compare("fact", _candidate("a"), _candidate("a")),
        "candidates[1].memory_id repeats candidates[0]",
    ),
    "empty candidate text": (
        _compare("fact", _candidate("a"), _candidate("b", "")),
        "candidates[1].text is empty",
    ),
    "too long fact": (
        _compare("é" * (contract.MAX_TEXT_CHARS + 1)),
        f"fact is {contract.MAX_TEXT_CHARS + 1} characters; the limit is {contract.MAX_TEXT_CHARS}",
    ),
    "too long candidate": (
        _compare("fact", _candidate(text="x" * (contract.MAX_TEXT_CHARS + 1))),
        "candidates[0].text is",
    ),
    # Field 99 (varint) and, inside the first candidate, field 7: what a newer client might send.
    "unknown top-level field": (_compare() + bytes([0x98, 0x06, 0x01]), "request: unknown field"),
    "unknown nested field": (
        judge_pb2.CompareRequest(fact="x").SerializeToString()
        + b"\x12"
        + bytes([len(_candidate().SerializeToString()) + 2])
        + _candidate().SerializeToString()
        + b"\x38\x01",
        "candidates[0]: unknown field number(s) [7]",
    ),
}


async def _raw_call(judge: RunningJudge, method: str, payload: bytes) -> grpc.aio.AioRpcError:
    call = judge.channel.unary_unary(
        f"/mem0mcp.judge.v1.JudgeService/{method}",
        request_serializer=lambda raw: raw,
        response_deserializer=lambda raw: raw,
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call(payload, timeout=10)
    return caught.value


@pytest.mark.parametrize(("payload", "message"), BAD_COMPARES.values(), ids=BAD_COMPARES.keys())
async def test_a_bad_compare_is_invalid_argument_naming_the_field(
    judge: RunningJudge, llm: FakeLLM, payload: bytes, message: str
) -> None:
    error = await _raw_call(judge, "Compare", payload)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert message in (error.details() or "")
    assert llm.chat_requests == []


BAD_REWRITES = {
    "empty query": (judge_pb2.RewriteRequest(query=" \n").SerializeToString(), "query is empty"),
    "too long query": (
        judge_pb2.RewriteRequest(query="why " * contract.MAX_TEXT_CHARS).SerializeToString(),
        "query is",
    ),
    "unknown field": (
        judge_pb2.RewriteRequest(query="why?").SerializeToString() + b"\x10\x01",
        "request: unknown field number(s) [2]",
    ),
}


@pytest.mark.parametrize(("payload", "message"), BAD_REWRITES.values(), ids=BAD_REWRITES.keys())
async def test_a_bad_rewrite_is_invalid_argument_naming_the_field(
    judge: RunningJudge, llm: FakeLLM, payload: bytes, message: str
) -> None:
    error = await _raw_call(judge, "Rewrite", payload)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert message in (error.details() or "")
    assert llm.chat_requests == []


def test_an_unknown_enum_number_is_rejected_naming_the_field() -> None:
    # No request carries an enum today; the check covers any message, so a future request enum
    # is validated without new code. Judgement has one to exercise it.
    message = judge_pb2.CompareResponse(
        judgements=[judge_pb2.Judgement(memory_id="m1", verdict=99)]  # type: ignore[arg-type]
    )
    with pytest.raises(
        InvalidRequestError, match=r"judgements\[0\]\.verdict: unknown Verdict value 99"
    ):
        check_wire_compatible(message)

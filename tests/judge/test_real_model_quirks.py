"""What real models served by llama.cpp do, and the judge copes with: over gRPC, against FakeLLM."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from mem0mcp.judge.v1 import judge_pb2
from tests.fakes.judge_responder import judge_responder
from tests.fakes.llm import FakeLLM
from tests.judge.conftest import RunningJudge, judge_settings, running_judge

pytestmark = pytest.mark.anyio

COMPARE = judge_pb2.CompareRequest(
    fact="We moved the API to port 9000",
    candidates=[
        judge_pb2.CompareCandidate(memory_id="m1", text="The API listens on port 8080"),
        judge_pb2.CompareCandidate(memory_id="m2", text="I prefer tea"),
    ],
)


def _quoting_ids(body: dict[str, Any]) -> str | None:
    """The rule's answer with every id written as a string, as llama.cpp models often do."""
    content = judge_responder(body)
    if content is None or '"judgements"' not in content:
        return content
    return re.sub(r'"id": (\d+)', r'"id": "\1"', content)


async def test_ids_sent_as_strings_still_give_verdicts(judge: RunningJudge, llm: FakeLLM) -> None:
    llm.responders.insert(0, _quoting_ids)
    response = await judge.stub.Compare(COMPARE, timeout=10)
    assert [j.verdict for j in response.judgements] == [
        judge_pb2.VERDICT_SUPERSEDES,
        judge_pb2.VERDICT_UNRELATED,
    ]
    answered = json.loads(_quoting_ids(llm.chat_requests[0]) or "{}")
    assert [j["id"] for j in answered["judgements"]] == ["1", "2"]


async def test_for_llama_cpp_the_schema_rides_in_a_json_object_format(llm: FakeLLM) -> None:
    settings = judge_settings(llm, llm_response_format="json_object_schema")
    async with running_judge(settings) as judge:
        await judge.stub.Compare(COMPARE, timeout=10)
        await judge.stub.Rewrite(
            judge_pb2.RewriteRequest(query="what port does the API use?"), timeout=10
        )
    compare_body, rewrite_body = llm.chat_requests
    compare_format = compare_body["response_format"]
    assert compare_format["type"] == "json_object"
    items = compare_format["schema"]["properties"]["judgements"]["prefixItems"]
    assert [item["properties"]["id"]["enum"] for item in items] == [[1], [2]]
    assert rewrite_body["response_format"]["type"] == "json_object"
    assert rewrite_body["response_format"]["schema"]["required"] == ["statement"]


async def test_answers_are_bounded_in_tokens_by_the_batch_size(
    judge: RunningJudge, llm: FakeLLM
) -> None:
    await judge.stub.Compare(COMPARE, timeout=10)
    one = judge_pb2.CompareRequest(fact=COMPARE.fact, candidates=COMPARE.candidates[:1])
    await judge.stub.Compare(one, timeout=10)
    two_tokens, one_tokens = (body["max_tokens"] for body in llm.chat_requests)
    assert two_tokens > one_tokens > 0

"""The benchmarks' FakeLLM in a process of its own: it answers the judge's prompts as the
in-process fake does, and takes latency changes while it runs."""

from __future__ import annotations

import json

import httpx

from mem0_judge import compare_messages
from tests.fakes.llm_process import FakeLLMProcess


def _compare(base_url: str) -> dict[str, object]:
    messages = compare_messages("We moved the API to port 9000", ["The API listens on port 8080"])
    body = {
        "model": "fake-model",
        "messages": [{"role": m.role, "content": m.content} for m in messages],
    }
    response = httpx.post(f"{base_url}/chat/completions", json=body, timeout=30)
    response.raise_for_status()
    content: dict[str, object] = json.loads(response.json()["choices"][0]["message"]["content"])
    return content


def test_the_process_answers_the_judges_prompts_and_takes_a_new_latency() -> None:
    with FakeLLMProcess() as llm:
        answer = _compare(llm.base_url)
        llm.latency_seconds = 0.25
        assert llm.latency_seconds == 0.25  # the child's acknowledgement
        slowed = _compare(llm.base_url)
        base_url = llm.base_url
    assert answer == slowed
    assert answer["judgements"] == [
        {"id": 1, "verdict": "SUPERSEDES", "reason": "content overlap 0.67, values changed"}
    ]
    try:
        httpx.get(f"{base_url}/models", timeout=5)
    except httpx.TransportError:
        stopped = True
    else:
        stopped = False
    assert stopped

"""The judge-quality harness (`make eval-judge`) and its labelled set, run against FakeLLM."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest

from bench import judge_quality
from tests.fakes.judge_responder import rewrite_statement
from tests.fakes.llm import FakeLLM, fake_embedding
from tests.judge.conftest import judge_settings


def _embed(texts: Sequence[str]) -> list[list[float]]:
    return [fake_embedding(text, 64) for text in texts]


@pytest.fixture(scope="module")
def data() -> dict[str, Any]:
    return judge_quality.load_cases()


def test_the_set_has_150_cases_a_third_of_verdicts_per_class(data: dict[str, Any]) -> None:
    verdicts = Counter(s["verdict"] for case in data["compare"] for s in case["stored"])
    assert len(data["compare"]) >= 150
    assert set(verdicts) == set(judge_quality.CLASSES)
    assert max(verdicts.values()) - min(verdicts.values()) <= len(data["compare"]) // 30


def test_case_and_stored_ids_are_unique_and_every_case_is_tagged(data: dict[str, Any]) -> None:
    assert len({case["id"] for case in data["compare"]}) == len(data["compare"])
    for case in data["compare"]:
        assert len({s["id"] for s in case["stored"]}) == len(case["stored"]), case["id"]
        assert case["tags"], case["id"]


def test_there_are_50_questions_each_with_a_statement_and_its_fact(data: dict[str, Any]) -> None:
    assert len(data["questions"]) == 50
    for question in data["questions"]:
        assert question["question"].rstrip().endswith("?")
        assert question["statement"]
        assert question["fact"]


def test_a_run_scores_verdicts_confusion_failures_and_latency(
    llm: FakeLLM, data: dict[str, Any]
) -> None:
    llm.fail_next("garbage")  # the first call's answer is not JSON: one JSON failure
    result = judge_quality.evaluate(
        judge_settings(llm, llm_max_retries=0), data, limit=6, questions=4, embed=_embed
    )
    stored = [s for case in data["compare"][:6] for s in case["stored"]]
    assert result["n"] == len(stored)
    assert result["cases"] == 6
    assert result["json_failures"] == 1
    first = data["compare"][0]["stored"]
    assert sum(result["confusion"][g]["FAILED"] for g in judge_quality.CLASSES) == len(first)
    confusion_total = sum(sum(row.values()) for row in result["confusion"].values())
    assert confusion_total == len(stored)
    for gold in judge_quality.CLASSES:
        row = result["confusion"][gold]
        assert result["accuracy"][gold] == pytest.approx(row[gold] / sum(row.values()))
    assert 0 < result["latency_ms"]["p50"] <= result["latency_ms"]["p95"]
    assert result["failures"][0]["code"] == "INTERNAL"
    json.dumps(result)  # the result is written as JSON


def test_rewrites_are_measured_against_the_fact_that_answers_them(
    llm: FakeLLM, data: dict[str, Any]
) -> None:
    result = judge_quality.evaluate(judge_settings(llm), data, limit=0, questions=5, embed=_embed)
    rewrite = result["rewrite"]
    assert (rewrite["n"], rewrite["failures"]) == (5, 0)
    assert 0 <= rewrite["closer_than_question"] <= 1
    assert -1 <= rewrite["mean_cosine_to_gold_statement"] <= 1
    # The hand-written statements share the fact's words, so they embed closer than questions.
    assert rewrite["gold_closer_than_question"] > 0.5
    first = data["questions"][0]["question"]
    assert rewrite["examples"][0]["statement"] == rewrite_statement(first)


def test_without_an_endpoint_it_says_how_to_give_one_and_exits_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("JUDGE_LLM_BASE_URL", "JUDGE_LLM_MODEL", "MEM0_REWRITE_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    assert judge_quality.main([]) == 2
    assert "JUDGE_LLM_BASE_URL" in capsys.readouterr().err

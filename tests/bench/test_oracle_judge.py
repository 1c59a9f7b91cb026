"""The eval's oracle judge: verdicts from the dataset's labels, through the judge's real prompt."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bench.eval.__main__ import parser
from bench.eval._dataset import load
from bench.eval._replay import labels
from bench.eval.floors import judge_label
from mem0_judge import compare_messages, rewrite_messages
from tests.fakes.oracle_judge import oracle_judge_responder, oracle_rule

PORT_A = "The API listens on port 8080."
PORT_A_AGAIN = "Port 8080 is where the API listens."
PORT_B = "The API moved to port 9000."
TIMEOUT = "Requests to the API time out after 8080 ms."

LABELS = {
    PORT_A: {("F1", "8080")},
    PORT_A_AGAIN: {("F1", "8080")},
    PORT_B: {("F1", "9000")},
    TIMEOUT: {("F2", "8080")},
}


def test_the_same_fact_with_the_same_value_is_same_however_worded() -> None:
    assert oracle_rule(LABELS)(PORT_A_AGAIN, PORT_A)[0] == "SAME"


def test_the_same_fact_with_another_value_supersedes() -> None:
    assert oracle_rule(LABELS)(PORT_B, PORT_A)[0] == "SUPERSEDES"
    assert oracle_rule(LABELS)(PORT_A, PORT_B)[0] == "SUPERSEDES"


def test_another_fact_is_unrelated_even_with_the_same_value() -> None:
    assert oracle_rule(LABELS)(TIMEOUT, PORT_A) == ("UNRELATED", "different facts")


def test_an_unlabelled_text_is_unrelated() -> None:
    assert oracle_rule(LABELS)("I prefer tea.", PORT_A) == ("UNRELATED", "unlabelled text")


def test_texts_match_their_labels_whatever_their_case_and_spacing() -> None:
    assert oracle_rule(LABELS)("  the API   listens on port 8080. ", PORT_A_AGAIN)[0] == "SAME"


def test_a_sentence_two_namespaces_share_is_the_same_fact_as_either() -> None:
    shared = {"The cache runs on 2 nodes.": {("F1", "2"), ("F9", "2")}}
    rule = oracle_rule({**shared, "Our cache has 3 nodes now.": {("F9", "3")}})
    assert rule("Our cache has 3 nodes now.", "The cache runs on 2 nodes.")[0] == "SUPERSEDES"


def _body(messages: list[Any]) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": m.role, "content": m.content} for m in messages]}


def test_it_answers_the_judges_real_compare_prompt_per_memory_in_order() -> None:
    respond = oracle_judge_responder(LABELS)
    answer = respond(_body(compare_messages(PORT_B, [TIMEOUT, PORT_A, PORT_A_AGAIN])))
    assert answer is not None
    verdicts = [(j["id"], j["verdict"]) for j in json.loads(answer)["judgements"]]
    assert verdicts == [(1, "UNRELATED"), (2, "SUPERSEDES"), (3, "SUPERSEDES")]


def test_it_rewrites_by_the_word_overlap_fakes_template() -> None:
    answer = oracle_judge_responder(LABELS)(_body(rewrite_messages("what port does the API use?")))
    assert answer is not None
    assert json.loads(answer) == {"statement": "The API uses port"}


def test_on_the_shipped_dataset_it_tells_versions_of_a_fact_from_look_alikes() -> None:
    dataset = load()
    rule = oracle_rule(labels(dataset))
    by_fact: dict[str, list[tuple[str, str]]] = {}
    for event in dataset.events:
        by_fact.setdefault(event.fact, []).append((event.text, event.value))
    facts = {f.id: f for f in dataset.facts}
    changed = next(f for f in dataset.facts if f.kind == "changed" and f.role == "gold")
    (first, old), (second, new) = by_fact[changed.id][0], by_fact[changed.id][-1]
    assert old != new
    assert rule(second, first)[0] == "SUPERSEDES"
    reconfirmed = next(f for f in dataset.facts if f.kind == "reconfirmed" and f.role == "gold")
    texts = [text for text, _ in by_fact[reconfirmed.id]]
    assert {rule(later, texts[0])[0] for later in texts[1:]} == {"SAME"}
    look_alikes = [f for f in dataset.facts if f.kind == "lookalike"]
    one, other = next(
        (a, b)
        for a in look_alikes
        for b in look_alikes
        if a.id != b.id and a.scope == b.scope and a.subject == b.subject
    )
    assert facts[one.id].attribute != facts[other.id].attribute
    assert rule(by_fact[one.id][0][0], by_fact[other.id][0][0])[0] == "UNRELATED"


def test_with_an_error_rate_it_is_wrong_on_that_share_of_pairs_the_same_way_each_run() -> None:
    dataset = load()
    texts = sorted({event.text for event in dataset.events})[:120]
    pairs = [(a, b) for a in texts for b in texts if a != b]
    right, noisy = oracle_rule(labels(dataset)), oracle_rule(labels(dataset), error_rate=0.2)
    wrong = [p for p in pairs if noisy(*p)[0] != right(*p)[0]]
    assert 0.17 < len(wrong) / len(pairs) < 0.23
    again = oracle_rule(labels(dataset), error_rate=0.2)
    assert [noisy(*p) for p in pairs] == [again(*p) for p in pairs]
    assert {noisy(*p)[0] for p in wrong} == {"SAME", "SUPERSEDES", "UNRELATED"}


def test_an_error_rate_outside_zero_to_one_is_refused() -> None:
    with pytest.raises(ValueError, match="error_rate"):
        oracle_rule(LABELS, error_rate=1.5)


def test_the_eval_refuses_an_oracle_error_rate_outside_zero_to_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert parser().parse_args(["--oracle-error-rate", "0.1"]).oracle_error_rate == 0.1
    with pytest.raises(SystemExit):
        parser().parse_args(["--oracle-error-rate", "1.5"])
    assert "a share within 0..1, not 1.5" in capsys.readouterr().err


def test_a_floor_plot_names_the_oracles_error_rate() -> None:
    assert judge_label("oracle") == "oracle judge, never wrong"
    assert judge_label("oracle", 0.25) == "oracle judge, wrong on 25% of pairs"
    assert judge_label("fake", 0.25) == "fake judge, which over-merges"

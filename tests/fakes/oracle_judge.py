"""A fake judge LLM that is never wrong about labelled statements: the eval's ceiling.

The eval (`bench/eval`) knows which fact, and which value of it, each statement it replays
states. Given those labels, this rule answers Compare as a perfect judge would: the same fact
with the same value is SAME, the same fact with another value SUPERSEDES, anything else
(another fact, or a text it has no label for) UNRELATED. Rewrite stays the word-overlap fake's
template (`tests/fakes/judge_responder.py`), so only the verdicts differ from the `fake` judge.

It exists to measure what the bridge does with a judge that can be trusted, which no model
this project can run here is (`make eval-judge`): the shortfall of the other judges is then
the judge's, not the ranking's. It is not a judge anyone can deploy.

A text may state facts of several namespaces (the same sentence in two projects): it carries
every label it has, and a pair is the same fact when their labels share one.

With an `error_rate`, it is wrong on that share of pairs, chosen and answered deterministically
(a hash of the pair picks which pairs, and which of the two wrong verdicts): a stand-in for a
judge of known accuracy, to see which verdict floor such a judge needs (`make eval-floor` with
`--judge oracle --oracle-error-rate P`). Real judges' errors are not uniform (the word-overlap
fake's are mostly over-merges of same-subject facts); this says how errors in general cost.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping

from bench.eval._metrics import Owner, text_key
from tests.fakes.judge_responder import Rule, judge_responder_with
from tests.fakes.llm import ChatResponder

VERDICTS = ("SAME", "SUPERSEDES", "UNRELATED")


def oracle_rule(labels: Mapping[str, Iterable[Owner]], error_rate: float = 0.0) -> Rule:
    """The perfect judge's rule over `labels` (each text's (fact id, value) labels, matched by
    the eval's `text_key`), wrong on `error_rate` of the pairs."""
    if not 0.0 <= error_rate <= 1.0:
        raise ValueError(f"error_rate must be within 0..1, got {error_rate}")
    known = {text_key(text): frozenset(found) for text, found in labels.items()}

    def right(fact_key: str, memory_key: str) -> tuple[str, str]:
        new = known.get(fact_key, frozenset())
        stored = known.get(memory_key, frozenset())
        shared = {f for f, _ in new} & {f for f, _ in stored}
        if not shared:
            return "UNRELATED", "different facts" if new and stored else "unlabelled text"
        if new & stored:
            return "SAME", "same fact, same value"
        return "SUPERSEDES", "same fact, another value"

    def rule(fact: str, memory: str) -> tuple[str, str]:
        fact_key, memory_key = text_key(fact), text_key(memory)
        verdict, reason = right(fact_key, memory_key)
        if error_rate <= 0.0:
            return verdict, reason
        digest = hashlib.sha256(f"{fact_key}\0{memory_key}".encode()).digest()
        if int.from_bytes(digest[:4], "big") / 2**32 >= error_rate:
            return verdict, reason
        wrong = [v for v in VERDICTS if v != verdict]
        return wrong[digest[4] % 2], f"deliberately wrong (was {verdict}: {reason})"

    return rule


def oracle_judge_responder(
    labels: Mapping[str, Iterable[Owner]], error_rate: float = 0.0
) -> ChatResponder:
    """A responder for `FakeLLM` that answers the judge's prompts with `oracle_rule`."""
    return judge_responder_with(oracle_rule(labels, error_rate))

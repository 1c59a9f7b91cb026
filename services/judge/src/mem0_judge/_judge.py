"""What the judge does, apart from gRPC: one LLM call per Compare batch, cached Rewrites."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mem0_judge._answers import JudgementAnswer, parse_compare, parse_rewrite
from mem0_judge._cache import TTLCache
from mem0_judge._llm import LLMClient
from mem0_judge._metrics import REWRITE_CACHE
from mem0_judge._prompts import compare_messages, rewrite_messages
from mem0_judge._questions import is_question


@dataclass(frozen=True)
class Rewrite:
    statement: str
    rewritten: bool
    cached: bool


class Judge:
    """Judgements and rewrites from `llm`; `deadline` arguments are `time.monotonic()` bounds."""

    def __init__(self, llm: LLMClient, cache: TTLCache[str]) -> None:
        self._llm = llm
        self._cache = cache

    async def compare(
        self, fact: str, candidate_texts: Sequence[str], deadline: float | None
    ) -> list[JudgementAnswer]:
        answer = await self._llm.complete_json(
            compare_messages(fact, candidate_texts), operation="compare", deadline=deadline
        )
        return parse_compare(answer, len(candidate_texts))

    async def rewrite(self, query: str, deadline: float | None) -> Rewrite:
        text = " ".join(query.split())
        if not is_question(text):
            return Rewrite(statement=text, rewritten=False, cached=False)

        async def ask() -> str:
            answer = await self._llm.complete_json(
                rewrite_messages(text), operation="rewrite", deadline=deadline
            )
            return parse_rewrite(answer)

        statement, result = await self._cache.get_or_compute(text, ask)
        REWRITE_CACHE.labels(result).inc()
        return Rewrite(statement=statement, rewritten=True, cached=result != "miss")

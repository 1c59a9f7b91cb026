"""What the judge does, apart from gRPC: one LLM call per Compare batch, cached Rewrites."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from mem0_common import is_question
from mem0_judge._answers import (
    REWRITE_SCHEMA,
    JudgementAnswer,
    compare_schema,
    parse_compare,
    parse_rewrite,
)
from mem0_judge._cache import TTLCache
from mem0_judge._errors import JudgeError
from mem0_judge._health import LLMHealth
from mem0_judge._llm import LLMClient
from mem0_judge._metrics import REWRITE_CACHE
from mem0_judge._prompts import compare_messages, rewrite_messages

_T = TypeVar("_T")

#: Answer budgets in tokens: a judgement with its short reason takes ~30, a statement ~25. They
#: bound how long a rambling model can run (on a CPU, ~10-20 tokens a second).
COMPARE_BASE_TOKENS = 32
COMPARE_TOKENS_PER_CANDIDATE = 64
REWRITE_TOKENS = 96


@dataclass(frozen=True)
class Rewrite:
    statement: str
    rewritten: bool
    cached: bool


class Judge:
    """Judgements and rewrites from `llm`; `deadline` arguments are `time.monotonic()` bounds.

    Each LLM call's outcome (an answer that passed the schema, or a `JudgeError`) goes to
    `health`; calls that never reach the LLM (pass-through rewrites, cache hits) do not.
    """

    def __init__(
        self, llm: LLMClient, cache: TTLCache[str], health: LLMHealth | None = None
    ) -> None:
        self._llm = llm
        self._cache = cache
        self.health = health or LLMHealth(degraded_after=3)

    async def _observed(self, call: Callable[[], Awaitable[_T]]) -> _T:
        try:
            result = await call()
        except JudgeError:
            await self.health.record(ok=False)
            raise
        await self.health.record(ok=True)
        return result

    async def compare(
        self, fact: str, candidate_texts: Sequence[str], deadline: float | None
    ) -> list[JudgementAnswer]:
        n = len(candidate_texts)

        async def ask() -> list[JudgementAnswer]:
            answer = await self._llm.complete_json(
                compare_messages(fact, candidate_texts),
                operation="compare",
                deadline=deadline,
                schema=compare_schema(n),
                max_tokens=COMPARE_BASE_TOKENS + COMPARE_TOKENS_PER_CANDIDATE * n,
            )
            return parse_compare(answer, n)

        return await self._observed(ask)

    async def rewrite(self, query: str, deadline: float | None) -> Rewrite:
        text = " ".join(query.split())
        if not is_question(text):
            return Rewrite(statement=text, rewritten=False, cached=False)

        async def ask() -> str:
            answer = await self._llm.complete_json(
                rewrite_messages(text),
                operation="rewrite",
                deadline=deadline,
                schema=REWRITE_SCHEMA,
                max_tokens=REWRITE_TOKENS,
            )
            return parse_rewrite(answer)

        statement, result = await self._cache.get_or_compute(text, lambda: self._observed(ask))
        REWRITE_CACHE.labels(result).inc()
        return Rewrite(statement=statement, rewritten=True, cached=result != "miss")

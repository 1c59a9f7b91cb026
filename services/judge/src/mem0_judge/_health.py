"""Whether the LLM behind the judge has been answering: the judge's "degraded" signal.

The judge reports two names through the standard gRPC health service:

* `mem0mcp.judge.v1.JudgeService`: SERVING when an LLM is configured (the process can judge);
* `mem0mcp.judge.v1.JudgeService.llm` (`LLM_HEALTH_SERVICE`): NOT_SERVING once the last
  `JUDGE_LLM_DEGRADED_AFTER_FAILURES` LLM calls in a row failed (unreachable, 429/5xx past the
  retries, timed out, rejected, or answered off the schema), SERVING again on the next success.
  It starts SERVING when an LLM is configured (nothing has failed yet) and NOT_SERVING when none
  is. A caller shows "degraded" when the first is SERVING and the second is not.

Only real LLM calls count: invalid requests, pass-through rewrites and cache hits say nothing
about the LLM, and a call its caller cancelled has no outcome.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from mem0_judge._metrics import LLM_CONSECUTIVE_FAILURES

#: Receives the new state (True: healthy) each time it changes.
HealthListener = Callable[[bool], Awaitable[None]]


class LLMHealth:
    """Counts consecutive failed LLM calls; tells `listener` when healthy flips."""

    def __init__(self, degraded_after: int, listener: HealthListener | None = None) -> None:
        self._degraded_after = degraded_after
        self._listener = listener
        self.consecutive_failures = 0
        self.healthy = True

    def listen(self, listener: HealthListener) -> None:
        self._listener = listener

    async def record(self, ok: bool) -> None:
        self.consecutive_failures = 0 if ok else self.consecutive_failures + 1
        LLM_CONSECUTIVE_FAILURES.set(self.consecutive_failures)
        healthy = self.consecutive_failures < self._degraded_after
        if healthy != self.healthy:
            self.healthy = healthy
            if self._listener is not None:
                await self._listener(healthy)

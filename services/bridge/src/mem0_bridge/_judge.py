"""Client of the judge: verdicts on a new fact against close memories, and query rewriting.

Both calls are best-effort: a `PeerFailure` means no judgement, and the caller proceeds without
one, saying why.
"""

from __future__ import annotations

import enum
import math
import statistics
from collections import deque
from collections.abc import Sequence

import anyio

from mem0_bridge._grpc import GrpcPeer, PeerFailure
from mem0mcp.contract import normalise_text
from mem0mcp.judge.v1 import judge_pb2, judge_pb2_grpc

#: How long a judge's "no LLM" health answer is trusted before it is asked again.
HEALTH_TTL_SECONDS = 1.0
#: The health name under which the judge reports whether its LLM answered its latest calls.
LLM_HEALTH_SUFFIX = ".llm"
#: How many of the latest Compare calls tell how long a verdict takes now.
LATENCY_WINDOW = 8


class Verdict(enum.Enum):
    SAME = "same"
    SUPERSEDES = "supersedes"
    UNRELATED = "unrelated"


_VERDICTS = {
    judge_pb2.VERDICT_SAME: Verdict.SAME,
    judge_pb2.VERDICT_SUPERSEDES: Verdict.SUPERSEDES,
}


#: The name the judge reports its service's health under: NOT_SERVING without an LLM.
_SERVICE = judge_pb2.DESCRIPTOR.services_by_name["JudgeService"].full_name


class JudgeClient:
    def __init__(self, address: str, timeout_seconds: float) -> None:
        stub = judge_pb2_grpc.JudgeServiceStub
        self.peer = GrpcPeer("judge", address, timeout_seconds, stub, health_service=_SERVICE)
        self._health = "serving"
        self._health_checked_at = -HEALTH_TTL_SECONDS
        #: Seconds the latest Compare calls took; one cut at its deadline counts as infinite
        #: (it took longer than that, by how much nobody knows).
        self._compare_seconds: deque[float] = deque(maxlen=LATENCY_WINDOW)

    async def aclose(self) -> None:
        await self.peer.aclose()

    async def usable(self) -> PeerFailure | None:
        """None when a verdict can be asked for; why not when the judge is off or has no LLM.

        A judge without an LLM answers every Compare with UNAVAILABLE, which would look like an
        outage on each add; its health service says NOT_SERVING instead, which is remembered
        for a second (so a judge restarted with an LLM is used again at once). A health check
        that fails says nothing: the call is tried and fails on its own terms.
        """
        now = anyio.current_time()
        if now >= self._health_checked_at + HEALTH_TTL_SECONDS:
            self._health = await self.peer.probe()
            self._health_checked_at = anyio.current_time()
        if self._health == "off":
            return self.peer.off
        if self._health == "not serving":
            return PeerFailure(self.peer.name, None, "no LLM configured")
        return None

    def recent_compare_seconds(self) -> float | None:
        """The median time of the latest Compare calls (infinite when most were cut at their
        deadline); None before any."""
        return statistics.median(self._compare_seconds) if self._compare_seconds else None

    async def compare(
        self,
        fact: str,
        candidates: Sequence[tuple[str, str]],
        *,
        deadline: float | None = None,
    ) -> dict[str, Verdict] | PeerFailure:
        """Verdict per candidate memory id; `deadline` (seconds) instead of the client's.
        Candidates of one text (`normalise_text`) are judged once, and share the verdict: a
        verdict is on the words, and copies must not take the judge's places from the others."""
        # Per text, the first candidate's text and the ids of every candidate holding it.
        twins: dict[str, tuple[str, list[str]]] = {}
        for memory_id, text in candidates:
            twins.setdefault(normalise_text(text), (text, []))[1].append(memory_id)
        request = judge_pb2.CompareRequest(
            fact=fact,
            candidates=[
                judge_pb2.CompareCandidate(memory_id=ids[0], text=text)
                for text, ids in twins.values()
            ],
        )
        started = anyio.current_time()
        answer = await self.peer.call(lambda stub: stub.Compare, request, deadline=deadline)
        if isinstance(answer, PeerFailure):
            if answer.timed_out:
                self._compare_seconds.append(math.inf)
            return answer
        self._compare_seconds.append(anyio.current_time() - started)
        by_first = {ids[0]: ids for _, ids in twins.values()}
        return {
            memory_id: _VERDICTS.get(j.verdict, Verdict.UNRELATED)
            for j in answer.judgements
            for memory_id in by_first.get(j.memory_id, [j.memory_id])
        }

    async def rewrite(self, query: str, deadline: float) -> str | PeerFailure | None:
        """The statement a question-style query becomes; None when it already was one."""
        answer = await self.peer.call(
            lambda stub: stub.Rewrite, judge_pb2.RewriteRequest(query=query), deadline=deadline
        )
        if isinstance(answer, PeerFailure):
            return answer
        statement = answer.statement.strip()
        return statement if answer.rewritten and statement else None

"""The memory operations behind the tools, independent of MCP.

Adds reconcile instead of piling up (exact duplicate -> nothing; judged SAME -> reinforce;
judged SUPERSEDES -> update in place; else add). Searches over-fetch, optionally add the
rewritten question, merge and rerank. The ranker and judge are helpers: when they fail, the
operation still completes and the result's notes say what was skipped.
"""

from __future__ import annotations

import functools
import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import anyio

from mem0_bridge._errors import BridgeError
from mem0_bridge._judge import JudgeClient, Verdict
from mem0_bridge._locks import KeyedLocks
from mem0_bridge._mem0 import Mem0Client, Mem0Error, Memory
from mem0_bridge._models import (
    AddAction,
    AddResult,
    ChangeResult,
    HistoryEvent,
    HistoryResult,
    Hit,
    ListResult,
    Pin,
    PinResult,
    PinsResult,
    ResetResult,
    SearchResult,
)
from mem0_bridge._ranker import RankCandidate, RankerClient
from mem0_bridge._render import format_age, newest_time
from mem0_bridge._scopes import (
    PINS_GLOBAL,
    PinScope,
    Scope,
    is_pin_namespace,
    pin_namespace,
    ranker_scope,
    read_namespaces,
    write_namespace,
)
from mem0_bridge._settings import BridgeSettings

logger = logging.getLogger(__name__)
_T = TypeVar("_T")

MAX_TEXT_LENGTH = 20_000
#: mem0's REST server caps GET /memories at 1000 items.
LIST_CAP = 1000
#: Upper bound of one search's top_k, whatever limit x overfetch asks for.
SEARCH_CAP = 200

RANKER_DOWN_SEARCH = (
    "ranker unavailable: results are in mem0's similarity order, without mention and recency "
    "reranking"
)
RANKER_DOWN_ADD = "ranker unavailable: the add was not checked for exact duplicates"
RANKER_OFF_SEARCH = (
    "ranker off (MEM0_RANKER_ADDRESS is empty): results are in mem0's similarity order"
)
JUDGE_DOWN_ADD = "judge unavailable: the add was not reconciled with similar memories"
OVER_BUDGET = "question rewrite skipped: it did not fit the latency budget"
JUDGE_DOWN_SEARCH = "judge unavailable: the question was searched as asked, not rewritten"


@dataclass(frozen=True)
class Where:
    """Who the call is for: a scope key (overrides everything) and the project, if known."""

    key: str | None
    project: str | None


async def gather(*calls: Callable[[], Awaitable[_T]]) -> list[_T]:
    """Run `calls` concurrently; a failure is raised as itself, not as an exception group.

    The caller turns a `Mem0Error` into the agent's message, and a group would hide it.
    """
    results: list[_T | None] = [None] * len(calls)
    errors: list[Exception] = []

    async def run(index: int, call: Callable[[], Awaitable[_T]]) -> None:
        try:
            results[index] = await call()
        except Exception as exc:  # re-raised below, unwrapped
            errors.append(exc)

    async with anyio.create_task_group() as tasks:
        for index, call in enumerate(calls):
            tasks.start_soon(run, index, call)
    if errors:
        raise errors[0]
    return cast(list[_T], results)


def normalise(text: str) -> str:
    return " ".join(text.split()).casefold()


def check_text(text: str, field: str = "text") -> str:
    cleaned = text.strip()
    if not cleaned:
        raise BridgeError(f"{field} must not be empty.")
    if len(cleaned) > MAX_TEXT_LENGTH:
        raise BridgeError(
            f"{field} is {len(cleaned)} characters; the limit is {MAX_TEXT_LENGTH}. Store one "
            "self-contained fact per call."
        )
    return cleaned


def check_memory_id(memory_id: str) -> str:
    """A canonical UUID, checked before any request is sent."""
    try:
        return str(uuid.UUID(memory_id.strip()))
    except (ValueError, AttributeError):
        raise BridgeError(
            f"memory_id must be a memory's UUID (like 123e4567-e89b-12d3-a456-426614174000), "
            f"got {memory_id!r}; take it from memory_search or memory_list."
        ) from None


def _hit(memory: Memory, *, score: float | None, mentions: int | None = None) -> Hit:
    return Hit(
        id=memory.id,
        text=memory.text,
        namespace=memory.run_id,
        score=score,
        similarity=memory.score,
        mentions=mentions,
        age=format_age(memory.created_at, memory.updated_at),
        created_at=memory.created_at,
        updated_at=memory.updated_at,
    )


def _pin(memory: Memory) -> Pin:
    return Pin(
        id=memory.id,
        text=memory.text,
        namespace=memory.run_id or "",
        created_at=memory.created_at,
    )


@dataclass
class _NewFact:
    """A fact being added, where it goes, and what the steps found worth telling."""

    text: str
    namespace: str
    rscope: str
    notes: list[str] = field(default_factory=list)
    #: `normalise(text)`, what every comparison with another text uses.
    normalised: str = field(init=False)

    def __post_init__(self) -> None:
        self.normalised = normalise(self.text)


@dataclass
class _Rewrite:
    """What the rewritten search reports back besides its hits."""

    statement: str | None = None
    notes: list[str] = field(default_factory=list)


class MemoryService:
    def __init__(
        self,
        settings: BridgeSettings,
        mem0: Mem0Client,
        ranker: RankerClient,
        judge: JudgeClient,
    ) -> None:
        self.settings = settings
        self.mem0 = mem0
        self.ranker = ranker
        self.judge = judge
        self.user_id = settings.default_user_id
        self._adding = KeyedLocks()

    # ---- add -------------------------------------------------------------------------------

    async def add(self, text: str, scope: Scope, where: Where) -> AddResult:
        """Store a fact, unless it is already there: duplicate, reinforce, update, else add."""
        text = check_text(text)
        namespace = write_namespace(scope, where.key, where.project)
        new = _NewFact(text, namespace, ranker_scope(self.user_id, namespace))
        async with self._adding.hold((new.rscope, new.normalised)):
            outcome = (
                await self._recent_duplicate(new)
                or await self._reconcile(new)
                or await self._store(new)
            )
        return outcome.model_copy(update={"notes": new.notes})

    def _result(self, new: _NewFact, action: AddAction, ids: list[str], **extra: Any) -> AddResult:
        return AddResult(action=action, memory_ids=ids, namespace=new.namespace, notes=[], **extra)

    async def _recent_duplicate(self, new: _NewFact) -> AddResult | None:
        """Step 1: the same text was recorded in this scope within the window (no mem0 call)."""
        check = await self.ranker.check_duplicate(new.rscope, new.text)
        if check is None:
            if self.ranker.peer.configured:
                new.notes.append(RANKER_DOWN_ADD)
            return None
        if check.memory_id is None:
            return None
        return self._result(new, "duplicate", [check.memory_id], memories=[new.text])

    async def _reconcile(self, new: _NewFact) -> AddResult | None:
        """Step 2: a close memory that states the same fact (reinforce) or an older value of it
        (update in place); None when nothing close enough is the same fact."""
        candidates = [
            c
            for c in await self.mem0.search(
                new.text,
                user_id=self.user_id,
                run_id=new.namespace,
                top_k=self.settings.judge_max_candidates,
            )
            if (c.score or 0.0) >= self.settings.reinforcement_prefilter_threshold
        ]
        exact = next((c for c in candidates if normalise(c.text) == new.normalised), None)
        if exact is not None:
            # Restated after the dedupe window: a reconfirmation, which is what mentions count.
            await self.ranker.record_stored(new.rscope, new.text, exact.id)
            return await self._reinforced(new, exact)
        if not candidates or not self.judge.peer.configured:
            return None
        verdicts = await self.judge.compare(new.text, [(c.id, c.text) for c in candidates])
        if verdicts is None:
            new.notes.append(JUDGE_DOWN_ADD)
            return None
        same = next((c for c in candidates if verdicts.get(c.id) is Verdict.SAME), None)
        if same is not None:
            return await self._reinforced(new, same)
        old = next((c for c in candidates if verdicts.get(c.id) is Verdict.SUPERSEDES), None)
        if old is None:
            return None
        # Same id, so mem0 keeps the history and the ranker keeps the mention count.
        await self.mem0.update(old.id, new.text)
        await self.ranker.record_stored(new.rscope, new.text, old.id)
        return self._result(new, "updated", [old.id], memories=[new.text], previous_text=old.text)

    async def _reinforced(self, new: _NewFact, memory: Memory) -> AddResult:
        reinforcement = await self.ranker.reinforce(new.rscope, memory.id)
        mentions = None
        if reinforcement is None:
            if self.ranker.peer.configured:
                new.notes.append("ranker unavailable: the mention was not counted")
        else:
            mentions = reinforcement.mentions
            if not reinforcement.counted:
                new.notes.append("mention already counted recently (debounced)")
        return self._result(
            new, "reinforced", [memory.id], memories=[memory.text], mentions=mentions
        )

    async def _store(self, new: _NewFact) -> AddResult:
        """Step 3: add through mem0, then record what it stored with the ranker."""
        stored = await self.mem0.add(
            new.text,
            user_id=self.user_id,
            run_id=new.namespace,
            infer=self.settings.infer,
            metadata={"source": "mem0-bridge"},
        )
        added = [(memory_id, memory) for memory_id, memory, event in stored if event == "ADD"]
        if not added:
            return self._result(new, "unchanged", [], memories=[])
        # Recorded only now that mem0 confirmed the add: the input text (what a repeat call
        # sends) and each stored memory's own text, so either repeated is seen as a duplicate.
        await self.ranker.record_stored(new.rscope, new.text, added[0][0])
        for memory_id, memory in added:
            if memory and normalise(memory) != new.normalised:
                await self.ranker.record_stored(new.rscope, memory, memory_id)
        return self._result(
            new, "added", [i for i, _ in added], memories=[m or new.text for _, m in added]
        )

    # ---- search ----------------------------------------------------------------------------

    async def search(self, query: str, scope: Scope, limit: int, where: Where) -> SearchResult:
        query = check_text(query, "query")
        namespaces = read_namespaces(scope, where.key, where.project, merge_global=True)
        top_k = min(limit * self.settings.search_overfetch, SEARCH_CAP)
        notes: list[str] = []
        rewrite = _Rewrite()
        raw, rewritten = await gather(
            functools.partial(self._search_namespaces, query, namespaces, top_k),
            functools.partial(self._search_rewritten, query, namespaces, top_k, rewrite),
        )
        notes.extend(rewrite.notes)
        statement = rewrite.statement

        merged: dict[str, Memory] = {}
        for memory in [*raw, *rewritten]:
            if is_pin_namespace(memory.run_id):
                continue
            best = merged.get(memory.id)
            if best is None or (memory.score or 0.0) > (best.score or 0.0):
                merged[memory.id] = memory
        candidates = sorted(merged.values(), key=lambda m: m.score or 0.0, reverse=True)

        ranked = (
            await self.ranker.rerank(
                [
                    RankCandidate(
                        memory_id=m.id,
                        similarity=m.score or 0.0,
                        created_at=m.created_at or "",
                        updated_at=m.updated_at or "",
                    )
                    for m in candidates
                ],
                limit,
            )
            if candidates
            else []
        )
        if ranked is None:
            notes.append(RANKER_DOWN_SEARCH if self.ranker.peer.configured else RANKER_OFF_SEARCH)
            hits = [_hit(m, score=m.score) for m in candidates[:limit]]
        else:
            hits = [
                _hit(merged[r.memory_id], score=r.score, mentions=r.mentions)
                for r in ranked
                if r.memory_id in merged
            ][:limit]
        return SearchResult(
            query=query,
            rewritten_query=statement,
            reranked=ranked is not None,
            hits=hits,
            notes=notes,
        )

    async def _search_rewritten(
        self, query: str, namespaces: Sequence[str] | None, top_k: int, rewrite: _Rewrite
    ) -> list[Memory]:
        """Search the statement that would answer a question, within the latency budget.

        Best effort: whatever goes wrong (judge down, slow, mem0 failing on this second
        search) leaves the raw query's results standing, with a note when worth telling.
        """
        if not (self.settings.query_rewrite and self.judge.peer.configured):
            return []
        budget = self.settings.rewrite_budget_ms / 1000
        started = anyio.current_time()
        statement = await self._rewritten(query, budget, rewrite)
        if statement is None:
            return []
        # The gRPC deadline bounded the rewrite; the rest of the budget bounds this search
        # (an httpx call cancels cleanly, a cancelled gRPC call may not).
        with anyio.move_on_after(budget - (anyio.current_time() - started)):
            try:
                found = await self._search_namespaces(statement, namespaces, top_k)
            except Mem0Error as exc:
                logger.warning("search of the rewritten query failed: %s", exc)
                return []
            rewrite.statement = statement
            return found
        rewrite.notes.append(OVER_BUDGET)
        return []

    async def _rewritten(self, query: str, budget: float, rewrite: _Rewrite) -> str | None:
        """The statement worth searching besides the query, if the judge gives one in time."""
        answer = await self.judge.rewrite(query, deadline=budget)
        if answer is None or answer.over_budget:
            rewrite.notes.append(JUDGE_DOWN_SEARCH if answer is None else OVER_BUDGET)
            return None
        statement = answer.statement
        if statement is None or normalise(statement) == normalise(query):
            return None
        return statement

    async def _search_namespaces(
        self, query: str, namespaces: Sequence[str] | None, top_k: int
    ) -> list[Memory]:
        """One mem0 search over the namespaces (None: every namespace; the caller drops pins)."""
        return await self.mem0.search(query, user_id=self.user_id, run_id=namespaces, top_k=top_k)

    # ---- list / recent ---------------------------------------------------------------------

    async def _list_namespaces(self, namespaces: Sequence[str] | None, top_k: int) -> list[Memory]:
        if namespaces is None:
            memories = await self._list_one(None, LIST_CAP)
            return [m for m in memories if not is_pin_namespace(m.run_id)]
        found = await gather(*(functools.partial(self._list_one, ns, top_k) for ns in namespaces))
        return [memory for memories in found for memory in memories]

    async def _list_one(self, namespace: str | None, top_k: int) -> list[Memory]:
        return await self.mem0.list_memories(user_id=self.user_id, run_id=namespace, top_k=top_k)

    async def list_scope(self, scope: Scope, limit: int, where: Where) -> ListResult:
        namespaces = read_namespaces(scope, where.key, where.project, merge_global=False)
        memories = await self._list_namespaces(namespaces, min(limit, LIST_CAP))
        notes = []
        if len(memories) > limit:
            notes.append(f"showing {limit} of {len(memories)}+; use memory_search to recall")
        return ListResult(
            namespaces=list(namespaces) if namespaces is not None else None,
            hits=[_hit(m, score=None) for m in memories[:limit]],
            notes=notes,
        )

    async def recent(self, scope: Scope, limit: int, where: Where) -> ListResult:
        namespaces = read_namespaces(scope, where.key, where.project, merge_global=False)
        # mem0 lists in no particular order, so fetch what the server allows and sort here.
        memories = await self._list_namespaces(namespaces, LIST_CAP)
        memories.sort(key=_sort_time, reverse=True)
        return ListResult(
            namespaces=list(namespaces) if namespaces is not None else None,
            hits=[_hit(m, score=None) for m in memories[:limit]],
            notes=[],
        )

    # ---- pins ------------------------------------------------------------------------------

    async def pin(self, text: str, scope: PinScope, where: Where) -> PinResult:
        text = check_text(text)
        namespace = pin_namespace(scope, where.key, where.project)
        existing = await self._list_one(namespace, LIST_CAP)
        wanted = normalise(text)
        same = next((m for m in existing if normalise(m.text) == wanted), None)
        if same is not None:
            return PinResult(action="already_pinned", pin=_pin(same))
        stored = await self.mem0.add(
            text,
            user_id=self.user_id,
            run_id=namespace,
            infer=False,
            metadata={"source": "mem0-bridge", "pinned": True},
        )
        if not stored:
            raise BridgeError(
                "mem0 did not store the pin (no id came back); retry, and tell the user if it "
                "happens again."
            )
        memory_id, memory, _ = stored[0]
        return PinResult(
            action="pinned",
            pin=Pin(id=memory_id, text=memory or text, namespace=namespace, created_at=None),
        )

    async def pins(self, where: Where) -> PinsResult:
        notes: list[str] = []
        local_namespace: str | None = None
        local_name = where.key if where.key is not None else where.project
        if local_name is None:
            notes.append(
                'no project known, so only global pins are shown; pass project="<repository '
                "name>\" to get this project's pins too"
            )
        else:
            local_namespace = pin_namespace("local", where.key, where.project)
        global_pins, local_pins = await gather(
            functools.partial(self._list_one, PINS_GLOBAL, LIST_CAP),
            functools.partial(self._pins_of, local_namespace),
        )
        return PinsResult(
            project=local_name,
            global_pins=[_pin(m) for m in sorted(global_pins, key=_sort_time)],
            local_pins=[_pin(m) for m in sorted(local_pins, key=_sort_time)],
            notes=notes,
        )

    async def _pins_of(self, namespace: str | None) -> list[Memory]:
        return [] if namespace is None else await self._list_one(namespace, LIST_CAP)

    # ---- one memory by id ------------------------------------------------------------------

    async def _own(self, memory_id: str) -> Memory:
        memory = await self.mem0.get(memory_id)
        if memory is None or (memory.user_id not in (None, self.user_id)):
            raise BridgeError(
                f"No memory has id {memory_id}; it may have been deleted. Use memory_search or "
                "memory_list to find the current id."
            )
        return memory

    async def unpin(self, memory_id: str) -> ChangeResult:
        memory_id = check_memory_id(memory_id)
        memory = await self._own(memory_id)
        if not is_pin_namespace(memory.run_id):
            raise BridgeError(
                f"{memory_id} is not a pin (it lives in {memory.run_id!r}); memory_unpin only "
                "removes pins. Use memory_delete to delete an ordinary memory."
            )
        await self.mem0.delete(memory_id)
        return ChangeResult(
            action="unpinned",
            memory_id=memory_id,
            namespace=memory.run_id,
            text=memory.text,
            notes=[],
        )

    async def update(self, memory_id: str, text: str) -> ChangeResult:
        memory_id = check_memory_id(memory_id)
        text = check_text(text)
        memory = await self._own(memory_id)
        await self.mem0.update(memory_id, text)
        notes: list[str] = []
        if memory.run_id and not is_pin_namespace(memory.run_id):
            recorded = await self.ranker.record_stored(
                ranker_scope(self.user_id, memory.run_id), text, memory_id
            )
            if not recorded and self.ranker.peer.configured:
                notes.append("ranker unavailable: the new text was not recorded for dedupe")
        return ChangeResult(
            action="updated",
            memory_id=memory_id,
            namespace=memory.run_id,
            text=text,
            previous_text=memory.text,
            notes=notes,
        )

    async def delete(self, memory_id: str) -> ChangeResult:
        memory_id = check_memory_id(memory_id)
        memory = await self._own(memory_id)
        await self.mem0.delete(memory_id)
        notes: list[str] = []
        if not await self.ranker.forget([memory_id]) and self.ranker.peer.configured:
            notes.append("ranker unavailable: its mention record of this memory remains")
        return ChangeResult(
            action="deleted",
            memory_id=memory_id,
            namespace=memory.run_id,
            text=memory.text,
            notes=notes,
        )

    async def history(self, memory_id: str) -> HistoryResult:
        memory_id = check_memory_id(memory_id)
        entries = await self.mem0.history(memory_id)
        if not entries:
            raise BridgeError(
                f"mem0 keeps no history for {memory_id}; check the id with memory_search."
            )
        return HistoryResult(
            memory_id=memory_id,
            events=[
                HistoryEvent(
                    event=e.event, old_text=e.old_memory, new_text=e.new_memory, at=e.created_at
                )
                for e in entries
            ],
        )

    async def reset(self, reset_token: str | None) -> ResetResult:
        if reset_token is None or not reset_token.strip():
            raise BridgeError(
                "memory_reset irreversibly wipes every memory and needs the reset token, which "
                "only the human user holds. Ask the user for it (and confirm they want the wipe), "
                "then call memory_reset(reset_token=...). Nothing was sent."
            )
        try:
            await self.mem0.reset(reset_token.strip())
        except Mem0Error as exc:
            if exc.status in (401, 403):
                raise BridgeError(
                    "mem0 refused the reset token; nothing was wiped. Ask the user to check the "
                    "token (the mem0 server's reset token), or drop the reset."
                ) from exc
            raise
        notes = []
        if not await self.ranker.forget(everything=True) and self.ranker.peer.configured:
            notes.append("ranker unavailable: its mention and dedupe records were not cleared")
        return ResetResult(reset=True, notes=notes)


def _sort_time(memory: Memory) -> float:
    newest = newest_time(memory.created_at, memory.updated_at)
    return newest.timestamp() if newest is not None else 0.0

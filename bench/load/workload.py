"""The load clients: N official MCP clients over streamable HTTP, each in a closed loop.

Each client repeatedly picks one of: add a new fact, restate a known fact in another wording,
change a fact's value, change it back, search. Changes, changes back and restatements use one
of the new-style wordings agents use ("X moved to N", "X is back on N", "N is used by X";
`bench.load.facts.NEW_WORDINGS`) a third of the time (`NEW_STYLE_SHARE`), else a plain one.
Now and then two clients add two wordings of the same fact at the same moment (a collision,
met at a barrier), the case a per-text lock cannot catch.

Value changes of one fact are serialised (a per-fact read/write lock: changes write,
restatements read), so the latest value of a fact is simply the value of its last
acknowledgement; restatements of one value race each other freely, and a collision's two
adds race each other by design. Every answer is recorded (`Recorder`) for the checker,
searches with their hits (`Searched`), so the checker can tell which value each answered first.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter, deque
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp import Client
from mcp_types import TextContent

from bench._mcp import http_bridge
from bench.load.checker import Ack, Searched, Stored, Unacked
from bench.load.facts import NEW_WORDINGS, TEMPLATES, Fact

#: How a client picks its next operation (weights), when it is not in a collision.
OP_WEIGHTS: dict[str, float] = {
    "new": 0.2,
    "restate": 0.3,
    "change": 0.2,
    "change_back": 0.1,
    "search": 0.2,
}
#: Share of changes, changes back and restatements worded the new way (`NEW_WORDINGS`).
NEW_STYLE_SHARE = 1 / 3
#: Hits a search asks for (the workload's and the check's after the run).
SEARCH_LIMIT = 5
#: Chance per loop that a client starts a collision.
COLLISION_CHANCE = 0.05
#: How long a collision's initiator waits for a partner before adding alone.
PARTNER_WAIT_SECONDS = 10.0
#: A call that has not answered by then is abandoned and counted as a timeout.
CALL_TIMEOUT_SECONDS = 120.0
#: How clients speak MCP: `auto` negotiates (2026-07-28 with the bridge), `legacy` pins the
#: 2025-11-25 handshake, `mixed` has every other client pin it.
PROTOCOLS = ("auto", "legacy", "mixed")
MAX_ERROR_SAMPLES = 5


def search_hits(answer: dict[str, Any], project: str) -> tuple[Stored, ...]:
    """A memory_search answer's hits in rank order, as the checker reads them."""
    return tuple(
        Stored(str(h.get("id")), str(h.get("namespace") or project), str(h.get("text") or ""))
        for h in answer.get("hits") or ()
        if isinstance(h, dict)
    )


def choose_wording(rng: random.Random, op: str, share: float = NEW_STYLE_SHARE) -> int:
    """The wording (index into `bench.load.facts.WORDINGS`) of an add of kind `op`: a
    new-style one for `op` `share` of the time when `op` has any, else a plain one."""
    new_style = NEW_WORDINGS.get(op)
    if new_style and rng.random() < share:
        return rng.choice(new_style)
    return rng.randrange(len(TEMPLATES))


def error_cause(message: str) -> str:
    """A failed call's cause, from the message the client got: `mem0` (the bridge's mem0 call
    failed), `client timeout`, `transport` (the HTTP connection to the bridge) or `other`."""
    lowered = message.lower()
    # The MCP server wraps a tool's message: "Error executing tool memory_add: mem0 is ...".
    if lowered.startswith("error executing tool "):
        lowered = lowered.partition(": ")[2]
    if lowered.startswith("mem0 "):
        return "mem0"
    if lowered.startswith("no answer within"):
        return "client timeout"
    if lowered.startswith(("connecterror", "readerror", "remoteprotocolerror", "readtimeout")):
        return "transport"
    return "other"


def _leaf(exc: BaseException) -> BaseException:
    """The first exception an exception group holds (however deep), else `exc` itself."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


class ReadWriteLock:
    """Many readers or one writer; a waiting writer holds off new readers (no starvation)."""

    def __init__(self) -> None:
        self._cond = asyncio.Condition()
        self._readers = 0
        self._writer = False
        self._writers_waiting = 0

    @asynccontextmanager
    async def read(self) -> AsyncIterator[None]:
        async with self._cond:
            await self._cond.wait_for(lambda: not self._writer and not self._writers_waiting)
            self._readers += 1
        try:
            yield
        finally:
            async with self._cond:
                self._readers -= 1
                self._cond.notify_all()

    @asynccontextmanager
    async def write(self) -> AsyncIterator[None]:
        async with self._cond:
            self._writers_waiting += 1
            try:
                await self._cond.wait_for(lambda: not self._writer and not self._readers)
            finally:
                self._writers_waiting -= 1
            self._writer = True
        try:
            yield
        finally:
            async with self._cond:
                self._writer = False
                self._cond.notify_all()


class StartGate:
    """Holds every client until all are connected, then starts the clock for all of them.

    Opening 50 MCP sessions takes seconds on a busy 2-core machine; started as they connect,
    the first clients would run alone for that long and the fault would hit a half-loaded run.
    """

    def __init__(self, clients: int, seconds: float) -> None:
        self._waiting = clients
        self._all_in = asyncio.Event()
        self._open = asyncio.Event()
        self._seconds = seconds
        self.deadline = 0.0
        if clients <= 0:
            self._all_in.set()

    def arrived(self) -> None:
        """A client connected (or gave up trying)."""
        self._waiting -= 1
        if self._waiting <= 0:
            self._all_in.set()

    async def all_arrived(self) -> None:
        await self._all_in.wait()

    def open(self) -> None:
        self.deadline = time.monotonic() + self._seconds
        self._open.set()

    async def wait(self) -> float:
        """Wait for the start; the deadline (time.monotonic) to stop starting operations."""
        await self._open.wait()
        return self.deadline


@dataclass
class FactState:
    """What the clients believe about one fact: whether it was added and its acked values."""

    fact: Fact
    lock: ReadWriteLock = field(default_factory=ReadWriteLock)
    claimed: bool = False
    #: The values the fact went through (indices, consecutive repeats folded: a restatement
    #: is no change), in acknowledgement order; empty until the fact's first ack.
    history: list[int] = field(default_factory=list)

    @property
    def known(self) -> bool:
        return bool(self.history)

    @property
    def current(self) -> int:
        return self.history[-1] if self.history else 0

    def next_value(self) -> int:
        return (self.current + 1) % len(self.fact.values)

    def acknowledged(self, value: int) -> None:
        """Note an acknowledged add of `value` (a restatement leaves the history as it is)."""
        if not self.history or self.history[-1] != value:
            self.history.append(value)

    def previous_value(self) -> int | None:
        """The value before the current one (a change back), if the fact ever changed."""
        return self.history[-2] if len(self.history) > 1 else None


@dataclass
class Invitation:
    """A collision on offer: the partner adds `wording` of `state`'s fact with `value`."""

    state: FactState
    op: str
    wording: int
    value: int
    barrier: asyncio.Barrier = field(default_factory=lambda: asyncio.Barrier(2))
    done: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass
class Recorder:
    """Everything the clients saw, for the checker and the report."""

    started: float = field(default_factory=time.monotonic)
    acks: list[Ack] = field(default_factory=list)
    unacked: list[Unacked] = field(default_factory=list)
    ops: Counter[str] = field(default_factory=Counter)
    actions: Counter[str] = field(default_factory=Counter)
    calls: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    #: Failed calls by cause (`error_cause`): a mem0 failure is the one that can lose data.
    error_causes: Counter[str] = field(default_factory=Counter)
    error_samples: dict[str, list[str]] = field(default_factory=dict)
    notes: Counter[str] = field(default_factory=Counter)
    latencies: dict[str, list[float]] = field(default_factory=dict)
    #: Per whole second since start: [calls answered, calls failed, answers degraded (a note
    #: says a helper was unavailable)].
    timeline: dict[int, list[int]] = field(default_factory=dict)
    collisions: Counter[str] = field(default_factory=Counter)
    #: Adds per operation and wording style: `change:new`, `restate:plain`, ...
    wordings: Counter[str] = field(default_factory=Counter)
    #: The workload's answered searches, with their hits.
    searches: list[Searched] = field(default_factory=list)
    #: Sessions by the protocol revision their client negotiated.
    protocols: Counter[str] = field(default_factory=Counter)

    def now(self) -> float:
        return time.monotonic() - self.started

    def restart_clock(self) -> None:
        """Count seconds of the run from now (the clients are connected)."""
        self.started = time.monotonic()

    def _tick(self, column: int) -> None:
        self.timeline.setdefault(int(self.now()), [0, 0, 0])[column] += 1

    def error(self, tool: str, message: str) -> None:
        self.errors[tool] += 1
        self.error_causes[error_cause(message)] += 1
        self._tick(1)
        samples = self.error_samples.setdefault(tool, [])
        short = " ".join(message.split())[:300]
        if len(samples) < MAX_ERROR_SAMPLES and short not in samples:
            samples.append(short)

    def answered(self, tool: str, seconds: float, content: dict[str, Any]) -> None:
        self.latencies.setdefault(tool, []).append(seconds)
        self._tick(0)
        notes = [str(note) for note in content.get("notes") or []]
        for note in notes:
            # "judge unavailable: the add was ..." -> "judge unavailable"
            self.notes[note.split(":", 1)[0]] += 1
        if any("unavailable" in note for note in notes):
            self._tick(2)


class Workload:
    """The shared state of one run's clients."""

    def __init__(
        self,
        facts: Sequence[Fact],
        recorder: Recorder,
        seed: int,
        *,
        token: str | None = None,
        protocol: str = "auto",
        new_style_share: float = NEW_STYLE_SHARE,
    ) -> None:
        self.new_style_share = new_style_share
        if protocol not in PROTOCOLS:
            raise ValueError(f"protocol must be one of {PROTOCOLS}, not {protocol!r}")
        self.states = [FactState(f) for f in facts]
        self.recorder = recorder
        self.seed = seed
        self.token = token
        self.protocol = protocol
        self.invitations: deque[Invitation] = deque()

    def mode(self, index: int) -> str:
        """Client `index`'s connect mode (`auto` or `legacy`) under the workload's protocol."""
        legacy = self.protocol == "legacy" or (self.protocol == "mixed" and index % 2 == 1)
        return "legacy" if legacy else "auto"

    # ---- choosing -------------------------------------------------------------------------

    def _known(self) -> list[FactState]:
        return [s for s in self.states if s.known]

    def _unclaimed(self) -> list[FactState]:
        return [s for s in self.states if not s.claimed]

    def _pick_op(self, rng: random.Random) -> str:
        op = rng.choices(list(OP_WEIGHTS), weights=list(OP_WEIGHTS.values()))[0]
        if op == "new" and not self._unclaimed():
            return "restate"
        if op != "new" and not self._known():
            return "new" if self._unclaimed() else "search"
        return op

    # ---- calling --------------------------------------------------------------------------

    async def _call(self, client: Client, tool: str, **arguments: Any) -> dict[str, Any] | None:
        """One tool call, recorded; None when it failed (tool error, transport, timeout)."""
        record = self.recorder
        record.calls[tool] += 1
        started = time.perf_counter()
        try:
            with anyio.fail_after(CALL_TIMEOUT_SECONDS):
                result = await client.call_tool(tool, arguments)
        except TimeoutError:
            record.error(tool, f"no answer within {CALL_TIMEOUT_SECONDS:g} s")
            return None
        except Exception as exc:  # every failure is a counted outcome here
            record.error(tool, f"{type(exc).__name__}: {exc}")
            return None
        seconds = time.perf_counter() - started
        if result.is_error or not isinstance(result.structured_content, dict):
            text = "\n".join(b.text for b in result.content if isinstance(b, TextContent))
            record.error(tool, text or "tool error without text")
            return None
        record.answered(tool, seconds, result.structured_content)
        return result.structured_content

    async def _add(
        self, client: Client, state: FactState, op: str, wording: int, value: int
    ) -> bool:
        """memory_add of one wording and value; an answer is an acknowledgement."""
        fact = state.fact
        record = self.recorder
        style = "plain" if wording < len(TEMPLATES) else "new"
        record.wordings[f"{op}:{style}"] += 1
        sent = record.now()
        answer = await self._call(
            client, "memory_add", text=fact.text(wording, value), project=fact.project
        )
        if answer is None:
            record.unacked.append(Unacked(fact.fact_id, op, fact.values[value], sent))
            return False
        action = str(answer.get("action"))
        record.actions[f"{op}->{action}"] += 1
        record.acks.append(
            Ack(
                fact_id=fact.fact_id,
                op=op,
                value=fact.values[value],
                action=action,
                memory_ids=tuple(str(i) for i in answer.get("memory_ids") or ()),
                sent_at=sent,
                acked_at=record.now(),
            )
        )
        state.acknowledged(value)
        return True

    # ---- operations -----------------------------------------------------------------------

    async def _new(self, client: Client, rng: random.Random) -> None:
        candidates = self._unclaimed()
        if not candidates:
            return
        state = rng.choice(candidates)
        state.claimed = True
        async with state.lock.write():
            if not await self._add(
                client, state, "new", choose_wording(rng, "new", self.new_style_share), 0
            ):
                state.claimed = state.known  # try again later, as a new fact

    async def _restate(self, client: Client, rng: random.Random) -> None:
        state = rng.choice(self._known())
        async with state.lock.read():
            await self._add(
                client,
                state,
                "restate",
                choose_wording(rng, "restate", self.new_style_share),
                state.current,
            )

    async def _change(self, client: Client, rng: random.Random, *, back: bool) -> None:
        state = rng.choice(self._known())
        async with state.lock.write():
            previous = state.previous_value() if back else None
            target = previous if previous is not None else state.next_value()
            op = "change_back" if previous is not None else "change"
            await self._add(
                client, state, op, choose_wording(rng, op, self.new_style_share), target
            )

    async def _search(self, client: Client, rng: random.Random) -> None:
        states = self._known() or self.states
        fact = rng.choice(states).fact
        record = self.recorder
        sent = record.now()
        answer = await self._call(
            client,
            "memory_search",
            query=fact.question(),
            project=fact.project,
            limit=SEARCH_LIMIT,
        )
        if answer is not None:
            hits = search_hits(answer, fact.project)
            record.searches.append(Searched(fact.fact_id, sent, record.now(), hits))

    async def _start_collision(self, client: Client, rng: random.Random) -> None:
        """Offer a collision and add one wording the moment a partner adds the other."""
        unclaimed = self._unclaimed()
        known = self._known()
        if unclaimed and (not known or rng.random() < 0.5):
            state, op = rng.choice(unclaimed), "collide_new"
            state.claimed = True
        elif known:
            state, op = rng.choice(known), "collide_restate"
        else:
            return
        mine, theirs = rng.sample(range(len(TEMPLATES)), 2)
        lock = state.lock.write() if op == "collide_new" else state.lock.read()
        async with lock:
            value = state.current
            invitation = Invitation(state, op, theirs, value)
            self.invitations.append(invitation)
            try:
                with anyio.fail_after(PARTNER_WAIT_SECONDS):
                    await invitation.barrier.wait()
            except TimeoutError:
                await invitation.barrier.abort()
                self.recorder.collisions["unmatched"] += 1
                paired = False
            else:
                self.recorder.collisions[op] += 1
                paired = True
            added = await self._add(client, state, op, mine, value)
            if paired:
                # Hold the fact's lock until the partner's add is answered as well.
                await invitation.done.wait()
            if op == "collide_new" and not added and not state.known:
                state.claimed = False

    async def _join_collision(self, client: Client, invitation: Invitation) -> None:
        try:
            try:
                with anyio.fail_after(1.0):
                    await invitation.barrier.wait()
            except (TimeoutError, asyncio.BrokenBarrierError):
                return
            await self._add(
                client, invitation.state, invitation.op, invitation.wording, invitation.value
            )
        finally:
            invitation.done.set()

    async def client(self, index: int, url: str, gate: StartGate) -> None:
        """One client: connect, wait at the gate, loop until the deadline (the last call may
        overrun it)."""
        rng = random.Random(self.seed * 1000 + index)
        arrived = False
        try:
            async with http_bridge(url, self.token, mode=self.mode(index)) as client:
                self.recorder.protocols[client.protocol_version] += 1
                gate.arrived()
                arrived = True
                deadline = await gate.wait()
                while time.monotonic() < deadline:
                    if self.invitations:
                        await self._join_collision(client, self.invitations.popleft())
                        continue
                    if rng.random() < COLLISION_CHANCE:
                        self.recorder.ops["collision"] += 1
                        await self._start_collision(client, rng)
                        continue
                    op = self._pick_op(rng)
                    self.recorder.ops[op] += 1
                    if op == "new":
                        await self._new(client, rng)
                    elif op == "restate":
                        await self._restate(client, rng)
                    elif op in ("change", "change_back"):
                        await self._change(client, rng, back=op == "change_back")
                    else:
                        await self._search(client, rng)
        except Exception as exc:  # a client that cannot connect, or whose session dies
            leaf = _leaf(exc)
            self.recorder.error(
                "session", f"{self.mode(index)} client: {type(leaf).__name__}: {leaf}"
            )
        finally:
            if not arrived:
                gate.arrived()

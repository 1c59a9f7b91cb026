"""Bridge replicas order a scope's writes through the ranker's lease (issue 25).

Two `MemoryService`s stand for two bridge replicas: each has its own per-scope locks and its own
lease holder id, and they share one mem0 (the fake), one judge (scripted) and one ranker, the
real servicer on loopback gRPC over SQLite or the real PostgreSQL. Without the lease, their
racing adds of one fact would each find nothing stored and both be added.
"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import grpc
import pytest

from mem0_bridge import BridgeSettings
from mem0_bridge._judge import JudgeClient
from mem0_bridge._leases import ScopeLocks
from mem0_bridge._mem0 import Mem0Client
from mem0_bridge._ranker import LeaseAnswer, RankerClient, Stats
from mem0_bridge._service import MemoryService, Where
from mem0_ranker import RankerSettings, create_server
from tests.bridge.test_core import _counter, port_rule
from tests.fakes.mem0 import FakeMem0
from tests.fakes.scripted_judge import RunningJudge, ScriptedJudge
from tests.ranker.conftest import BACKENDS, Clock, open_backend
from tests.support.postgres import temporary_database

pytestmark = pytest.mark.anyio

#: The scope every replica writes to; the fake mem0 is fresh per test.
ALPHA = Where(key=None, project="alpha")
#: A lease-holding test waits this long at most for what it awaits (a hang guard only).
GUARD_SECONDS = 30


@dataclass
class Replicas:
    one: MemoryService
    two: MemoryService
    mem0: FakeMem0
    judge: RunningJudge
    ranker: RankerClient
    clock: Clock

    @property
    def scope(self) -> str:
        """The ranker scope of the test's namespace: its own, on a shared database too."""
        return self.one.rscope("alpha")


def _settings(ranker_address: str, judge_address: str, **extra: object) -> BridgeSettings:
    return BridgeSettings.model_validate(
        {
            "api_url": "http://mem0.test",
            "ranker_address": ranker_address,
            "judge_address": judge_address,
            "reinforcement_prefilter_threshold": 0.1,
            "verdict_similarity_floor": 0.0,
            "supersede_similarity_floor": 0.0,
            "verdict_budget_ms": 60_000,
            **extra,
        }
    )


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def leases_pg_url() -> Iterator[str]:
    with temporary_database("mem0mcp_bridge_leases", vector=False) as url:
        yield url


@pytest.fixture
def backend_url(backend: str, request: pytest.FixtureRequest) -> str:
    """The PostgreSQL URL when the backend is PostgreSQL (resolved lazily), else empty."""
    return str(request.getfixturevalue("leases_pg_url")) if backend == "postgres" else ""


@pytest.fixture
async def replicas(backend: str, backend_url: str, tmp_path: Path) -> AsyncIterator[Replicas]:
    store = await open_backend(backend, tmp_path, backend_url)
    clock = Clock()
    server = create_server(RankerSettings(port=0, metrics_port=-1), store, clock)
    await server.start()
    judge = RunningJudge(ScriptedJudge(port_rule))
    await judge.start()
    mem0 = FakeMem0()
    # Each test's own mem0 user keeps its ranker scopes (and leases) apart from other tests'
    # on the shared PostgreSQL database.
    settings = _settings(server.address, judge.address, default_user_id=uuid.uuid4().hex)
    ranker = RankerClient(settings.ranker_address, 5.0)
    judge_client = JudgeClient(settings.judge_address, 5.0)
    mem0_client = Mem0Client(settings, transport=mem0.transport)
    one = MemoryService(settings, mem0_client, ranker, judge_client)
    two = MemoryService(settings, mem0_client, ranker, judge_client)
    try:
        yield Replicas(one, two, mem0, judge, ranker, clock)
    finally:
        await one.scope_locks.settled()
        await two.scope_locks.settled()
        await ranker.aclose()
        await judge_client.aclose()
        await mem0_client.aclose()
        await judge.stop()
        await server.stop(grace=0)
        await store.close()


async def test_replicas_racing_restatements_of_one_fact_store_one_memory(
    replicas: Replicas,
) -> None:
    wordings = [f"The API port is now 8080{'!' * i}" for i in range(8)]
    actions: list[str] = []

    async def add(service: MemoryService, text: str) -> None:
        actions.append(str((await service.add(text, "project", ALPHA)).action))

    async with anyio.create_task_group() as tasks:
        for i, text in enumerate(wordings):
            tasks.start_soon(add, replicas.one if i % 2 else replicas.two, text)
    assert len(replicas.mem0.texts("alpha")) == 1
    assert actions.count("added") == 1


async def test_replicas_reconcilers_never_fold_the_same_memory_twice(replicas: Replicas) -> None:
    """Restatements stored while the judge was down, reconciled by both replicas at once:
    each pending memory is settled by exactly one of them (the ranker leases it to one), and
    the fact ends as one current memory."""
    first = await replicas.one.add("The API port is 8080", "project", ALPHA)
    replicas.judge.judge.failure = grpc.StatusCode.UNAVAILABLE
    pending = []
    for i in range(6):
        pending.append(
            await replicas.two.add(f"The API port is 8080{'!' * (i + 1)}", "project", ALPHA)
        )
        replicas.clock.advance(1)  # marked one after the other, as in time they are
    replicas.judge.judge.failure = None
    assert {p.action for p in pending} == {"added"}

    async def drain(service: MemoryService) -> None:
        while await service.reconciler.run_once() > 0:
            pass

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(drain, replicas.one)
        tasks.start_soon(drain, replicas.two)
    settled = replicas.one.reconciler.stats.outcomes + replicas.two.reconciler.stats.outcomes
    assert sum(settled.values()) == len(pending)
    folds = Counter(
        request.url.path.rsplit("/", 1)[1]
        for request in replicas.mem0.requests
        if request.method == "PUT"
        and "folded_into" in (json.loads(request.content).get("metadata") or {})
    )
    assert set(folds) == {p.memory_ids[0] for p in pending}
    assert set(folds.values()) == {1}
    assert replicas.mem0.current_texts("alpha") == ["The API port is 8080"]
    assert first.memory_ids[0] not in folds
    stats = await replicas.ranker.stats()
    assert isinstance(stats, Stats)
    assert stats.pending == 0


# --- the lease itself, as ScopeLocks takes it -------------------------------------------------


def _locks(replicas: Replicas, *, lease_seconds: float = 10.0, wait: float = 60.0) -> ScopeLocks:
    return ScopeLocks(replicas.ranker, lease_seconds, wait)


async def _take(replicas: Replicas, scope: str, holder: str) -> LeaseAnswer:
    answer = await replicas.ranker.acquire_lease(f"scope/{scope}", holder, 10.0)
    assert isinstance(answer, LeaseAnswer)
    return answer


async def _held_for(replicas: Replicas, scope: str) -> float:
    """How long the lease of `scope` is held yet, as another holder is told (0: free)."""
    answer = await _take(replicas, scope, "onlooker")
    if answer.granted:
        await replicas.ranker.release_lease(f"scope/{scope}", "onlooker")
        return 0.0
    return answer.expires_in


async def test_holders_on_two_replicas_hold_one_scope_one_at_a_time(replicas: Replicas) -> None:
    one, two = _locks(replicas), _locks(replicas)
    inside = most_inside = 0

    async def hold(locks: ScopeLocks) -> None:
        nonlocal inside, most_inside
        async with locks.hold(replicas.scope):
            inside += 1
            most_inside = max(most_inside, inside)
            await anyio.sleep(0.01)
            inside -= 1

    with anyio.fail_after(GUARD_SECONDS):
        async with anyio.create_task_group() as tasks:
            for i in range(8):
                tasks.start_soon(hold, one if i % 2 else two)
    assert most_inside == 1
    await one.settled()
    await two.settled()
    assert await _held_for(replicas, replicas.scope) == 0.0  # released at the end


async def test_work_deferred_by_a_write_runs_before_its_lease_is_given_back(
    replicas: Replicas,
) -> None:
    mine, theirs = _locks(replicas), _locks(replicas)
    done = anyio.Event()
    order: list[str] = []

    async def record() -> None:
        await done.wait()
        order.append("deferred work")

    async def their_write() -> None:
        async with theirs.hold(replicas.scope):
            order.append("other replica's write")

    with anyio.fail_after(GUARD_SECONDS):
        async with mine.hold(replicas.scope):
            mine.defer(replicas.scope, record)
        # Left at once: the work waits, and the lease with it.
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(their_write)
            await anyio.sleep(0.3)  # the other replica asks and is refused meanwhile
            refused_meanwhile = order == []
            done.set()
        await mine.settled()
        await theirs.settled()
    assert refused_meanwhile
    assert order == ["deferred work", "other replica's write"]
    assert await _held_for(replicas, replicas.scope) == 0.0


async def test_deferring_outside_a_hold_is_refused(replicas: Replicas) -> None:
    async def nothing() -> None:
        pass

    with pytest.raises(RuntimeError, match="not held"):
        _locks(replicas).defer(replicas.scope, nothing)


async def test_a_dead_replicas_lease_frees_the_scope_when_it_expires(replicas: Replicas) -> None:
    waited_before = _counter("mem0_bridge_scope_leases_total", outcome="waited")
    assert (await _take(replicas, replicas.scope, "dead-replica")).granted
    entered = anyio.Event()

    async def write() -> None:
        async with _locks(replicas).hold(replicas.scope):
            entered.set()

    with anyio.fail_after(GUARD_SECONDS):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(write)
            await anyio.sleep(0.3)  # the writer asks and is refused meanwhile
            refused_while_held = not entered.is_set()
            replicas.clock.advance(10)  # the dead replica never renews: its lease runs out
            await entered.wait()
    assert refused_while_held
    assert _counter("mem0_bridge_scope_leases_total", outcome="waited") - waited_before == 1


async def test_a_write_past_half_the_lease_renews_it(replicas: Replicas) -> None:
    locks = _locks(replicas, lease_seconds=0.2)
    with anyio.fail_after(GUARD_SECONDS):
        async with locks.hold(replicas.scope):
            replicas.clock.advance(0.15)
            # Renewed (every 0.1 s of real time) from the ranker's now: 0.2 s left again.
            while await _held_for(replicas, replicas.scope) < 0.2:  # noqa: ASYNC110 - the ranker's state
                await anyio.sleep(0.05)
            replicas.clock.advance(0.1)  # past the first lease's end, within the renewed one
            still_held = await _held_for(replicas, replicas.scope)
    assert still_held > 0


async def test_a_write_goes_ahead_without_the_lease_after_the_wait(replicas: Replicas) -> None:
    timed_out_before = _counter("mem0_bridge_scope_leases_total", outcome="timed_out")
    assert (await _take(replicas, replicas.scope, "other-replica")).granted
    with anyio.fail_after(GUARD_SECONDS):
        async with _locks(replicas, wait=0.0).hold(replicas.scope):
            pass
    assert _counter("mem0_bridge_scope_leases_total", outcome="timed_out") - timed_out_before == 1


async def test_a_write_goes_ahead_under_the_local_lock_when_the_ranker_is_down() -> None:
    unavailable_before = _counter("mem0_bridge_scope_leases_total", outcome="unavailable")
    down = RankerClient("127.0.0.1:1", 2.0)
    try:
        locks = ScopeLocks(down, 10.0, 60.0)
        with anyio.fail_after(GUARD_SECONDS):
            async with locks.hold("u/alpha"):
                assert len(locks) == 1
    finally:
        await down.aclose()
    assert (
        _counter("mem0_bridge_scope_leases_total", outcome="unavailable") - unavailable_before == 1
    )


async def test_without_a_ranker_only_the_local_lock_orders_writes() -> None:
    counts = [
        _counter("mem0_bridge_scope_leases_total", outcome=o) for o in ("granted", "unavailable")
    ]
    off = RankerClient("", 2.0)
    locks = ScopeLocks(off, 10.0, 60.0)
    async with locks.hold("u/alpha"):
        assert len(locks) == 1
    assert counts == [
        _counter("mem0_bridge_scope_leases_total", outcome=o) for o in ("granted", "unavailable")
    ]

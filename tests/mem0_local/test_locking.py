"""The embedded store's locks: reads overlap, writes run alone, a reset waits for requests."""

from __future__ import annotations

import threading
from collections.abc import Callable

import anyio
import pytest

from mem0_local._locking import ReadWriteLock, ResetGate, lock_client_methods

WAIT = 30.0


class _Client:
    """A store client whose reads meet at a barrier and whose writes count who is inside."""

    def __init__(self, readers: int) -> None:
        self.barrier = threading.Barrier(readers, timeout=WAIT)
        self.inside = 0
        self.most_inside = 0
        self.guard = threading.Lock()

    def query_points(self) -> str:
        self.barrier.wait()  # broken (an error) unless every reader is in at once
        return "found"

    def upsert(self, rounds: int = 200) -> None:
        with self.guard:
            self.inside += 1
            self.most_inside = max(self.most_inside, self.inside)
        for _ in range(rounds):  # give another writer every chance to come in
            threading.Event().wait(0)
        with self.guard:
            self.inside -= 1

    def set_payload(self) -> None:
        self.upsert(rounds=1)  # a write calling another write of the same client


def _in_threads(count: int, target: Callable[[], object]) -> list[BaseException]:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            target()
        except BaseException as exc:  # reported by the test
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    return errors


def test_reads_run_together() -> None:
    client = _Client(readers=3)
    lock_client_methods(client, ReadWriteLock())

    assert _in_threads(3, client.query_points) == []


def test_writes_run_one_at_a_time() -> None:
    client = _Client(readers=1)
    lock_client_methods(client, ReadWriteLock())

    assert _in_threads(8, client.upsert) == []
    assert client.most_inside == 1


def test_a_method_calling_another_runs_under_the_lock_it_holds() -> None:
    client = _Client(readers=1)
    lock_client_methods(client, ReadWriteLock())

    assert _in_threads(1, client.set_payload) == []


def test_a_client_is_locked_once() -> None:
    client = _Client(readers=1)
    lock = ReadWriteLock()
    lock_client_methods(client, lock)
    wrapped = client.upsert
    lock_client_methods(client, lock)

    assert client.upsert is wrapped


@pytest.mark.anyio
async def test_a_reset_waits_for_requests_in_flight_and_holds_off_new_ones() -> None:
    gate = ResetGate()
    order: list[str] = []
    in_request = anyio.Event()
    finish_request = anyio.Event()

    async def request(name: str, started: anyio.Event | None = None) -> None:
        async with gate.request():
            order.append(f"{name} in")
            if started is not None:
                started.set()
                await finish_request.wait()
            order.append(f"{name} out")

    async def reset() -> None:
        async with gate.reset():
            order.append("reset")

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(request, "first", in_request)
        await in_request.wait()
        tasks.start_soon(reset)
        await anyio.wait_all_tasks_blocked()
        tasks.start_soon(request, "second")
        await anyio.wait_all_tasks_blocked()
        finish_request.set()

    assert order == ["first in", "first out", "reset", "second in", "second out"]

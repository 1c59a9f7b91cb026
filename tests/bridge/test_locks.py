"""KeyedLocks: adds of the same key wait for each other, other keys do not."""

from __future__ import annotations

import anyio
import pytest

from mem0_bridge._concurrency import KeyedLocks

pytestmark = pytest.mark.anyio


async def test_holders_of_one_key_run_one_at_a_time() -> None:
    locks = KeyedLocks()
    inside = 0
    most_inside = 0

    async def hold() -> None:
        nonlocal inside, most_inside
        async with locks.hold("k"):
            inside += 1
            most_inside = max(most_inside, inside)
            await anyio.sleep(0.01)
            inside -= 1

    async with anyio.create_task_group() as tasks:
        for _ in range(5):
            tasks.start_soon(hold)
    assert most_inside == 1


async def test_different_keys_do_not_wait_for_each_other() -> None:
    locks = KeyedLocks()
    async with locks.hold("a"):
        with anyio.fail_after(1):
            async with locks.hold("b"):
                pass


async def test_a_released_key_leaves_nothing_behind() -> None:
    locks = KeyedLocks()
    async with locks.hold("a"), locks.hold("b"):
        assert len(locks) == 2
    assert len(locks) == 0

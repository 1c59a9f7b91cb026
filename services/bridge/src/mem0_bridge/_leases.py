"""The order of a scope's writes across bridge replicas: this process's lock, then a lease.

`ScopeLocks.hold(scope)` first takes the scope's lock in this process (`KeyedLocks`), then,
with a ranker configured, the scope's lease in the ranker, which every replica shares (its
database), so that a restatement racing an add on another replica is judged against it as on
this one. A lease lasts `MEM0_SCOPE_LEASE_SECONDS` and is renewed at half of it while the write
runs, so a replica that dies holding one blocks the scope elsewhere at most that long.

What a write leaves to do once its caller has the answer (`defer`: the record of what it
stored) runs after the hold is left, in a task that then gives the lease back: the caller does not
wait for it, and the scope's next writer does, here (the next hold of the scope awaits it) and on
every other replica (the lease is held until it is done).

Availability over strict order: when the lease cannot be had (the ranker down or refusing, or
another replica holding it past `MEM0_SCOPE_LEASE_WAIT_SECONDS`), the write goes ahead under
the local lock alone, logged and counted (`mem0_bridge_scope_leases_total`). A memory write
that fails because a helper is slow would lose the agent's fact; going ahead risks at worst a
duplicate the next restatement or the reconciler folds, which is the degradation the bridge
already accepts for a down ranker (no dedupe) or judge (no verdict).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import random
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import anyio

from mem0_bridge._concurrency import KeyedLocks
from mem0_bridge._grpc import PeerFailure
from mem0_bridge._metrics import SCOPE_LEASES
from mem0_bridge._ranker import RankerClient

logger = logging.getLogger(__name__)

#: The first pause before asking again for a lease held elsewhere; each pause doubles (with
#: jitter) up to `LONGEST_PAUSE_SECONDS`.
FIRST_PAUSE_SECONDS = 0.01
#: Well under the ranker's next-in-line hold (2 s), so a waiting replica keeps its turn, and
#: short, since a freed lease waits for the next ask (the hand-off's cost is measured by
#: `make bench-scope-locks`).
LONGEST_PAUSE_SECONDS = 0.05


class ScopeLocks:
    """Per-scope order of writes within this process (always) and across replicas (through
    the ranker's leases, under one random holder id per process)."""

    def __init__(self, ranker: RankerClient, lease_seconds: float, wait_seconds: float) -> None:
        self._local = KeyedLocks()
        self._ranker = ranker
        self._lease_seconds = lease_seconds
        self._wait_seconds = wait_seconds
        #: This process's name in the ranker's lease rows; the local lock lets one task of it
        #: hold a scope at a time, so the process can be the holder.
        self.holder = f"bridge-{uuid.uuid4().hex}"
        #: Per scope held now, the work `defer` left for after the hold.
        self._deferred: dict[str, list[Callable[[], Awaitable[object]]]] = {}
        #: Per scope, the task finishing its last hold: deferred work, then the lease back.
        self._finishing: dict[str, asyncio.Task[None]] = {}

    def __len__(self) -> int:
        return len(self._local)

    def defer(self, scope: str, work: Callable[[], Awaitable[object]]) -> None:
        """Run `work` once the current hold of `scope` is left, before the scope is handed on
        (see the module doc). Only the task holding `scope` may call this."""
        try:
            self._deferred[scope].append(work)
        except KeyError:
            raise RuntimeError(f"{scope} is not held: nothing to defer work to") from None

    async def settled(self) -> None:
        """Wait until every hold left so far is finished: its work done, its lease given back
        (at shutdown, before the ranker's channel closes; in tests, before reading its state)."""
        while self._finishing:
            await asyncio.wait(list(self._finishing.values()))

    @asynccontextmanager
    async def hold(self, scope: str) -> AsyncIterator[None]:
        async with self._local.hold(scope):
            previous = self._finishing.get(scope)
            if previous is not None:
                # The last hold's lease is this process's too: asked for before it is given
                # back, it would be granted, then given back under this write.
                await asyncio.wait([previous])
            key = f"scope/{scope}"
            leased = self._ranker.peer.configured and await self._acquire(key)
            # A task of its own, not a task group: a group would wrap the write's own error
            # in an exception group (gRPC's aio already ties the bridge to asyncio).
            renewing = asyncio.create_task(self._renew(key)) if leased else None
            self._deferred[scope] = []
            try:
                yield
            finally:
                work = self._deferred.pop(scope)
                if work or leased:
                    finishing = asyncio.create_task(self._finish(key, work, renewing))
                    self._finishing[scope] = finishing
                    finishing.add_done_callback(functools.partial(self._finished, scope))

    def _finished(self, scope: str, task: asyncio.Task[None]) -> None:
        if self._finishing.get(scope) is task:
            del self._finishing[scope]

    async def _finish(
        self,
        key: str,
        work: list[Callable[[], Awaitable[object]]],
        renewing: asyncio.Task[None] | None,
    ) -> None:
        """Run a hold's deferred work, then give its lease back (if it had one)."""
        try:
            for step in work:
                try:
                    await step()
                except Exception:  # nobody awaits this task: the failure is logged, not lost
                    logger.exception("%s: work left for after a write failed", key)
        finally:
            if renewing is not None:
                renewing.cancel()
                await self._ranker.release_lease(key, self.holder)

    async def _acquire(self, key: str) -> bool:
        """Wait for the lease `key`, pausing with jittered backoff while another holds it;
        False when the write should go ahead without it (counted by why)."""
        deadline = anyio.current_time() + self._wait_seconds
        pause = FIRST_PAUSE_SECONDS
        waited = False
        while True:
            answer = await self._ranker.acquire_lease(key, self.holder, self._lease_seconds)
            if isinstance(answer, PeerFailure):  # logged by the peer
                SCOPE_LEASES.labels("unavailable").inc()
                return False
            if answer.granted:
                SCOPE_LEASES.labels("waited" if waited else "granted").inc()
                return True
            left = deadline - anyio.current_time()
            if left <= 0:
                logger.warning(
                    "%s: held by another replica for over %gs; writing without it",
                    key,
                    self._wait_seconds,
                )
                SCOPE_LEASES.labels("timed_out").inc()
                return False
            waited = True
            until_free = answer.expires_in or LONGEST_PAUSE_SECONDS
            await anyio.sleep(min(random.uniform(pause / 2, pause), left, until_free))  # noqa: S311 - jitter
            pause = min(pause * 2, LONGEST_PAUSE_SECONDS)

    async def _renew(self, key: str) -> None:
        """Extend the lease every half of its length until cancelled (the write is done)."""
        while True:
            await anyio.sleep(self._lease_seconds / 2)
            answer = await self._ranker.acquire_lease(key, self.holder, self._lease_seconds)
            if not isinstance(answer, PeerFailure) and not answer.granted:
                logger.warning(
                    "%s: the lease ran out during a write and another replica took it", key
                )
                SCOPE_LEASES.labels("lost").inc()
                return

"""The order of a scope's writes across bridge replicas: this process's lock, then a lease.

`ScopeLocks.hold(scope)` first takes the scope's lock in this process (`KeyedLocks`), then,
with a ranker configured, the scope's lease in the ranker, which every replica shares (its
database), so that a restatement racing an add on another replica is judged against it as on
this one. A lease lasts `MEM0_SCOPE_LEASE_SECONDS` and is renewed at half of it while the write
runs, so a replica that dies holding one blocks the scope elsewhere at most that long.

Availability over strict order: when the lease cannot be had (the ranker down or refusing, or
another replica holding it past `MEM0_SCOPE_LEASE_WAIT_SECONDS`), the write goes ahead under
the local lock alone, logged and counted (`mem0_bridge_scope_leases_total`). A memory write
that fails because a helper is slow would lose the agent's fact; going ahead risks at worst a
duplicate the next restatement or the reconciler folds, which is the degradation the bridge
already accepts for a down ranker (no dedupe) or judge (no verdict).
"""

from __future__ import annotations

import asyncio
import logging
import random
import uuid
from collections.abc import AsyncIterator
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

    def __len__(self) -> int:
        return len(self._local)

    @asynccontextmanager
    async def hold(self, scope: str) -> AsyncIterator[None]:
        async with self._local.hold(scope):
            key = f"scope/{scope}"
            if not self._ranker.peer.configured or not await self._acquire(key):
                yield
                return
            # A task of its own, not a task group: a group would wrap the write's own error
            # in an exception group (gRPC's aio already ties the bridge to asyncio).
            renewing = asyncio.create_task(self._renew(key))
            try:
                yield
            finally:
                renewing.cancel()
                with anyio.CancelScope(shield=True):
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

"""The memory service: the clients every operation works with, and the operations behind the
tools, independent of MCP.

One `MemoryService` per bridge process holds the settings, the mem0, ranker and judge clients
and the per-scope locks, and turns who is calling (`Where`) into the namespaces an operation
may touch. The operation modules receive it: adds reconcile instead of piling up (`_adding`),
searches over-fetch and rerank (`_searching`), lists and pins read what the scope allows
(`_listing`, `_pins`), by-id calls are confined to the caller's namespaces (`_by_id`), and the
`Reconciler` (`_pending`) settles in the background what was stored while the judge could not
answer. The ranker and judge are helpers: when they fail, the operation still completes and the
result's notes say what was skipped.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from datetime import UTC, datetime

from mem0_bridge import _adding, _by_id, _listing, _models, _pins, _searching
from mem0_bridge._access import EVERYTHING, Grant
from mem0_bridge._by_id import Readable
from mem0_bridge._errors import BridgeError
from mem0_bridge._grpc import skipped
from mem0_bridge._inputs import check_reset_token, check_time
from mem0_bridge._judge import JudgeClient
from mem0_bridge._leases import ScopeLocks
from mem0_bridge._mem0 import LIST_CAP, Mem0Client, Mem0Error, Memory
from mem0_bridge._pending import Reconciler
from mem0_bridge._ranker import RankerClient
from mem0_bridge._rewrites import Rewrites
from mem0_bridge._scopes import (
    GLOBAL,
    PIN_PREFIX,
    PINS_GLOBAL,
    PinScope,
    Scope,
    pin_namespace,
    read_namespaces,
    write_namespace,
)
from mem0_bridge._settings import BridgeSettings
from mem0_common import clock_for


@dataclass(frozen=True)
class Where:
    """Who the call is for: a scope key (a hard boundary), the project if known, and what the
    caller's token may use (everything over stdio and for the single bearer token)."""

    key: str | None
    project: str | None
    grant: Grant = EVERYTHING

    def readable_namespaces(self, scope: Scope, *, merge_global: bool) -> tuple[str, ...] | None:
        """The namespaces a read covers, checked against the grant; a merged-in global the
        token may not read is left out rather than refused (it was not asked for)."""
        namespaces = read_namespaces(scope, self.key, self.project, merge_global=merge_global)
        if namespaces is None:
            self.grant.check_all_namespaces()
            return None
        implicit = merge_global and scope == "project" and self.key is None
        kept = tuple(
            n
            for n in namespaces
            if not (implicit and n == GLOBAL and not self.grant.allows(n, write=False))
        )
        for namespace in kept:
            self.grant.check(namespace, write=False)
        return kept

    def readable(self, *, pins: bool, writes: bool) -> Readable:
        """The namespaces a by-id call with these arguments may reach: the key's alone, else
        the project's and global's, and with `pins` their pin namespaces too (so that a call can
        tell the caller "that is a pin" or "that is not a pin" instead of "unknown id")."""
        if self.key is not None:
            plain = {self.key}
        else:
            plain = {GLOBAL} if self.project is None else {GLOBAL, self.project}
        allowed = plain | {f"{PIN_PREFIX}{n}" for n in plain} if pins else plain
        grant = self.grant
        return lambda namespace: namespace in allowed and grant.allows(namespace, write=writes)


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
        #: Held while a memory of a scope is being added, reconciled or rewritten, so that
        #: writes in one scope see each other (a restatement racing an add is judged against
        #: it), on every replica (the ranker's lease); adds in different scopes run concurrently.
        self.scope_locks = ScopeLocks(
            ranker, settings.scope_lease_seconds, settings.scope_lease_wait_seconds
        )
        self.reconciler = Reconciler(self)
        self.rewrites = Rewrites(judge, settings.judge_timeout_seconds)
        #: Epoch seconds now: `time.time`, or the benchmarks' test clock (`test_clock_file`).
        self.clock = clock_for(settings.test_clock_file, "MEM0_TEST_CLOCK_FILE")

    def now(self) -> datetime:
        """The current time, as validity spans record it."""
        return datetime.fromtimestamp(self.clock(), UTC)

    @property
    def user_id(self) -> str:
        return self.settings.default_user_id

    def rscope(self, namespace: str) -> str:
        """The scope the ranker keys a namespace's records by: this bridge's user's."""
        return f"{self.user_id}/{namespace}"

    async def list_one(self, namespace: str | None, top_k: int = LIST_CAP) -> list[Memory]:
        return await self.mem0.list_memories(user_id=self.user_id, run_id=namespace, top_k=top_k)

    async def add(self, text: str, scope: Scope, where: Where) -> _models.AddResult:
        namespace = write_namespace(scope, where.key, where.project)
        where.grant.check(namespace, write=True)
        return await _adding.add(self, text, namespace)

    async def search(
        self, query: str, scope: Scope, limit: int, where: Where, as_of: str | None = None
    ) -> _models.SearchResult:
        moment = None if as_of is None else check_time(as_of, "as_of")
        namespaces = where.readable_namespaces(scope, merge_global=True)
        return await _searching.search(self, query, namespaces, limit, moment)

    async def list_scope(self, scope: Scope, limit: int, where: Where) -> _models.ListResult:
        namespaces = where.readable_namespaces(scope, merge_global=False)
        return await _listing.list_scope(self, namespaces, limit)

    async def recent(self, scope: Scope, limit: int, where: Where) -> _models.ListResult:
        namespaces = where.readable_namespaces(scope, merge_global=False)
        return await _listing.recent(self, namespaces, limit)

    async def pin(self, text: str, scope: PinScope, where: Where) -> _models.PinResult:
        namespace = pin_namespace(scope, where.key, where.project)
        where.grant.check(namespace, write=True)
        return await _pins.pin(self, text, namespace)

    async def pins(self, where: Where) -> _models.PinsResult:
        local_name = where.key if where.key is not None else where.project
        local = None if local_name is None else pin_namespace("local", where.key, where.project)
        if local is not None:
            where.grant.check(local, write=False)
        # Under a scope key global pins are out of bounds, like everything outside the key; so
        # are they for a token without read access to global.
        readable_global = where.key is None and where.grant.allows(PINS_GLOBAL, write=False)
        global_pins = PINS_GLOBAL if readable_global else None
        return await _pins.pins(self, global_pins, local, local_name)

    async def unpin(self, memory_id: str, where: Where) -> _models.ChangeResult:
        return await _by_id.unpin(self, memory_id, where.readable(pins=True, writes=True))

    async def update(self, memory_id: str, text: str, where: Where) -> _models.ChangeResult:
        readable = where.readable(pins=True, writes=True)
        return await _by_id.update(self, memory_id, text, readable)

    async def delete(self, memory_id: str, where: Where) -> _models.ChangeResult:
        return await _by_id.delete(self, memory_id, where.readable(pins=True, writes=True))

    async def reinstate(self, memory_id: str, where: Where) -> _models.ChangeResult:
        readable = where.readable(pins=True, writes=True)
        return await _by_id.reinstate(self, memory_id, readable)

    async def history(self, memory_id: str, where: Where) -> _models.HistoryResult:
        return await _by_id.history(self, memory_id, where.readable(pins=False, writes=False))

    async def reset(
        self, reset_token: str | None, grant: Grant = EVERYTHING
    ) -> _models.ResetResult:
        """Wipe everything, only for the reset token this bridge holds.

        The bridge checks the token itself (in constant time) before anything is sent: mem0's
        official server does not know `X-Reset-Token` and wipes on any call with the admin key.
        The token is still forwarded, for servers that check it too (mem0-local).
        """
        grant.check_reset()
        expected = self.settings.reset_secret()
        if expected is None:
            raise BridgeError(
                "memory_reset is disabled on this bridge: the operator must set MEM0_RESET_TOKEN "
                "(or MEM0_RESET_TOKEN_FILE) to enable it. Nothing was sent."
            )
        token = check_reset_token(reset_token)
        if not hmac.compare_digest(token.encode(), expected.encode()):
            raise BridgeError(
                "the reset token is wrong; nothing was wiped. Ask the user to check the token, "
                "or drop the reset."
            )
        try:
            await self.mem0.reset(token)
        except Mem0Error as exc:
            if exc.status in (401, 403):
                raise BridgeError(
                    "mem0 refused the reset; nothing was wiped. The mem0 server's own reset "
                    "token or admin key differs from this bridge's; tell the operator."
                ) from exc
            raise
        failure = await self.ranker.forget(everything=True)
        return _models.ResetResult(
            reset=True, notes=skipped(failure, "its mention and dedupe records were not cleared")
        )

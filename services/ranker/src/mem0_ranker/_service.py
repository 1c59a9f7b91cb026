"""The gRPC face of the ranker: validate, call the store, score, answer.

The servicer holds no state of its own besides the store, so any number of replicas can serve
the same PostgreSQL database. Its clock is a parameter so tests can move time instead of
sleeping through dedupe windows and debounce periods.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Awaitable, Callable
from dataclasses import fields
from typing import TypeVar

import grpc
import psycopg
import psycopg_pool
from google.protobuf.message import Message

from mem0_common import GrpcServer, ServiceRegistration
from mem0_ranker import _requests
from mem0_ranker._mention_cache import MentionCache
from mem0_ranker._requests import LIMITS, InvalidArgument
from mem0_ranker._scoring import ScoringParams, rank_columns
from mem0_ranker._settings import RankerSettings
from mem0_ranker._store import Forgotten, Store
from mem0_ranker._timestamps import format_timestamp
from mem0mcp.ranker.v1 import ranker_pb2, ranker_pb2_grpc

_log = logging.getLogger("mem0_ranker")

SERVICE_NAME: str = ranker_pb2.DESCRIPTOR.services_by_name["RankerService"].full_name

#: Errors meaning "the database cannot answer now" (down, locked, out of connections), as
#: opposed to bugs: UNAVAILABLE tells the caller to retry later or do without the ranker.
STORAGE_UNAVAILABLE: tuple[type[Exception], ...] = (
    sqlite3.OperationalError,
    psycopg.OperationalError,
    psycopg_pool.PoolTimeout,
)

#: How long a holder refused a lease stays next in line for it without asking again: longer
#: than a poller's pause between asks, short enough that a poller that died blocks no one long.
NEXT_IN_LINE_SECONDS = 2.0

_Req = TypeVar("_Req", bound=Message)
_Resp = TypeVar("_Resp", bound=Message)
_Handler = Callable[["RankerServicer", _Req, grpc.aio.ServicerContext], Awaitable[_Resp]]


def _checked(
    handler: _Handler[_Req, _Resp], *, unknown_fields: bool = True
) -> _Handler[_Req, _Resp]:
    """Reject unknown fields, and turn InvalidArgument into the gRPC status naming the field."""

    async def wrapper(
        self: RankerServicer, request: _Req, context: grpc.aio.ServicerContext
    ) -> _Resp:
        try:
            if unknown_fields:
                _requests.reject_unknown_fields(request)
            return await handler(self, request, context)
        except InvalidArgument as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
            raise  # abort raises; this line only tells type checkers the call cannot fall through
        except STORAGE_UNAVAILABLE as exc:
            _log.warning("storage unavailable", exc_info=True)
            await context.abort(
                grpc.StatusCode.UNAVAILABLE, f"ranker storage unavailable: {type(exc).__name__}"
            )
            raise

    wrapper.__name__ = handler.__name__
    wrapper.__doc__ = handler.__doc__
    return wrapper


def _checked_in_one_pass(handler: _Handler[_Req, _Resp]) -> _Handler[_Req, _Resp]:
    """`_checked` for a handler whose validation also rejects unknown fields, with the same
    errors, while it visits each candidate anyway (Rerank: one pass over them, not two)."""
    return _checked(handler, unknown_fields=False)


def _forgotten(result: Forgotten) -> ranker_pb2.ForgetResponse:
    return ranker_pb2.ForgetResponse(
        mention_rows_deleted=result.mention_rows,
        dedupe_rows_deleted=result.dedupe_rows,
        pending_rows_deleted=result.pending_rows,
    )


class RankerServicer(ranker_pb2_grpc.RankerServiceServicer):
    def __init__(
        self, store: Store, settings: RankerSettings, clock: Callable[[], float] = time.time
    ) -> None:
        self._store = store
        self._clock = clock
        self._dedupe_window = settings.dedupe_window_seconds
        self._debounce = settings.reinforce_debounce_seconds
        # The settings name each scoring parameter as ScoringParams does.
        self._params = ScoringParams(
            **{field.name: getattr(settings, field.name) for field in fields(ScoringParams)}
        )
        self._limits = LIMITS

    @_checked
    async def CheckDuplicate(  # noqa: N802 - gRPC method name
        self, request: ranker_pb2.CheckDuplicateRequest, context: grpc.aio.ServicerContext
    ) -> ranker_pb2.CheckDuplicateResponse:
        scope, key = _requests.scoped_text(request, self._limits)
        found = await self._store.find_stored(scope, key, self._clock() - self._dedupe_window)
        if found is None:
            return ranker_pb2.CheckDuplicateResponse(duplicate=False)
        return ranker_pb2.CheckDuplicateResponse(
            duplicate=True,
            memory_id=found.memory_id,
            stored_at=format_timestamp(found.stored_at),
            scope_pending=await self._store.scope_pending(scope),
        )

    @_checked
    async def RecordStored(  # noqa: N802 - gRPC method name
        self, request: ranker_pb2.RecordStoredRequest, context: grpc.aio.ServicerContext
    ) -> ranker_pb2.RecordStoredResponse:
        scope, key = _requests.scoped_text(request, self._limits)
        memory_id = _requests.memory_id(request.memory_id, "memory_id", self._limits)
        await self._store.record_stored(
            scope, key, memory_id, self._clock(), replaces=request.replaces
        )
        return ranker_pb2.RecordStoredResponse()

    @_checked
    async def Reinforce(  # noqa: N802 - gRPC method name
        self, request: ranker_pb2.ReinforceRequest, context: grpc.aio.ServicerContext
    ) -> ranker_pb2.ReinforceResponse:
        memory_id = _requests.memory_id(request.memory_id, "memory_id", self._limits)
        scope = _requests.scope(request.scope, self._limits)
        result = await self._store.reinforce(memory_id, scope, self._clock(), self._debounce)
        return ranker_pb2.ReinforceResponse(
            counted=result.counted,
            mentions=result.mentions,
            last_reinforced_at=format_timestamp(result.last_reinforced_at),
        )

    @_checked_in_one_pass
    async def Rerank(  # noqa: N802 - gRPC method name
        self, request: ranker_pb2.RerankRequest, context: grpc.aio.ServicerContext
    ) -> ranker_pb2.RerankResponse:
        candidates = _requests.candidates(request, self._limits)
        # Hot memories are all cached: then no await (and no task switch) at all.
        records = self._store.cached_mentions(candidates.memory_ids)
        if records is None:
            records = await self._store.mentions(candidates.memory_ids)
        ranked = rank_columns(candidates, records, self._clock(), self._params, request.limit)
        response = ranker_pb2.RerankResponse()
        add = response.results.add  # in place: building messages first would copy each
        # Attributes set one by one: cheaper than add(**fields) or add(memory_id=..., ...).
        for memory_id, score, similarity, mentions, mention_factor, recency, age_days in ranked:
            result = add()
            result.memory_id = memory_id
            result.score = score
            result.similarity = similarity
            result.mentions = mentions
            result.mention_factor = mention_factor
            result.recency = recency
            result.age_days = age_days
        return response

    @_checked
    async def Forget(  # noqa: N802 - gRPC method name
        self, request: ranker_pb2.ForgetRequest, context: grpc.aio.ServicerContext
    ) -> ranker_pb2.ForgetResponse:
        target = request.WhichOneof("target")
        if target == "memories":
            ids = _requests.memory_ids(
                request.memories.memory_ids, "memories.memory_ids", self._limits
            )
            return _forgotten(await self._store.forget_memories(ids))
        if target == "scope":
            return _forgotten(
                await self._store.forget_scope(_requests.scope(request.scope, self._limits))
            )
        if target == "everything" and request.everything:
            return _forgotten(await self._store.forget_everything())
        if target == "everything":
            raise InvalidArgument("everything: must be true to forget everything")
        raise InvalidArgument("target: set one of memories, scope or everything")

    @_checked
    async def Fold(  # noqa: N802 - gRPC method name
        self, request: ranker_pb2.FoldRequest, context: grpc.aio.ServicerContext
    ) -> ranker_pb2.FoldResponse:
        scope, into, others = _requests.fold(request, self._limits)
        mentions = await self._store.fold(scope, into, others, self._clock())
        return ranker_pb2.FoldResponse(mentions=mentions)

    @_checked
    async def MarkPending(  # noqa: N802 - gRPC method name
        self, request: ranker_pb2.MarkPendingRequest, context: grpc.aio.ServicerContext
    ) -> ranker_pb2.MarkPendingResponse:
        scope = _requests.scope(request.scope, self._limits)
        memory_id = _requests.memory_id(request.memory_id, "memory_id", self._limits)
        reason = _requests.reason(request.reason, self._limits)
        await self._store.mark_pending(scope, memory_id, reason, self._clock())
        return ranker_pb2.MarkPendingResponse()

    @_checked
    async def ClaimPending(  # noqa: N802 - gRPC method name
        self, request: ranker_pb2.ClaimPendingRequest, context: grpc.aio.ServicerContext
    ) -> ranker_pb2.ClaimPendingResponse:
        limit, lease = _requests.claim(request, self._limits)
        claimed = await self._store.claim_pending(limit, lease, self._clock())
        return ranker_pb2.ClaimPendingResponse(
            pending=[
                ranker_pb2.PendingMemory(
                    scope=p.scope,
                    memory_id=p.memory_id,
                    reason=p.reason,
                    marked_at=format_timestamp(p.marked_at),
                    attempts=p.attempts,
                )
                for p in claimed
            ]
        )

    @_checked
    async def ResolvePending(  # noqa: N802 - gRPC method name
        self, request: ranker_pb2.ResolvePendingRequest, context: grpc.aio.ServicerContext
    ) -> ranker_pb2.ResolvePendingResponse:
        ids = _requests.memory_ids(request.memory_ids, "memory_ids", self._limits)
        return ranker_pb2.ResolvePendingResponse(resolved=await self._store.resolve_pending(ids))

    @_checked
    async def AcquireLease(  # noqa: N802 - gRPC method name
        self, request: ranker_pb2.AcquireLeaseRequest, context: grpc.aio.ServicerContext
    ) -> ranker_pb2.AcquireLeaseResponse:
        key, holder = _requests.lease(request, self._limits)
        ttl = _requests.lease_seconds(request.ttl_seconds, "ttl_seconds")
        answer = await self._store.acquire_lease(
            key, holder, ttl, self._clock(), NEXT_IN_LINE_SECONDS
        )
        return ranker_pb2.AcquireLeaseResponse(
            granted=answer.granted, expires_in_seconds=answer.expires_in
        )

    @_checked
    async def ReleaseLease(  # noqa: N802 - gRPC method name
        self, request: ranker_pb2.ReleaseLeaseRequest, context: grpc.aio.ServicerContext
    ) -> ranker_pb2.ReleaseLeaseResponse:
        key, holder = _requests.lease(request, self._limits)
        released = await self._store.release_lease(key, holder, self._clock())
        return ranker_pb2.ReleaseLeaseResponse(released=released)

    @_checked
    async def GetStats(  # noqa: N802 - gRPC method name
        self, request: ranker_pb2.GetStatsRequest, context: grpc.aio.ServicerContext
    ) -> ranker_pb2.GetStatsResponse:
        stats = await self._store.stats()
        return ranker_pb2.GetStatsResponse(
            mention_rows=stats.mention_rows,
            total_mentions=stats.total_mentions,
            dedupe_rows=stats.dedupe_rows,
            dedupe_hits=stats.dedupe_hits,
            pending_rows=stats.pending_rows,
        )


async def open_store(settings: RankerSettings) -> Store:
    """PostgreSQL when a database URL is set (replicas), else the SQLite file."""
    size = settings.mention_cache_size
    if settings.database_url:
        from mem0_ranker._postgres import PostgresStore  # noqa: PLC0415 - only when selected

        ttl = settings.mention_cache_ttl_seconds
        return await PostgresStore.open(
            settings.database_url,
            settings.pg_pool_max,
            settings.pg_timeout_seconds,
            mention_cache=MentionCache(size, ttl) if size and ttl else None,
        )
    from mem0_ranker._sqlite import SqliteStore  # noqa: PLC0415

    return await SqliteStore.open(
        settings.db_path, mention_cache=MentionCache(size) if size else None
    )


def create_server(
    settings: RankerSettings, store: Store, clock: Callable[[], float] = time.time
) -> GrpcServer:
    servicer = RankerServicer(store, settings, clock)
    registration = ServiceRegistration(
        SERVICE_NAME, servicer, ranker_pb2_grpc.add_RankerServiceServicer_to_server
    )
    return GrpcServer("ranker", [registration], settings)

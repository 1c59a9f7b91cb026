"""The MCP server: one tool per memory operation, each returning text plus structured content.

`create_server` takes its dependencies (settings, an optional httpx transport for mem0, the
directory a stdio server derives its project from) so tests build it in process. The lifespan
owns the long-lived clients: the mem0 HTTP pool and the ranker and judge channels.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, cast

import anyio
import httpx
from mcp.server import MCPServer
from mcp.server.mcpserver import Context, ListRoots, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types import (
    CallToolResult,
    ListRootsRequest,
    ListRootsResult,
    TextContent,
    ToolAnnotations,
)
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel, Field, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from mem0_bridge import _render
from mem0_bridge._access import EVERYTHING, GRANT_STATE_KEY, Grant
from mem0_bridge._errors import BridgeError
from mem0_bridge._inputs import quote
from mem0_bridge._judge import LLM_HEALTH_SUFFIX, JudgeClient
from mem0_bridge._mem0 import Mem0Client, Mem0Error
from mem0_bridge._models import (
    AddResult,
    ChangeResult,
    HistoryResult,
    ListResult,
    PinResult,
    PinsResult,
    ResetResult,
    SearchResult,
)
from mem0_bridge._ranker import RankerClient
from mem0_bridge._scopes import check_name, derive_project, project_from_roots
from mem0_bridge._service import MemoryService, Where
from mem0_bridge._settings import BridgeSettings
from mem0_bridge._strict import make_strict
from mem0_common import request_id_var

logger = logging.getLogger(__name__)

INSTRUCTIONS = """\
Long-term memory shared across sessions and agents.
- At the start of a task call memory_pins: standing rules and facts that always apply.
- Before re-deriving something (a command, a decision, a convention), memory_search for it.
- Store durable, self-contained facts with memory_add (one fact per call, no secrets). The
  server reconciles: a restated fact reinforces the stored one, a changed fact updates it.
- Scopes: "project" (default; search also reads "global"), "global" (cross-project), "all".
Hits render as id<TAB>score<TAB>age<TAB>text; ids are UUIDs for update/delete/history."""


@dataclass
class AppState:
    settings: BridgeSettings
    service: MemoryService
    #: The project a stdio server derived from its working directory, if any.
    derived_project: str | None


class _StateBox:
    """Lets the HTTP probes reach the clients the MCP lifespan opened."""

    current: AppState | None = None


# ---- argument types (their descriptions are what the agent reads) ---------------------------

ProjectArg = Annotated[
    str | None,
    Field(
        description="Project scope name (the repository's name). Overrides the one derived from "
        "the working directory or MCP roots; needed over HTTP when the client shares no roots."
    ),
]
KeyArg = Annotated[
    str | None,
    Field(
        description="Scope key: confines this call to that one namespace, overriding scope and "
        "project (e.g. one namespace per chat room)."
    ),
]
ReadScope = Annotated[
    Literal["project", "global", "all"],
    Field(description='"project" (with global merged in for search), "global", or "all".'),
]
WriteScope = Annotated[
    Literal["project", "global"],
    Field(
        description='"project" for facts about this project, "global" for facts that hold '
        "everywhere (user preferences, machine setup)."
    ),
]
MemoryId = Annotated[str, Field(description="The memory's UUID, from a search or list hit.")]


def _result(model: BaseModel, text: str) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=model.model_dump(mode="json"),
    )


def _grant(ctx: Context) -> Grant:
    """What the caller's bearer token may use (left in the request by the auth middleware);
    everything over stdio, and over HTTP when no token is configured (loopback only)."""
    request = ctx.request_context.request
    state = getattr(request, "scope", {}).get("state", {}) if request is not None else {}
    grant = state.get(GRANT_STATE_KEY)
    return grant if isinstance(grant, Grant) else EVERYTHING


@contextmanager
def _tool_call(ctx: Context, tool: str) -> Iterator[None]:
    """Give the call a request id (sent on to the ranker and judge), log who made it (the
    token's name, never the token) and turn failures into agent-facing errors."""
    token = request_id_var.set(uuid.uuid4().hex[:16])
    logger.info("%s called by token %s", tool, _grant(ctx).name)
    try:
        yield
    except (BridgeError, Mem0Error) as exc:
        raise ToolError(str(exc)) from exc
    finally:
        request_id_var.reset(token)


def _state(ctx: Context) -> AppState:
    return cast(AppState, ctx.request_context.lifespan_context)


def _fixed_project(state: AppState) -> str | None:
    return state.settings.project or state.derived_project


async def _client_roots(
    ctx: Context, project: str | None, key: str | None
) -> ListRoots | ListRootsResult | None:
    """Ask the client for its roots only when nothing else names the project.

    Where the session can ask the client directly, the bridge does, so that roots the SDK's
    model refuses (a root that is not a `file://` URI) are ignored with a note in the log rather
    than failing the call with a traceback; the project is then unknown, and a call that needs
    one says how to name it. Otherwise the framework asks (the input-required flow).
    """
    state = _state(ctx)
    if project or key or state.settings.scope_key or _fixed_project(state):
        return None
    capabilities = ctx.client_capabilities
    if capabilities is None or capabilities.roots is None:
        return None
    if not ctx.session.can_send_request:
        return ListRoots()
    try:
        roots: ListRootsResult = await ctx.session.send_request(
            ListRootsRequest(),
            ListRootsResult,
            metadata=ServerMessageMetadata(related_request_id=ctx.request_context.request_id),
        )
    except (ValidationError, MCPError) as exc:
        logger.info(
            "client roots ignored (they name no file:// folder): %s", str(exc).splitlines()[0]
        )
        return None
    return roots


RootsArg = Annotated[ListRootsResult | None, Resolve(_client_roots)]


async def _where(
    ctx: Context, project: str | None, key: str | None, roots: ListRootsResult | None
) -> Where:
    """Scope key beats everything; then the project argument, MEM0_PROJECT, git/cwd, roots.

    A bridge started with MEM0_SCOPE_KEY is confined to it: a `key` argument naming another
    namespace is refused, never followed.
    """
    state = _state(ctx)
    grant = _grant(ctx)
    fixed_key = state.settings.scope_key
    if fixed_key is not None:
        confined = check_name(fixed_key, "MEM0_SCOPE_KEY")
        if key is not None and check_name(key, "key") != confined:
            raise BridgeError(
                f"this bridge is confined to the scope key {confined!r} (MEM0_SCOPE_KEY); "
                f"key={quote(key)} is outside it. Drop the key argument."
            )
        return Where(key=confined, project=None, grant=grant)
    if key is not None:
        return Where(key=check_name(key, "key"), project=None, grant=grant)
    if project is not None:
        return Where(key=None, project=check_name(project, "project"), grant=grant)
    fixed = _fixed_project(state)
    if fixed is not None:
        return Where(key=None, project=check_name(fixed, "project"), grant=grant)
    if roots is not None:
        uris = [str(root.uri) for root in roots.roots]
        name = project_from_roots(uris)
        if name is not None:
            return Where(key=None, project=check_name(name, "project"), grant=grant)
    return Where(key=None, project=None, grant=grant)


# ---- the tools (module-level; registered with their descriptions in `_TOOLS`) -----------------


async def memory_add(
    ctx: Context,
    roots: RootsArg,
    *,
    text: Annotated[str, Field(description="The fact, as one or a few plain sentences.")],
    scope: WriteScope = "project",
    project: ProjectArg = None,
    key: KeyArg = None,
) -> Annotated[CallToolResult, AddResult]:
    with _tool_call(ctx, "memory_add"):
        state = _state(ctx)
        where = await _where(ctx, project, key, roots)
        result = await state.service.add(text, scope, where)
        return _result(result, _render.render_add(result))


async def memory_search(
    ctx: Context,
    roots: RootsArg,
    *,
    query: Annotated[str, Field(description="What to recall: a question or keywords.")],
    scope: ReadScope = "project",
    limit: Annotated[int, Field(ge=1, le=50, description="Most hits to return.")] = 10,
    project: ProjectArg = None,
    key: KeyArg = None,
) -> Annotated[CallToolResult, SearchResult]:
    with _tool_call(ctx, "memory_search"):
        state = _state(ctx)
        where = await _where(ctx, project, key, roots)
        result = await state.service.search(query, scope, limit, where)
        return _result(result, _render.render_search(result))


async def memory_list(
    ctx: Context,
    roots: RootsArg,
    *,
    scope: ReadScope = "project",
    limit: Annotated[int, Field(ge=1, le=1000, description="Most memories to return.")] = 50,
    project: ProjectArg = None,
    key: KeyArg = None,
) -> Annotated[CallToolResult, ListResult]:
    with _tool_call(ctx, "memory_list"):
        state = _state(ctx)
        where = await _where(ctx, project, key, roots)
        result = await state.service.list_scope(scope, limit, where)
        return _result(result, _render.render_list(result))


async def memory_recent(
    ctx: Context,
    roots: RootsArg,
    *,
    scope: ReadScope = "project",
    limit: Annotated[int, Field(ge=1, le=200, description="Most memories to return.")] = 10,
    project: ProjectArg = None,
    key: KeyArg = None,
) -> Annotated[CallToolResult, ListResult]:
    with _tool_call(ctx, "memory_recent"):
        state = _state(ctx)
        where = await _where(ctx, project, key, roots)
        result = await state.service.recent(scope, limit, where)
        return _result(result, _render.render_list(result))


async def memory_pin(
    ctx: Context,
    roots: RootsArg,
    *,
    text: Annotated[str, Field(description="The rule or fact, verbatim.")],
    scope: Annotated[
        Literal["local", "global"],
        Field(description='"local" (default): this project only; "global": everywhere.'),
    ] = "local",
    project: ProjectArg = None,
    key: KeyArg = None,
) -> Annotated[CallToolResult, PinResult]:
    with _tool_call(ctx, "memory_pin"):
        state = _state(ctx)
        where = await _where(ctx, project, key, roots)
        result = await state.service.pin(text, scope, where)
        return _result(result, _render.render_pin(result))


async def memory_pins(
    ctx: Context,
    roots: RootsArg,
    *,
    project: ProjectArg = None,
    key: KeyArg = None,
) -> Annotated[CallToolResult, PinsResult]:
    with _tool_call(ctx, "memory_pins"):
        state = _state(ctx)
        where = await _where(ctx, project, key, roots)
        result = await state.service.pins(where)
        return _result(result, _render.render_pins(result))


async def memory_unpin(
    ctx: Context,
    roots: RootsArg,
    *,
    memory_id: MemoryId,
    project: ProjectArg = None,
    key: KeyArg = None,
) -> Annotated[CallToolResult, ChangeResult]:
    with _tool_call(ctx, "memory_unpin"):
        state = _state(ctx)
        where = await _where(ctx, project, key, roots)
        result = await state.service.unpin(memory_id, where)
        return _result(result, _render.render_change(result))


async def memory_update(
    ctx: Context,
    roots: RootsArg,
    *,
    memory_id: MemoryId,
    text: Annotated[str, Field(description="The memory's new full text.")],
    project: ProjectArg = None,
    key: KeyArg = None,
) -> Annotated[CallToolResult, ChangeResult]:
    with _tool_call(ctx, "memory_update"):
        state = _state(ctx)
        where = await _where(ctx, project, key, roots)
        result = await state.service.update(memory_id, text, where)
        return _result(result, _render.render_change(result))


async def memory_delete(
    ctx: Context,
    roots: RootsArg,
    *,
    memory_id: MemoryId,
    project: ProjectArg = None,
    key: KeyArg = None,
) -> Annotated[CallToolResult, ChangeResult]:
    with _tool_call(ctx, "memory_delete"):
        state = _state(ctx)
        where = await _where(ctx, project, key, roots)
        result = await state.service.delete(memory_id, where)
        return _result(result, _render.render_change(result))


async def memory_history(
    ctx: Context,
    roots: RootsArg,
    *,
    memory_id: MemoryId,
    project: ProjectArg = None,
    key: KeyArg = None,
) -> Annotated[CallToolResult, HistoryResult]:
    with _tool_call(ctx, "memory_history"):
        state = _state(ctx)
        where = await _where(ctx, project, key, roots)
        result = await state.service.history(memory_id, where)
        return _result(result, _render.render_history(result))


async def memory_reset(
    ctx: Context,
    reset_token: Annotated[
        str | None, Field(description="The reset token the user gave you for this wipe.")
    ] = None,
) -> Annotated[CallToolResult, ResetResult]:
    with _tool_call(ctx, "memory_reset"):
        result = await _state(ctx).service.reset(reset_token, _grant(ctx))
        return _result(result, _render.render_reset(result))


_READ = ToolAnnotations(read_only_hint=True)
_TOOLS: list[tuple[Any, str, ToolAnnotations]] = [
    (
        memory_add,
        "Store one durable, self-contained fact. Reconciles instead of piling up: an identical "
        "recent add is reported as a duplicate, a restatement of a stored fact reinforces it, a "
        "changed fact updates the old memory in place (same id). The answer says which happened "
        "(added, duplicate, reinforced, updated) with the memory ids.",
        ToolAnnotations(destructive_hint=False, idempotent_hint=False),
    ),
    (
        memory_search,
        "Semantic recall. Questions work (they are also searched as the statement that would "
        "answer them). Results are reranked so reconfirmed and recent facts rank higher. One hit "
        "per line: id<TAB>score<TAB>age<TAB>text. Pins never appear here.",
        _READ,
    ),
    (
        memory_list,
        "List the memories of a scope (unordered; the server caps the page). For recall use "
        "memory_search; for the latest entries use memory_recent. No pins.",
        _READ,
    ),
    (
        memory_recent,
        "The most recently added or updated memories first, to recover recent context without "
        "a query. One per line: id<TAB>-<TAB>age<TAB>text. No pins.",
        _READ,
    ),
    (
        memory_pin,
        "Pin a hard rule or always-needed fact (like an AGENTS.md line): stored verbatim, "
        "deduped, never decayed, returned by memory_pins and never by search.",
        ToolAnnotations(destructive_hint=False, idempotent_hint=True),
    ),
    (
        memory_pins,
        "All pins that apply now: global pins and this project's pins. Call it at the start of "
        "every task and follow what it returns.",
        _READ,
    ),
    (
        memory_unpin,
        "Remove one pin by its id (from memory_pins). Refuses ids of ordinary memories.",
        ToolAnnotations(destructive_hint=True, idempotent_hint=True),
    ),
    (
        memory_update,
        "Rewrite one memory by id, keeping its id and history (see memory_history). Reaches the "
        "project's and global's memories (pass project= for another project's); not pins.",
        ToolAnnotations(destructive_hint=True, idempotent_hint=True),
    ),
    (
        memory_delete,
        "Delete one memory by id (the project's or global's; pass project= for another "
        "project's). Pins are removed with memory_unpin. There is no bulk delete.",
        ToolAnnotations(destructive_hint=True, idempotent_hint=True),
    ),
    (
        memory_history,
        "How one memory changed over time (added, updated, deleted), oldest first.",
        _READ,
    ),
    (
        memory_reset,
        "Irreversibly wipe the WHOLE memory store (every project, global, pins). Needs the reset "
        "token, which only the human user holds: never guess it; without it this tool sends "
        "nothing and tells you to ask.",
        ToolAnnotations(destructive_hint=True),
    ),
]


async def _readiness(service: MemoryService) -> dict[str, str]:
    """What each part says: mem0 `ok` or its error; the ranker and judge `serving`, `off` or
    why not. A helper that answers but cannot do its job (a judge without an LLM, or whose LLM
    failed its latest calls) leaves the bridge ready but degraded; one that does not answer at
    all makes it not ready."""
    checks: dict[str, str] = {}

    async def mem0_check() -> None:
        try:
            await service.mem0.ping()
        except Mem0Error as exc:
            checks["mem0"] = str(exc)
        else:
            checks["mem0"] = "ok"

    async def ranker_check() -> None:
        checks["ranker"] = await service.ranker.peer.probe()

    async def judge_check() -> None:
        peer = service.judge.peer
        judge = await peer.probe()
        if judge == "not serving":
            judge = "no LLM configured: adds are not reconciled, questions not rewritten"
        elif judge == "serving":
            llm = await peer.probe(peer.health_service + LLM_HEALTH_SUFFIX)
            if llm == "not serving":
                judge = "degraded: its LLM failed its latest calls (adds are queued unjudged)"
        checks["judge"] = judge

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(mem0_check)
        tasks.start_soon(ranker_check)
        tasks.start_soon(judge_check)
    return checks


def _probes(box: _StateBox) -> list[tuple[str, Any]]:
    """/healthz: the process answers. /readyz: mem0, the ranker and the judge answer.
    /metrics: Prometheus counters (reconciling among them), behind the bearer token."""

    async def healthz(_: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def readyz(request: Request) -> Response:
        state = box.current
        if state is None:
            return JSONResponse({"status": "starting"}, status_code=503)
        checks = await _readiness(state.service)
        ready = checks["mem0"] == "ok" and all(
            not checks[name].startswith("unreachable") for name in ("ranker", "judge")
        )
        degraded = any(v not in {"ok", "serving", "off"} for v in checks.values())
        status = "not ready" if not ready else ("degraded" if degraded else "ready")
        body: dict[str, object] = {"status": status}
        # Addresses and error texts are for the operator: only callers with a valid token (or
        # any caller when the bridge asks for none, on loopback) see them.
        settings = state.settings
        open_bridge = not (settings.http_bearer_token or settings.http_tokens_file)
        if open_bridge or GRANT_STATE_KEY in request.scope.get("state", {}):
            body["checks"] = checks
        return JSONResponse(body, status_code=200 if ready else 503)

    async def metrics(_: Request) -> Response:
        return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)

    return [("/healthz", healthz), ("/readyz", readyz), ("/metrics", metrics)]


def create_server(
    settings: BridgeSettings,
    *,
    mem0_transport: httpx.AsyncBaseTransport | None = None,
    working_directory: Path | None = None,
) -> MCPServer[AppState]:
    """Build the bridge. `working_directory` set means stdio mode: derive the project from it."""
    box = _StateBox()

    @asynccontextmanager
    async def lifespan(_: MCPServer[AppState]) -> AsyncIterator[AppState]:
        derived = (
            await anyio.to_thread.run_sync(derive_project, working_directory)
            if working_directory is not None
            else None
        )
        mem0 = Mem0Client(settings, transport=mem0_transport)
        ranker = RankerClient(settings.ranker_address, settings.ranker_timeout_seconds)
        judge = JudgeClient(settings.judge_address, settings.judge_timeout_seconds)
        state = AppState(
            settings=settings,
            service=MemoryService(settings, mem0, ranker, judge),
            derived_project=derived,
        )
        box.current = state
        try:
            async with anyio.create_task_group() as background:
                background.start_soon(state.service.reconciler.run)
                try:
                    yield state
                finally:
                    background.cancel_scope.cancel()
        finally:
            box.current = None
            await mem0.aclose()
            await ranker.aclose()
            await judge.aclose()

    server: MCPServer[AppState] = MCPServer(
        "mem0-bridge",
        instructions=INSTRUCTIONS,
        version="0.1.0",
        lifespan=lifespan,
        log_level=settings.log_level.upper(),  # type: ignore[arg-type]
        request_state_security=settings.request_state_security(),
    )
    for fn, description, hints in _TOOLS:
        server.add_tool(fn, description=description, annotations=hints)
        tool = server._tool_manager.get_tool(fn.__name__)
        if tool is None:
            raise RuntimeError(f"{fn.__name__} was not registered")
        make_strict(tool)
    for path, endpoint in _probes(box):
        server.custom_route(path, methods=["GET"])(endpoint)
    return server

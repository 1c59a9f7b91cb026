"""The MCP server: one tool per memory operation, each returning text plus structured content.

A tool is its signature, its docstring (the description) and one call of the memory service
(`_tool` registers it). Its parameters are what the agent sends plus what the SDK's resolvers
(`Resolve`) fill in: the service and who the call is for (`Where`, from the `project` and `key`
arguments every scoped tool takes, the settings and the client's roots).

`create_server` takes its dependencies (settings, an optional httpx transport for mem0, the
directory a stdio server derives its project from) so tests build it in process. The lifespan
owns the long-lived clients: the mem0 HTTP pool and the ranker and judge channels.
"""

from __future__ import annotations

import functools
import inspect
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, cast

import anyio
import httpx
from mcp.server import MCPServer
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import AcceptedElicitation, Context, ListRoots, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
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
from pydantic import BaseModel, ConfigDict, Field, ValidationError
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
from mem0_bridge._output_schema import cheap_to_validate
from mem0_bridge._ranker import RankerClient
from mem0_bridge._scopes import check_name, derive_project, project_from_roots
from mem0_bridge._service import MemoryService, Where
from mem0_bridge._settings import BridgeSettings
from mem0_common import request_id_var

logger = logging.getLogger(__name__)

INSTRUCTIONS = """\
Long-term memory shared across sessions and agents.
- At the start of a task call memory_pins: standing rules and facts that always apply.
- Before re-deriving something (a command, a decision, a convention), memory_search for it.
- Store durable, self-contained facts with memory_add (one fact per call, no secrets). The
  server reconciles: a restated fact reinforces the stored one, a changed fact supersedes it
  (kept: memory_search(as_of=...) and memory_history show what held when).
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
FactText = Annotated[str, Field(description="The fact, as one or a few plain sentences.")]
ListLimit = Annotated[int, Field(ge=1, le=1000, description="Most memories to return.")]
RecentLimit = Annotated[int, Field(ge=1, le=200, description="Most memories to return.")]


# ---- what the bridge fills in (resolvers: not in the input schema) --------------------------

#: The SDK wraps each resolved value in `AcceptedElicitation[Any]`, a generic class pydantic
#: caches only while something refers to it: without this reference every garbage collection
#: drops it, and the next tool call builds the class again (about 0.2 ms of a search's 1 ms of
#: MCP server work, measured with py-spy).
_RESOLVED_VALUE = AcceptedElicitation[Any]


async def _state(ctx: Context) -> AppState:
    return cast(AppState, ctx.request_context.lifespan_context)


State = Annotated[AppState, Resolve(_state)]


async def _service(state: State) -> MemoryService:
    return state.service


#: The memory service, for a tool (filled by the SDK, not an argument the agent sends).
Service = Annotated[MemoryService, Resolve(_service)]


def _grant_of(request: object) -> Grant:
    """What the caller's bearer token may use (left in the request by the auth middleware);
    everything over stdio, and over HTTP when no token is configured (loopback only)."""
    state = getattr(request, "scope", {}).get("state", {}) if request is not None else {}
    grant = state.get(GRANT_STATE_KEY)
    return grant if isinstance(grant, Grant) else EVERYTHING


async def _grant(ctx: Context) -> Grant:
    return _grant_of(ctx.request_context.request)


#: The caller's grant, for a tool that takes no scope (memory_reset).
Caller = Annotated[Grant, Resolve(_grant)]


@contextmanager
def _agent_errors() -> Iterator[None]:
    """Turn the failures meant for the agent into tool errors that carry their text (the SDK
    hides the text of any other exception)."""
    try:
        yield
    except (BridgeError, Mem0Error) as exc:
        raise ToolError(str(exc)) from exc


def _fixed_project(state: AppState) -> str | None:
    return state.settings.project or state.derived_project


async def _client_roots(
    ctx: Context, state: State, project: str | None, key: str | None
) -> ListRoots | ListRootsResult | None:
    """Ask the client for its roots only when nothing else names the project.

    Where the session can ask the client directly, the bridge does, so that roots the SDK's
    model refuses (a root that is not a `file://` URI) are ignored with a note in the log rather
    than failing the call with a traceback; the project is then unknown, and a call that needs
    one says how to name it. Otherwise the framework asks (the input-required flow).
    """
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


async def _where(
    state: State,
    grant: Caller,
    roots: Annotated[ListRootsResult | None, Resolve(_client_roots)],
    project: str | None,
    key: str | None,
) -> Where:
    """Scope key beats everything; then the project argument, MEM0_PROJECT, git/cwd, roots.

    A bridge started with MEM0_SCOPE_KEY is confined to it: a `key` argument naming another
    namespace is refused, never followed.
    """
    with _agent_errors():
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
            name = project_from_roots([str(root.uri) for root in roots.roots])
            if name is not None:
                return Where(key=None, project=check_name(name, "project"), grant=grant)
        return Where(key=None, project=None, grant=grant)


#: Who the call is for (from `project`, `key`, the settings and the client's roots).
Scoped = Annotated[Where, Resolve(_where)]


class _AsSent(FuncMetadata):
    """`FuncMetadata` without the SDK's JSON pre-parsing of string arguments."""

    def pre_parse_json(self, data: dict[str, Any]) -> dict[str, Any]:
        return dict(data)


def _strict_tool(fn: Callable[..., Any], hints: ToolAnnotations) -> Tool:
    """`fn` as a tool that takes its arguments as sent, its docstring on one line describing it.

    The SDK's argument handling is lenient in ways that change what a call does: an unknown
    argument is dropped (a typo like `scope_key` then writes to the project scope), a string is
    JSON-decoded before validation (`key="null"` becomes no key) and a numeric string passes
    for a number. The tool's argument model refuses all three instead, naming the argument.
    """
    tool = Tool.from_function(
        fn, description=" ".join((fn.__doc__ or "").split()), annotations=hints
    )
    lenient = tool.fn_metadata.arg_model
    strict: type[ArgModelBase] = type(
        lenient.__name__,
        (lenient,),
        {
            "model_config": ConfigDict(
                **{**lenient.model_config, "extra": "forbid", "strict": True}
            ),
            "__module__": lenient.__module__,
        },
    )
    metadata = tool.fn_metadata
    as_sent = _AsSent(
        arg_model=strict,
        output_schema=(
            None if metadata.output_schema is None else cheap_to_validate(metadata.output_schema)
        ),
        output_model=metadata.output_model,
        wrap_output=metadata.wrap_output,
    )
    return tool.model_copy(
        update={"fn_metadata": as_sent, "parameters": strict.model_json_schema(by_alias=True)}
    )


_Result = TypeVar("_Result", bound=BaseModel)
_TOOLS: list[Tool] = []


#: The arguments `_where` reads by name, which every tool taking `where` takes after its own.
_SCOPE_ARGUMENTS = (
    inspect.Parameter(
        "project", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=ProjectArg
    ),
    inspect.Parameter("key", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=KeyArg),
)


def _tool(
    hints: ToolAnnotations, render: Callable[[_Result], str]
) -> Callable[[Callable[..., Awaitable[_Result]]], Callable[..., Awaitable[_Result]]]:
    """Register a tool: its docstring is its description, its result is answered as structured
    content plus `render`'s text, its arguments are taken as sent and its failures answered as
    tool errors the agent can read. A tool that takes `where` also takes `project` and `key`
    (`_SCOPE_ARGUMENTS`, declared once here): the SDK fills `where` from them, and the tool
    itself never sees them."""

    def register(fn: Callable[..., Awaitable[_Result]]) -> Callable[..., Awaitable[_Result]]:
        own = inspect.signature(fn, eval_str=True)
        parameters = [*own.parameters.values()]
        if "where" in own.parameters:
            parameters += _SCOPE_ARGUMENTS

        @functools.wraps(fn)
        async def call(**arguments: Any) -> CallToolResult:
            with _agent_errors():
                result = await fn(**{n: v for n, v in arguments.items() if n in own.parameters})
            return CallToolResult(
                content=[TextContent(type="text", text=render(result))],
                structured_content=result.model_dump(mode="json"),
            )

        # What the SDK reads to build the tool: the signature and the evaluated annotations.
        call.__signature__ = own.replace(parameters=parameters)  # type: ignore[attr-defined]
        call.__annotations__ = {p.name: p.annotation for p in parameters}
        call.__annotations__["return"] = Annotated[CallToolResult, own.return_annotation]
        _TOOLS.append(_strict_tool(call, hints))
        return fn

    return register


async def _tool_calls(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Give each call of a tool a request id (sent on to the ranker and judge, and on every log
    line of the call) and log who made it (the token's name, never the token)."""
    tool = (ctx.params or {}).get("name")
    if ctx.method != "tools/call" or tool not in {t.name for t in _TOOLS}:
        return await call_next(ctx)
    token = request_id_var.set(uuid.uuid4().hex[:16])
    logger.info("%s called by token %s", tool, _grant_of(ctx.request).name)
    try:
        return await call_next(ctx)
    finally:
        request_id_var.reset(token)


_READ = ToolAnnotations(read_only_hint=True)
_REMOVES = ToolAnnotations(destructive_hint=True, idempotent_hint=True)


# ---- the tools -------------------------------------------------------------------------------


@_tool(ToolAnnotations(destructive_hint=False, idempotent_hint=False), _render.render_add)
async def memory_add(
    service: Service, where: Scoped, *, text: FactText, scope: WriteScope = "project"
) -> AddResult:
    """Store one durable, self-contained fact. Reconciles instead of piling up: an identical
    recent add is reported as a duplicate, a restatement of a stored fact reinforces it, a
    changed fact is stored and the memory with the old value is marked superseded (kept, never
    deleted: see memory_history, memory_search(as_of=...), memory_reinstate). The answer says
    which happened (added, duplicate, reinforced, updated) with the ids."""
    return await service.add(text, scope, where)


@_tool(_READ, _render.render_search)
async def memory_search(
    service: Service,
    where: Scoped,
    *,
    query: Annotated[str, Field(description="What to recall: a question or keywords.")],
    scope: ReadScope = "project",
    limit: Annotated[int, Field(ge=1, le=50, description="Most hits to return.")] = 10,
    as_of: Annotated[
        str | None,
        Field(
            description="An RFC 3339 time (2026-12-01T09:00:00Z): answer with the memories "
            "that were current then, instead of now."
        ),
    ] = None,
) -> SearchResult:
    """Semantic recall. Questions work (they are also searched as the statement that would
    answer them). Results are reranked so reconfirmed and recent facts rank higher, and a
    superseded value always ranks below the value that replaced it. as_of=<RFC 3339 time>
    answers with what was current then. One hit per line: id<TAB>score<TAB>age<TAB>text. Pins
    never appear here."""
    return await service.search(query, scope, limit, where, as_of)


@_tool(_READ, _render.render_list)
async def memory_list(
    service: Service, where: Scoped, *, scope: ReadScope = "project", limit: ListLimit = 50
) -> ListResult:
    """List the memories of a scope (unordered; the server caps the page). For recall use
    memory_search; for the latest entries use memory_recent. No pins."""
    return await service.list_scope(scope, limit, where)


@_tool(_READ, _render.render_list)
async def memory_recent(
    service: Service, where: Scoped, *, scope: ReadScope = "project", limit: RecentLimit = 10
) -> ListResult:
    """The most recently added or updated memories first, to recover recent context without
    a query. One per line: id<TAB>-<TAB>age<TAB>text. No pins."""
    return await service.recent(scope, limit, where)


@_tool(ToolAnnotations(destructive_hint=False, idempotent_hint=True), _render.render_pin)
async def memory_pin(
    service: Service,
    where: Scoped,
    *,
    text: Annotated[str, Field(description="The rule or fact, verbatim.")],
    scope: Annotated[
        Literal["local", "global"],
        Field(description='"local" (default): this project only; "global": everywhere.'),
    ] = "local",
) -> PinResult:
    """Pin a hard rule or always-needed fact (like an AGENTS.md line): stored verbatim,
    deduped, never decayed, returned by memory_pins and never by search."""
    return await service.pin(text, scope, where)


@_tool(_READ, _render.render_pins)
async def memory_pins(service: Service, where: Scoped) -> PinsResult:
    """All pins that apply now: global pins and this project's pins. Call it at the start of
    every task and follow what it returns."""
    return await service.pins(where)


@_tool(_REMOVES, _render.render_change)
async def memory_unpin(service: Service, where: Scoped, *, memory_id: MemoryId) -> ChangeResult:
    """Remove one pin by its id (from memory_pins). Refuses ids of ordinary memories."""
    return await service.unpin(memory_id, where)


@_tool(_REMOVES, _render.render_change)
async def memory_update(
    service: Service,
    where: Scoped,
    *,
    memory_id: MemoryId,
    text: Annotated[str, Field(description="The memory's new full text.")],
) -> ChangeResult:
    """Rewrite one memory by id, keeping its id and history (see memory_history). Reaches the
    project's and global's memories (pass project= for another project's); not pins."""
    return await service.update(memory_id, text, where)


@_tool(_REMOVES, _render.render_change)
async def memory_delete(service: Service, where: Scoped, *, memory_id: MemoryId) -> ChangeResult:
    """Delete one memory by id (the project's or global's; pass project= for another
    project's). Pins are removed with memory_unpin. There is no bulk delete."""
    return await service.delete(memory_id, where)


@_tool(ToolAnnotations(destructive_hint=False, idempotent_hint=True), _render.render_change)
async def memory_reinstate(service: Service, where: Scoped, *, memory_id: MemoryId) -> ChangeResult:
    """Make a superseded memory current again, by id: undo a change recorded by mistake (the
    memory that superseded it becomes superseded in turn). Stating the old value again with
    memory_add does the same."""
    return await service.reinstate(memory_id, where)


@_tool(_READ, _render.render_history)
async def memory_history(service: Service, where: Scoped, *, memory_id: MemoryId) -> HistoryResult:
    """How one memory changed over time (added, updated, deleted), oldest first, and when its
    value held: its validity spans, and the memory that superseded it if any."""
    return await service.history(memory_id, where)


@_tool(ToolAnnotations(destructive_hint=True), _render.render_reset)
async def memory_reset(
    service: Service,
    grant: Caller,
    reset_token: Annotated[
        str | None, Field(description="The reset token the user gave you for this wipe.")
    ] = None,
) -> ResetResult:
    """Irreversibly wipe the WHOLE memory store (every project, global, pins). Needs the reset
    token, which only the human user holds: never guess it; without it this tool sends
    nothing and tells you to ask."""
    return await service.reset(reset_token, grant)


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
                background.start_soon(state.service.rewrites.run)
                try:
                    yield state
                finally:
                    background.cancel_scope.cancel()
        finally:
            box.current = None
            # What the last writes left to do (their records, their leases given back).
            await state.service.scope_locks.settled()
            await mem0.aclose()
            await ranker.aclose()
            await judge.aclose()

    server: MCPServer[AppState] = MCPServer(
        "mem0-bridge",
        instructions=INSTRUCTIONS,
        version="0.1.0",
        lifespan=lifespan,
        log_level=settings.log_level.upper(),  # type: ignore[arg-type]
        tools=list(_TOOLS),
        middleware=[_tool_calls],
        request_state_security=settings.request_state_security(),
    )
    for path, endpoint in _probes(box):
        server.custom_route(path, methods=["GET"])(endpoint)
    return server

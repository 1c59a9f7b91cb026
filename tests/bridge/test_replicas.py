"""Two bridge processes behind a load balancer without session affinity (issue 25).

A tiny round-robin proxy (`tests.support.round_robin`) sends each HTTP request to the next
replica, so consecutive requests of one client always land on different processes. The bridge
serves HTTP statelessly by default (MEM0_HTTP_STATELESS): a client at protocol 2026-07-28 sends
self-contained requests anyway, and one at 2025-11-25 (the initialize handshake) keeps working
because no request depends on a session held in one process. What the older client loses is
the server's requests to it mid-call: the bridge cannot ask it for its roots.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import anyio
import httpx
import pytest

from tests.bridge._calls import (
    LEGACY,
    MODERN,
    assert_whole_session,
    call,
    call_error,
    every_tool,
    http_client,
)
from tests.bridge.conftest import RESET_TOKEN, Stack
from tests.support.processes import ServiceProcess
from tests.support.round_robin import RunningProxy, running_proxy

pytestmark = [pytest.mark.anyio, pytest.mark.postgres, pytest.mark.slow, pytest.mark.subprocess]


@pytest.fixture(scope="session")
def stack(full_stack: Stack) -> Stack:
    """Bridge processes reach mem0 over HTTP: these tests run on the full stack."""
    return full_stack


TOKEN = "bridge-replicas-test-token"  # noqa: S105 - a test fixture value
#: What the replicas of one deployment share, so that either opens what the other sealed.
STATE_KEY = "bridge-replicas-test-request-state-key"
MCP_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Authorization": f"Bearer {TOKEN}",
}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
#: The line a bridge logs for every tool call it serves.
CALL_LINE = " called by token "


def _bridge_env(stack: Stack, **extra: str) -> dict[str, str]:
    """Both replicas share one configuration, as a deployment's replicas do: same mem0 user,
    same helpers, no fixed project (as on a shared server)."""
    return {
        **stack.env(stack.settings(default_user_id="replicas")),
        "MEM0_TRANSPORT": "http",
        "MEM0_HTTP_PORT": "0",
        "MEM0_HTTP_BEARER_TOKEN": TOKEN,
        "MEM0_REQUEST_STATE_SECRET": STATE_KEY,
        "MEM0_LOG_LEVEL": "INFO",
        **extra,
    }


def _base(replica: ServiceProcess) -> str:
    return replica.url.removesuffix("/mcp")


@pytest.fixture(scope="module")
def replicas(stack: Stack) -> Iterator[tuple[ServiceProcess, ServiceProcess]]:
    env = _bridge_env(stack)
    with (
        ServiceProcess(["mem0-bridge"], env, ready_timeout=60) as one,
        ServiceProcess(["mem0-bridge"], env, ready_timeout=60) as two,
    ):
        yield one, two


@pytest.fixture(scope="module")
def balancer(replicas: tuple[ServiceProcess, ServiceProcess]) -> Iterator[RunningProxy]:
    with running_proxy([_base(replica) for replica in replicas]) as proxy:
        yield proxy


def _project() -> str:
    return f"proj-{uuid.uuid4().hex[:8]}"


def _calls_served(replica: ServiceProcess) -> int:
    return replica.log_text().count(CALL_LINE)


@pytest.mark.parametrize(
    ("mode", "version"), [(LEGACY, "2025-11-25"), (MODERN, "2026-07-28")], ids=["2025", "2026"]
)
async def test_a_whole_session_spans_both_replicas(
    replicas: tuple[ServiceProcess, ServiceProcess],
    balancer: RunningProxy,
    mode: str,
    version: str,
) -> None:
    before = [_calls_served(replica) for replica in replicas]
    async with http_client(f"{balancer.url}/mcp", token=TOKEN, mode=mode) as client:
        negotiated = client.protocol_version
        steps = await every_tool(client, _project(), RESET_TOKEN)
    served = [_calls_served(replica) - was for replica, was in zip(replicas, before, strict=True)]
    assert negotiated == version
    assert_whole_session(steps)
    # 12 tool calls alternate between the replicas (a 2025 client's handshake requests
    # interleave, so each side gets about half either way).
    assert sum(served) == 12
    assert min(served) >= 4, served


async def test_a_2026_client_still_names_its_project_by_its_roots(
    balancer: RunningProxy,
) -> None:
    """At 2026-07-28 the bridge asks for roots inside the answer (input required) and the
    client retries with them and the sealed state of the first round: the retry lands on the
    other replica, which opens that state with the key they share (MEM0_REQUEST_STATE_SECRET)."""
    project = _project()
    async with http_client(
        f"{balancer.url}/mcp", token=TOKEN, roots=[f"file:///work/{project}"], mode=MODERN
    ) as client:
        added = await call(client, "memory_add", text="Billing runs on Fridays.")
        pins = await call(client, "memory_pins")
    assert added["namespace"] == project
    assert pins["project"] == project


async def test_a_2025_client_is_not_asked_for_its_roots(balancer: RunningProxy) -> None:
    """Without a session the bridge has no channel to ask an older client anything: its roots
    go unread, and a call that needs a project says how to name one."""
    project = _project()
    async with http_client(
        f"{balancer.url}/mcp", token=TOKEN, roots=[f"file:///work/{project}"], mode=LEGACY
    ) as client:
        message = await call_error(client, "memory_add", text="Billing runs on Fridays.")
        named = await call(client, "memory_add", text="Billing runs on Fridays.", project=project)
    assert 'project="<repository name>"' in message
    assert named["namespace"] == project


async def test_restatements_racing_through_both_replicas_keep_one_memory(
    balancer: RunningProxy,
) -> None:
    """Clients adding one fact at once, their calls spread over both processes: each process
    orders its own adds of the project, and the ranker's scope lease orders the two processes'
    adds, so every restatement is judged against the first and none is stored beside it."""
    project = _project()
    wordings = [
        "The billing API listens on port 8443",
        "The billing API listens on port 8443.",
        "the billing API listens on port 8443!",
        "The billing API listens on port 8443 ",
        "The billing API listens on port 8443!!",
        "The billing API listens on  port 8443.",
    ]
    actions: list[str] = []

    async def add(text: str) -> None:
        async with http_client(f"{balancer.url}/mcp", token=TOKEN, mode=MODERN) as client:
            actions.append((await call(client, "memory_add", text=text, project=project))["action"])

    async with anyio.create_task_group() as tasks:
        for text in wordings:
            tasks.start_soon(add, text)
    async with http_client(f"{balancer.url}/mcp", token=TOKEN, mode=MODERN) as client:
        listed = (await call(client, "memory_list", project=project))["hits"]
    assert actions.count("added") == 1, actions
    assert len(listed) == 1, listed


def test_a_stateless_bridge_answers_a_session_it_never_saw(
    replicas: tuple[ServiceProcess, ServiceProcess],
) -> None:
    """The handshake on one replica, the next request on the other: no session id is handed
    out, so none can be unknown."""
    one, two = replicas
    opened = httpx.post(one.url, json=INITIALIZE, headers=MCP_HEADERS, timeout=30)
    assert opened.status_code == 200
    assert "mcp-session-id" not in opened.headers
    follow_up = httpx.post(
        two.url,
        json=INITIALIZED,
        headers={**MCP_HEADERS, "MCP-Protocol-Version": "2025-11-25"},
        timeout=30,
    )
    assert follow_up.status_code == 202


def test_a_bridge_that_keeps_sessions_refuses_the_other_replicas_session(stack: Stack) -> None:
    """MEM0_HTTP_STATELESS=0 (sessions, and so roots, for 2025 clients) needs a balancer with
    session affinity: the other replica does not know the session."""
    env = _bridge_env(stack, MEM0_HTTP_STATELESS="0")
    with (
        ServiceProcess(["mem0-bridge"], env, ready_timeout=60) as one,
        ServiceProcess(["mem0-bridge"], env, ready_timeout=60) as two,
    ):
        opened = httpx.post(one.url, json=INITIALIZE, headers=MCP_HEADERS, timeout=30)
        session = opened.headers.get("mcp-session-id")
        headers = {
            **MCP_HEADERS,
            "MCP-Protocol-Version": "2025-11-25",
            "Mcp-Session-Id": session or "",
        }
        elsewhere = httpx.post(two.url, json=INITIALIZED, headers=headers, timeout=30)
        at_home = httpx.post(one.url, json=INITIALIZED, headers=headers, timeout=30)
    assert opened.status_code == 200
    assert session
    assert elsewhere.status_code == 404
    assert "Session not found" in elsewhere.text
    assert at_home.status_code == 202

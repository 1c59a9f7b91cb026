"""`mem0-bridge` as a real process: stdio and streamable HTTP with the official MCP client.

The HTTP bridge here has no configured project (as on a shared server), a bearer token and an
extra allowed host; it serves the session's real stack.
"""

from __future__ import annotations

import hashlib
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters

from tests.bridge._calls import call, call_error, http_client
from tests.bridge.conftest import Stack
from tests.support.keepalive import PAST_PYTHON_CLIENTS_EXPIRY, answers_after_idling
from tests.support.processes import ServiceProcess
from tests.support.tools import TOOL_NAMES

pytestmark = [pytest.mark.anyio, pytest.mark.postgres, pytest.mark.slow]

TOKEN = "bridge-http-test-token"  # noqa: S105 - a test fixture value
BRIDGE = str(Path(sys.executable).parent / "mem0-bridge")
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "0"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


def start_http_bridge(env: dict[str, str], *args: str) -> ServiceProcess:
    return ServiceProcess(["mem0-bridge", *args], env, ready_timeout=60)


@pytest.fixture(scope="module")
def bridge(stack: Stack) -> Iterator[ServiceProcess]:
    env = {
        **stack.env(stack.settings()),
        "MEM0_TRANSPORT": "http",
        "MEM0_HTTP_PORT": "0",
        "MEM0_HTTP_BEARER_TOKEN": TOKEN,
        "MEM0_ALLOWED_HOSTS": "memory.example.test",
    }
    with start_http_bridge(env) as process:
        yield process


def _project() -> str:
    return f"proj-{uuid.uuid4().hex[:8]}"


def test_http_bridge_announces_its_mcp_url(bridge: ServiceProcess) -> None:
    assert bridge.url == f"http://127.0.0.1:{bridge.port}/mcp"


async def test_http_serves_the_tools_to_the_official_client(bridge: ServiceProcess) -> None:
    project = _project()
    async with http_client(bridge.url, token=TOKEN) as client:
        assert len((await client.list_tools()).tools) == len(TOOL_NAMES)
        added = await call(client, "memory_add", text="The API uses port 8080.", project=project)
        found = await call(client, "memory_search", query="API port", project=project)
    assert added["namespace"] == project
    assert [hit["id"] for hit in found["hits"]] == added["memory_ids"]


async def test_http_takes_the_project_from_the_client_roots(bridge: ServiceProcess) -> None:
    project = _project()
    async with http_client(bridge.url, token=TOKEN, roots=[f"file:///work/{project}"]) as client:
        added = await call(client, "memory_add", text="Billing runs on Fridays.")
        pins = await call(client, "memory_pins")
    assert added["namespace"] == project
    assert pins["project"] == project


async def test_http_refuses_a_project_call_without_roots_or_project(
    bridge: ServiceProcess,
) -> None:
    async with http_client(bridge.url, token=TOKEN) as client:
        message = await call_error(client, "memory_add", text="Billing runs on Fridays.")
    assert 'project="<repository name>"' in message


@pytest.mark.parametrize("token", [None, "wrong-token"], ids=["missing", "wrong"])
def test_http_without_the_bearer_token_is_unauthorized(
    bridge: ServiceProcess, token: str | None
) -> None:
    headers = {**MCP_HEADERS, **({"Authorization": f"Bearer {token}"} if token else {})}
    answer = httpx.post(bridge.url, json=INITIALIZE, headers=headers)
    assert answer.status_code == 401
    assert answer.headers["www-authenticate"].startswith("Bearer")


def test_http_rejects_a_foreign_host_header(bridge: ServiceProcess) -> None:
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {TOKEN}", "Host": "evil.example"}
    assert httpx.post(bridge.url, json=INITIALIZE, headers=headers).status_code == 421


def test_http_admits_a_configured_allowed_host(bridge: ServiceProcess) -> None:
    headers = {
        **MCP_HEADERS,
        "Authorization": f"Bearer {TOKEN}",
        "Host": f"memory.example.test:{bridge.port}",
    }
    assert httpx.post(bridge.url, json=INITIALIZE, headers=headers).status_code == 200


def test_healthz_answers_without_the_token(bridge: ServiceProcess) -> None:
    answer = httpx.get(f"http://127.0.0.1:{bridge.port}/healthz")
    assert (answer.status_code, answer.json()) == (200, {"status": "ok"})


@pytest.mark.slow
def test_an_idle_connection_outlives_a_python_clients_pool(bridge: ServiceProcess) -> None:
    # The official MCP Python client reuses a connection for 5 s; a server that dropped it at
    # 5 s too would make the client's next call fail with a ReadError.
    assert answers_after_idling(bridge.port, "/healthz", PAST_PYTHON_CLIENTS_EXPIRY)


def test_readyz_checks_mem0_the_ranker_and_the_judge(bridge: ServiceProcess) -> None:
    answer = httpx.get(
        f"http://127.0.0.1:{bridge.port}/readyz", headers={"Authorization": f"bearer {TOKEN}"}
    )
    assert answer.status_code == 200
    assert answer.json() == {
        "status": "ready",
        "checks": {"mem0": "ok", "ranker": "serving", "judge": "serving"},
    }


@pytest.mark.parametrize("token", [None, "wrong-token"], ids=["missing", "wrong"])
def test_readyz_tells_a_caller_without_the_token_its_status_only(
    bridge: ServiceProcess, token: str | None
) -> None:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    answer = httpx.get(f"http://127.0.0.1:{bridge.port}/readyz", headers=headers)
    assert (answer.status_code, answer.json()) == (200, {"status": "ready"})


def test_readyz_is_unavailable_while_mem0_is_unreachable(stack: Stack) -> None:
    settings = stack.settings(api_url="http://127.0.0.1:9")
    with start_http_bridge(stack.env(settings), "--transport", "http", "--port", "0") as bridge:
        answer = httpx.get(f"http://127.0.0.1:{bridge.port}/readyz")
    assert answer.status_code == 503
    assert "mem0 is unreachable" in answer.json()["checks"]["mem0"]


def test_readyz_stays_ready_with_a_judge_that_has_no_llm(stack: Stack) -> None:
    env = {"JUDGE_PORT": "0", "JUDGE_METRICS_PORT": "-1", "JUDGE_LLM_BASE_URL": ""}
    with ServiceProcess(["mem0-judge"], env, ready_timeout=60) as judge:
        settings = stack.settings(judge_address=f"127.0.0.1:{judge.port}")
        with start_http_bridge(stack.env(settings), "--transport", "http", "--port", "0") as bridge:
            answer = httpx.get(f"http://127.0.0.1:{bridge.port}/readyz")
    assert answer.status_code == 200
    assert answer.json()["status"] == "degraded"
    assert answer.json()["checks"]["judge"].startswith("no LLM configured")


def test_http_on_a_public_address_without_a_token_refuses_to_start() -> None:
    done = subprocess.run(
        [BRIDGE, "--transport", "http", "--host", "0.0.0.0", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"PATH": "/usr/bin:/bin", "MEM0_HTTP_BEARER_TOKEN": ""},
    )
    assert done.returncode == 2
    assert "MEM0_HTTP_BEARER_TOKEN" in done.stderr


async def test_http_on_a_public_address_serves_with_the_token(stack: Stack) -> None:
    env = {**stack.env(stack.settings()), "MEM0_HTTP_BEARER_TOKEN": TOKEN}
    args = ("--transport", "http", "--host", "0.0.0.0", "--port", "0")
    with start_http_bridge(env, *args) as bridge:
        url = f"http://127.0.0.1:{bridge.port}/mcp"
        async with httpx.AsyncClient() as plain:
            refused = await plain.post(url, json=INITIALIZE, headers=MCP_HEADERS)
        assert refused.status_code == 401
        async with http_client(url, token=TOKEN) as client:
            assert len((await client.list_tools()).tools) == len(TOOL_NAMES)


def test_http_bridge_stops_cleanly_on_sigterm(stack: Stack) -> None:
    env = stack.env(stack.settings())
    bridge = start_http_bridge(env, "--transport", "http", "--port", "0")
    assert bridge.stop() == 0


def _git_clone(path: Path, remote: str) -> Path:
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "remote", "add", "origin", remote], check=True)
    return path


def _stdio(stack: Stack, cwd: Path, **overrides: object) -> Client:
    env = stack.env(stack.settings(**overrides))
    return Client(StdioServerParameters(command=BRIDGE, env=env, cwd=cwd))


async def test_stdio_derives_the_project_from_the_git_remote(stack: Stack, tmp_path: Path) -> None:
    clone = _git_clone(tmp_path / "my-checkout", "git@example.test:org/widget-service.git")
    async with _stdio(stack, clone) as client:
        added = await call(client, "memory_add", text="Widgets are blue.")
        found = await call(client, "memory_search", query="widget colour")
    assert added["namespace"] == "widget-service"
    assert [hit["id"] for hit in found["hits"]] == added["memory_ids"]


async def test_stdio_project_argument_overrides_the_derived_one(
    stack: Stack, tmp_path: Path
) -> None:
    clone = _git_clone(tmp_path / "checkout", "https://example.test/org/widget-service.git")
    async with _stdio(stack, clone) as client:
        added = await call(client, "memory_add", text="Widgets are blue.", project="other")
    assert added["namespace"] == "other"


TOKEN_A = "team-a-token"  # noqa: S105 - a test fixture value
TOKEN_B = "team-b-token"  # noqa: S105 - a test fixture value


def _tokens_entry(name: str, token: str, projects: list[str], *, global_: str = "none") -> str:
    digest = hashlib.sha256(token.encode()).hexdigest()
    return (
        f'[[tokens]]\nname = "{name}"\nsha256 = "{digest}"\nprojects = {projects!r}\n'
        f'global = "{global_}"\nreset = false\n'
    ).replace("'", '"')


async def test_http_tokens_grant_their_projects_and_reload_on_sighup_without_dropping_sessions(
    stack: Stack, tmp_path: Path
) -> None:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(_tokens_entry("team-a", TOKEN_A, ["alpha-*"], global_="read"))
    env = {**stack.env(stack.settings()), "MEM0_HTTP_TOKENS_FILE": str(tokens)}
    project = f"alpha-{uuid.uuid4().hex[:6]}"
    with start_http_bridge(env, "--transport", "http", "--port", "0") as bridge:
        async with http_client(bridge.url, token=TOKEN_A) as team_a:
            added = await call(team_a, "memory_add", text="Alpha ships daily.", project=project)
            refused = await call_error(team_a, "memory_add", text="x", project="beta")
            reset = await call_error(team_a, "memory_reset", reset_token="whatever")  # noqa: S106
            tokens.write_text(
                _tokens_entry("team-a", TOKEN_A, ["alpha-*"], global_="read")
                + _tokens_entry("team-b", TOKEN_B, ["beta"])
            )
            bridge.proc.send_signal(signal.SIGHUP)
            async with httpx.AsyncClient() as plain:
                for _ in range(100):  # the reload lands a moment after the signal
                    probe = await plain.post(
                        bridge.url,
                        json=INITIALIZE,
                        headers={**MCP_HEADERS, "Authorization": f"Bearer {TOKEN_B}"},
                    )
                    if probe.status_code != 401:
                        break
                    await anyio.sleep(0.1)
            async with http_client(bridge.url, token=TOKEN_B) as team_b:
                listed = await call(team_b, "memory_list", project="beta")
            # The first session lives on across the reload.
            found = await call(team_a, "memory_search", query="Alpha ships", project=project)
    assert added["namespace"] == project
    assert "token 'team-a' has no grant for project 'beta'" in refused
    assert "memory_reset" in reset
    assert [hit["id"] for hit in found["hits"]] == added["memory_ids"]
    assert listed["namespaces"] == ["beta"]

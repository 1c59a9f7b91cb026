"""Helpers for calling the bridge's tools the way an MCP client does."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp import Client
from mcp.client.client import ConnectMode
from mcp.client.session import ClientRequestContext, ListRootsFnT
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types import CallToolResult, ListRootsResult, Root, TextContent
from pydantic import FileUrl


def text_of(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """Call `tool`; fail the test on a tool error; return its structured content."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text_of(result)
    content = result.structured_content
    assert isinstance(content, dict)
    return content


async def call_error(client: Client, tool: str, **arguments: Any) -> str:
    """Call `tool`, expecting a tool error; return the message the agent reads."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, f"{tool} unexpectedly succeeded: {text_of(result)}"
    return text_of(result)


#: The official client's protocol modes: `auto` negotiates the newest revision both sides speak
#: (2026-07-28 with this bridge: one self-contained request per call), `legacy` the initialize
#: handshake of 2025-11-25 (what clients older than 2026-07-28 speak).
LEGACY = "legacy"
MODERN = "2026-07-28"


@asynccontextmanager
async def http_client(
    url: str,
    *,
    token: str | None = None,
    roots: list[str] | None = None,
    mode: ConnectMode = "auto",
) -> AsyncIterator[Client]:
    """The official client over streamable HTTP; `roots` (file URIs) are shared if given;
    `mode` pins the protocol revision (`LEGACY` or `MODERN`) instead of negotiating it."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    callback: ListRootsFnT | None = None
    if roots is not None:
        listed = ListRootsResult(roots=[Root(uri=FileUrl(uri)) for uri in roots])

        async def share_roots(context: ClientRequestContext) -> ListRootsResult:
            return listed

        callback = share_roots

    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(
            streamable_http_client(url, http_client=http),
            list_roots_callback=callback,
            mode=mode,
        ) as client,
    ):
        yield client


async def every_tool(client: Client, project: str, reset_token: str) -> dict[str, dict[str, Any]]:
    """One whole agent session: every tool once (reset last), each naming `project`; the
    structured answers by step."""
    steps: dict[str, dict[str, Any]] = {}
    steps["add"] = await call(
        client, "memory_add", text="The billing API listens on port 7070.", project=project
    )
    memory_id = steps["add"]["memory_ids"][0]
    steps["search"] = await call(
        client, "memory_search", query="which port does billing use?", project=project
    )
    steps["list"] = await call(client, "memory_list", project=project)
    steps["recent"] = await call(client, "memory_recent", project=project)
    steps["pin"] = await call(
        client, "memory_pin", text="Never deploy on Fridays.", project=project
    )
    steps["pins"] = await call(client, "memory_pins", project=project)
    steps["unpin"] = await call(
        client, "memory_unpin", memory_id=steps["pin"]["pin"]["id"], project=project
    )
    steps["update"] = await call(
        client,
        "memory_update",
        memory_id=memory_id,
        text="The billing API listens on 7071.",
        project=project,
    )
    steps["history"] = await call(client, "memory_history", memory_id=memory_id, project=project)
    steps["delete"] = await call(client, "memory_delete", memory_id=memory_id, project=project)
    steps["after_delete"] = await call(client, "memory_list", project=project)
    steps["reset"] = await call(client, "memory_reset", reset_token=reset_token)
    return steps


def assert_whole_session(steps: dict[str, dict[str, Any]]) -> None:
    """What `every_tool` must have seen for the session to have worked end to end."""
    memory_id = steps["add"]["memory_ids"][0]
    assert steps["add"]["action"] == "added"
    assert [hit["id"] for hit in steps["search"]["hits"]] == [memory_id]
    assert [hit["id"] for hit in steps["list"]["hits"]] == [memory_id]
    assert [hit["id"] for hit in steps["recent"]["hits"]] == [memory_id]
    assert [pin["text"] for pin in steps["pins"]["local_pins"]] == ["Never deploy on Fridays."]
    assert steps["unpin"]["action"] == "unpinned"
    assert steps["update"]["action"] == "updated"
    assert [event["event"] for event in steps["history"]["events"]] == ["ADD", "UPDATE"]
    assert steps["delete"]["action"] == "deleted"
    assert steps["after_delete"]["hits"] == []
    assert steps["reset"]["reset"] is True

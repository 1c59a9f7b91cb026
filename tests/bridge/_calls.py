"""Helpers for calling the bridge's tools the way an MCP client does."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp import Client
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


@asynccontextmanager
async def http_client(
    url: str, *, token: str | None = None, roots: list[str] | None = None
) -> AsyncIterator[Client]:
    """The official client over streamable HTTP; `roots` (file URIs) are shared if given."""
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
            streamable_http_client(url, http_client=http), list_roots_callback=callback
        ) as client,
    ):
        yield client

"""Calling the bridge's tools from a benchmark: in process, or a live bridge over HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp import Client
from mcp.client.client import ConnectMode
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types import TextContent


async def call_tool(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """Call `tool` and return its structured content; a tool error stops the benchmark."""
    result = await client.call_tool(tool, arguments)
    if result.is_error or not isinstance(result.structured_content, dict):
        text = "\n".join(b.text for b in result.content if isinstance(b, TextContent))
        raise RuntimeError(f"{tool} failed: {text}")
    return result.structured_content


@asynccontextmanager
async def http_bridge(
    url: str, token: str | None = None, *, mode: ConnectMode = "auto"
) -> AsyncIterator[Client]:
    """The official MCP client connected to a running bridge's streamable-HTTP endpoint;
    `mode` "legacy" pins the 2025-11-25 handshake instead of negotiating 2026-07-28."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        yield client

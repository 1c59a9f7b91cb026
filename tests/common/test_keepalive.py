"""Keep-alive timeouts that cannot race (see `mem0_common._keepalive`)."""

from __future__ import annotations

import httpx
import uvicorn

from mem0_common import CLIENT_KEEPALIVE_EXPIRY_SECONDS, SERVER_KEEP_ALIVE_SECONDS


def test_our_clients_drop_an_idle_connection_before_a_default_uvicorn_server_does() -> None:
    # mem0's official server runs uvicorn with its default keep-alive.
    assert uvicorn.Config(app="unused:app").timeout_keep_alive > CLIENT_KEEPALIVE_EXPIRY_SECONDS


def test_our_servers_keep_an_idle_connection_past_a_default_httpx_pool() -> None:
    # The official MCP Python client pools with httpx's default expiry.
    default_expiry = httpx.Limits().keepalive_expiry
    assert default_expiry is not None
    assert default_expiry < SERVER_KEEP_ALIVE_SECONDS

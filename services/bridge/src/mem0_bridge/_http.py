"""The streamable-HTTP app: bearer authentication and DNS-rebinding protection around /mcp.

Every request but the probes needs a known bearer token; the caller's grant (`_access`) is
left in the request's state for the tools to check. /healthz and /readyz stay open so an
orchestrator can probe without a token, but then answer with their status only: addresses and
errors are shown to callers with a valid token.
"""

from __future__ import annotations

import json
import logging

from mcp.server import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from mem0_bridge._access import GRANT_STATE_KEY, Tokens, bearer_token
from mem0_bridge._settings import LOOPBACK_HOSTS, BridgeSettings

logger = logging.getLogger(__name__)

OPEN_PATHS = frozenset({"/healthz", "/readyz"})
_WILDCARD_BINDS = frozenset({"0.0.0.0", "::", ""})


def _host_patterns(host: str) -> list[str]:
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"  # a bare IPv6 address
    return [host] if host.endswith(":*") else [host, f"{host}:*"]


def transport_security(settings: BridgeSettings) -> TransportSecuritySettings:
    """Accept loopback names, the bound host and MEM0_ALLOWED_HOSTS; reject other Hosts (421)."""
    hosts: list[str] = []
    for name in ["127.0.0.1", "localhost", "::1", *settings.allowed_host_list]:
        hosts.extend(_host_patterns(name))
    if settings.http_host not in _WILDCARD_BINDS and settings.http_host not in LOOPBACK_HOSTS:
        hosts.extend(_host_patterns(settings.http_host))
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


class BearerAuth:
    """Pure ASGI guard: every HTTP request but the probes needs `Authorization: Bearer <token>`
    with a token the bridge knows; its grant goes into the request's state."""

    def __init__(self, app: ASGIApp, tokens: Tokens) -> None:
        self.app = app
        self._tokens = tokens

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        token = bearer_token(dict(scope["headers"]).get(b"authorization", b""))
        grant = self._tokens.grant_for(token) if token is not None else None
        if grant is not None:
            scope.setdefault("state", {})[GRANT_STATE_KEY] = grant
        if grant is not None or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        body = json.dumps(
            {
                "error": "unauthorized",
                "detail": "send Authorization: Bearer <token> with a token this bridge knows "
                "(MEM0_HTTP_BEARER_TOKEN or one listed in MEM0_HTTP_TOKENS_FILE)",
            }
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"www-authenticate", b'Bearer realm="mem0-bridge"'),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def build_http_app(
    server: MCPServer[object], settings: BridgeSettings, tokens: Tokens | None = None
) -> ASGIApp:
    """The ASGI app serving MCP at /mcp plus the probes, guarded as the settings say."""
    app: ASGIApp = server.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=settings.http_stateless,
        transport_security=transport_security(settings),
        host=settings.http_host,
    )
    tokens = tokens or Tokens(settings.http_bearer_token, settings.http_tokens_file)
    if tokens.required:
        app = BearerAuth(app, tokens)
    return app

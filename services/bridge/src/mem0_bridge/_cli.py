"""`mem0-bridge`: stdio by default, streamable HTTP with `--transport http` (or MEM0_TRANSPORT)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

import uvicorn
from pydantic import ValidationError

from mem0_bridge import _selftest as selftest
from mem0_bridge._access import Tokens
from mem0_bridge._http import build_http_app
from mem0_bridge._server import create_server
from mem0_bridge._settings import BridgeSettings
from mem0_common import SERVER_KEEP_ALIVE_SECONDS, announce_listening, configure_logging

# HTTP is served on uvloop where it runs (not on Windows): many concurrent sessions cost less
# CPU per call on it than on asyncio's own loop.
if sys.platform == "win32":
    _serve_loop = asyncio.run
else:
    import uvloop

    _serve_loop = uvloop.run

logger = logging.getLogger(__name__)


class _AnnouncingServer(uvicorn.Server):
    """Says where it listens once it accepts connections (port 0 resolved to the real one)."""

    def __init__(self, config: uvicorn.Config, sock: socket.socket, path: str) -> None:
        super().__init__(config)
        self._sock = sock
        self._path = path

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        # uvicorn re-raises a captured SIGTERM after draining, so the process would die by the
        # signal; a graceful stop is a normal exit (status 0), as with the gRPC services.
        if self.should_exit and sig == signal.SIGINT:
            self.force_exit = True
        else:
            self.should_exit = True

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if not self.should_exit:
            host, port = self._sock.getsockname()[:2]
            shown = f"[{host}]" if ":" in host else host
            announce_listening("bridge", f"http://{shown}:{port}{self._path}")


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="mem0-bridge",
        description="MCP memory server over mem0 (stdio by default; HTTP on request).",
    )
    parser.add_argument("--transport", choices=["stdio", "http"], help="overrides MEM0_TRANSPORT")
    parser.add_argument("--host", help="HTTP bind address; overrides MEM0_HTTP_HOST")
    parser.add_argument("--port", type=int, help="HTTP port (0 = free); overrides MEM0_HTTP_PORT")
    commands = parser.add_subparsers(dest="command", metavar="{selftest}")
    commands.add_parser(
        "selftest",
        help="smoke-test the configured mem0 server, ranker and judge, then exit",
        description="Add, re-add, search, list, update, read the history of and delete a fact "
        "in a throwaway namespace through the configured servers; report each step and clean "
        "up. Exit status 0 only when every required step passed.",
    )
    return parser.parse_args(argv)


def _settings(args: argparse.Namespace) -> BridgeSettings:
    settings = BridgeSettings()
    update: dict[str, object] = {}
    if args.transport:
        update["transport"] = args.transport
    if args.host:
        update["http_host"] = args.host
    if args.port is not None:
        update["http_port"] = args.port
    return BridgeSettings.model_validate({**settings.model_dump(), **update})


async def _serve_http(settings: BridgeSettings, tokens: Tokens) -> None:
    server = create_server(settings)
    # Re-read the tokens file on SIGHUP: grants change without dropping sessions.
    asyncio.get_running_loop().add_signal_handler(signal.SIGHUP, tokens.reload)
    configure_logging(settings.log_level)
    family = socket.AF_INET6 if ":" in settings.http_host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((settings.http_host, settings.http_port))
    config = uvicorn.Config(
        build_http_app(server, settings, tokens),  # type: ignore[arg-type]
        log_level=settings.log_level.lower(),
        lifespan="on",
        timeout_keep_alive=SERVER_KEEP_ALIVE_SECONDS,
    )
    await _AnnouncingServer(config, sock, "/mcp").serve(sockets=[sock])


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    try:
        settings = _settings(args)
    except ValidationError as exc:
        print(f"mem0-bridge: invalid settings:\n{exc}", file=sys.stderr)  # noqa: T201
        return 2
    if args.command == "selftest":
        configure_logging(settings.log_level)
        return selftest.main(settings)
    if settings.transport == "http":
        try:
            tokens = Tokens(settings.http_bearer_token, settings.http_tokens_file)
        except ValueError as exc:
            print(f"mem0-bridge: MEM0_HTTP_TOKENS_FILE: {exc}", file=sys.stderr)  # noqa: T201
            return 2
        if not settings.http_on_loopback and not tokens.required:
            print(  # noqa: T201
                f"mem0-bridge: refusing to serve HTTP on {settings.http_host} without "
                "authentication; set MEM0_HTTP_BEARER_TOKEN or MEM0_HTTP_TOKENS_FILE (or bind "
                "127.0.0.1).",
                file=sys.stderr,
            )
            return 2
        _serve_loop(_serve_http(settings, tokens))
        return 0
    server = create_server(settings, working_directory=Path.cwd())
    configure_logging(settings.log_level)
    server.run("stdio")
    return 0


if __name__ == "__main__":
    sys.exit(main())

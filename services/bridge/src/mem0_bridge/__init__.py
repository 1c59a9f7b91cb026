"""mem0-bridge: the MCP server agents use for long-term memory over mem0.

Every memory tool over stdio or streamable HTTP, with project and global scopes, pins,
reconcile-on-add (ranker + judge) and reranked search, degrading when a helper is down.
"""

from mem0_bridge._errors import BridgeError
from mem0_bridge._http import build_http_app
from mem0_bridge._mem0 import Mem0Client, Mem0Error
from mem0_bridge._scopes import derive_project
from mem0_bridge._server import create_server
from mem0_bridge._settings import BridgeSettings

__all__ = [
    "BridgeError",
    "BridgeSettings",
    "Mem0Client",
    "Mem0Error",
    "build_http_app",
    "create_server",
    "derive_project",
]

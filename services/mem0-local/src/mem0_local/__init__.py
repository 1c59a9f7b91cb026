"""mem0-local: mem0's REST API over the real mem0ai library, with no Docker and no network.

pgvector when a PostgreSQL URL is configured, else an embedded on-disk store; the MiniLM embedder
offline; an OpenAI-compatible LLM when configured, else adds are stored verbatim.
"""

from mem0_local._app import create_app, public_config
from mem0_local._errors import FailureCode
from mem0_local._settings import DEFAULT_CUSTOM_INSTRUCTIONS, Mem0LocalSettings
from mem0_local._store import MemoryStore, build_mem0_config, open_async_memory

__all__ = [
    "DEFAULT_CUSTOM_INSTRUCTIONS",
    "FailureCode",
    "Mem0LocalSettings",
    "MemoryStore",
    "build_mem0_config",
    "create_app",
    "open_async_memory",
    "public_config",
]

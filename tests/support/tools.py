"""The bridge's tool names as the design fixes them, plus memory_history and memory_reinstate.

Agents and the shared-memory skill call them verbatim, so the tests compare the bridge and the
skill against this one list rather than against each other.
"""

TOOL_NAMES = (
    "memory_add",
    "memory_search",
    "memory_list",
    "memory_recent",
    "memory_pin",
    "memory_pins",
    "memory_unpin",
    "memory_update",
    "memory_delete",
    "memory_reset",
    "memory_history",
    "memory_reinstate",
)

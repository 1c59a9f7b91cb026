"""The one exception tools raise on purpose: its message is meant for the agent to act on."""

from __future__ import annotations


class BridgeError(Exception):
    """A refused or failed tool call; `str()` says what to do instead. Nothing was changed."""

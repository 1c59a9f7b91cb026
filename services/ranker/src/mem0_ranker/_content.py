"""The key stored for a text instead of the text: exact-content dedupe keeps no memory content.

What counts as "the same text" is `mem0mcp.contract.normalise_text`, shared with the bridge, so
both sides agree on which texts are duplicates; only a SHA-256 of that form is stored.
"""

from __future__ import annotations

import hashlib

from mem0mcp.contract import normalise_text


def content_key(text: str) -> str:
    return hashlib.sha256(normalise_text(text).encode("utf-8")).hexdigest()

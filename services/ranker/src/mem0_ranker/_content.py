"""What makes two texts "the same" for exact-content dedupe, and the key stored instead of the text.

Normalisation is deliberately shallow (NFKC, casefold, collapsed whitespace): it catches the
same sentence sent twice with cosmetic differences, never a paraphrase; paraphrases are the
judge's business. Only a SHA-256 of the normalised text is stored, so the ranker keeps no
memory content.
"""

from __future__ import annotations

import hashlib
import unicodedata


def normalise(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def content_key(text: str) -> str:
    return hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()

"""Is a search query a question? Only questions are worth an LLM rewrite (the judge rewrites
them; the bridge asks it only for them).

A statement already reads like the memories it should match, so it passes through unchanged at no
cost. English only: a query ending in `?`, or starting with an interrogative or an auxiliary verb
("what", "how", "does", "can", ...), is a question.
"""

from __future__ import annotations

import re

# fmt: off
_QUESTION_STARTS = frozenset((
    "what", "which", "who", "whom", "whose", "where", "when", "why", "how", "is", "are", "was",
    "were", "am", "do", "does", "did", "can", "could", "should", "would", "will", "shall", "may",
    "might", "must", "have", "has", "had", "isn't", "aren't", "wasn't", "weren't", "don't",
    "doesn't", "didn't", "can't", "couldn't", "shouldn't", "wouldn't", "won't", "haven't",
    "hasn't",
))
# fmt: on
_FIRST_WORD = re.compile(r"[a-z']+")


def is_question(query: str) -> bool:
    text = query.strip()
    if text.endswith("?"):
        return True
    first = _FIRST_WORD.match(text.lower().replace("\u2019", "'"))
    return first is not None and first.group(0) in _QUESTION_STARTS

"""The judge's prompts: versioned files shipped as package data, filled with delimited data.

The instructions are the system message; everything that came from users (the new fact, memory
texts, the query) goes into the user message inside tags, with `<`, `>` and `&` escaped so no
text can close its tag early and pose as instructions. The first line of each prompt names it and
its version (`mem0-judge compare v1`), so a prompt change is visible in logs and to test fakes.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from functools import cache
from importlib import resources

from mem0_judge._llm import ChatMessage

COMPARE_PROMPT = "compare.v1.md"
REWRITE_PROMPT = "rewrite.v1.md"


@cache
def load_prompt(name: str) -> str:
    return resources.files("mem0_judge").joinpath("prompts", name).read_text("utf-8").strip()


def _data(text: str) -> str:
    return html.escape(text, quote=False)


def compare_messages(fact: str, candidate_texts: Sequence[str]) -> list[ChatMessage]:
    """Candidates are numbered 1..n in request order; the answer refers to them by that id."""
    memories = "\n".join(
        f'<memory id="{i}">{_data(text)}</memory>' for i, text in enumerate(candidate_texts, 1)
    )
    user = f"<new_fact>{_data(fact)}</new_fact>\n<memories>\n{memories}\n</memories>"
    return [ChatMessage("system", load_prompt(COMPARE_PROMPT)), ChatMessage("user", user)]


def rewrite_messages(query: str) -> list[ChatMessage]:
    return [
        ChatMessage("system", load_prompt(REWRITE_PROMPT)),
        ChatMessage("user", f"<query>{_data(query)}</query>"),
    ]

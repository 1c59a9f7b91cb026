"""A deterministic stand-in for the judge's LLM: answers mem0-judge's Compare and Rewrite prompts.

It recognises the judge's prompts by their first line (`mem0-judge compare v1`, `mem0-judge
rewrite v1`) and returns None for anything else (mem0's extraction prompt, say), so it composes
with other responders: `FakeLLM(responders=[judge_responder, extraction_responder])`.

It never reads instructions from the data: whatever a memory text says, the verdict comes from
this rule, which tests (here and in the bridge) rely on:

* words are lower-cased `\\w+` tokens (joined across `.`/`:` so `1.2.3` and `host:9000` stay
  whole); a token with a digit is a *value*, other tokens minus stop words are *content words*,
  with a plural/3rd-person `s` dropped (`uses` -> `use`);
* related = content-word overlap coefficient |A & B| / min(|A|, |B|) >= 0.5;
* related and the same set of values -> SAME ("The API listens on port 8080" / "Our API
  service uses port 8080");
* related but different values -> SUPERSEDES ("We moved the API to port 9000" / "The API
  listens on port 8080");
* otherwise UNRELATED ("I prefer tea" / anything about the API).
  Known limit: value changes without digits ("tea" -> "coffee") count as SAME.

Rewrite turns a question into a statement by template: "what port does the API use?" ->
"The API uses port"; "what is the database URL?" -> "The database URL is"; otherwise the
question words are dropped ("how does the cache work?" -> "The cache works").
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from typing import Any

from tests.fakes.llm import ChatResponder

COMPARE_MARKER = "mem0-judge compare v"
REWRITE_MARKER = "mem0-judge rewrite v"

RELATED_OVERLAP = 0.5

#: A Compare rule: (new fact, stored memory) -> (verdict, reason).
Rule = Callable[[str, str], tuple[str, str]]

# fmt: off
_STOP_WORDS = frozenset((
    "a", "an", "the", "our", "we", "i", "you", "my", "your", "their", "its", "it", "is", "are",
    "was", "were", "be", "been", "to", "of", "on", "in", "at", "for", "from", "by", "with", "and",
    "or", "now", "as", "this", "that", "these", "those", "there", "here", "has", "have", "had",
    "will", "shall", "do", "does", "did", "not", "no", "all", "any", "every", "some",
))
# fmt: on
_TOKEN = re.compile(r"\w+(?:[.:]\w+)*")
_FACT = re.compile(r"<new_fact>(.*?)</new_fact>", re.DOTALL)
_MEMORY = re.compile(r'<memory id="(\d+)">(.*?)</memory>', re.DOTALL)
_QUERY = re.compile(r"<query>(.*?)</query>", re.DOTALL)

# fmt: off
_WH = frozenset((
    "what", "which", "who", "whom", "whose", "where", "when", "why", "how",
))
_AUX = frozenset((
    "is", "are", "was", "were", "am", "do", "does", "did", "can", "could", "should", "would",
    "will", "shall", "may", "might", "must", "have", "has", "had",
))
# fmt: on


def _text(message: dict[str, Any]) -> str:
    content = message.get("content", "")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


def _role_text(body: dict[str, Any], role: str) -> str:
    return "\n".join(_text(m) for m in body.get("messages", []) if m.get("role") == role)


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def split_words(text: str) -> tuple[set[str], set[str]]:
    """(content words, values) of `text` as the rule above defines them."""
    content: set[str] = set()
    values: set[str] = set()
    for token in _TOKEN.findall(text.lower()):
        if any(ch.isdigit() for ch in token):
            values.add(token)
        elif token not in _STOP_WORDS:
            content.add(_stem(token))
    return content, values


def verdict(fact: str, memory: str) -> tuple[str, str]:
    """The rule's verdict for one pair, with a reason."""
    fact_words, fact_values = split_words(fact)
    memory_words, memory_values = split_words(memory)
    smaller = min(len(fact_words), len(memory_words))
    overlap = len(fact_words & memory_words) / smaller if smaller else 0.0
    if overlap < RELATED_OVERLAP:
        return "UNRELATED", f"content overlap {overlap:.2f}"
    if fact_values == memory_values:
        return "SAME", f"content overlap {overlap:.2f}, same values"
    return "SUPERSEDES", f"content overlap {overlap:.2f}, values changed"


def _compare(user: str, rule: Rule) -> str:
    fact_match = _FACT.search(user)
    fact = html.unescape(fact_match.group(1)) if fact_match else ""
    judgements = []
    for memory_id, text in _MEMORY.findall(user):
        name, reason = rule(fact, html.unescape(text))
        judgements.append({"id": int(memory_id), "verdict": name, "reason": reason})
    return json.dumps({"judgements": judgements})


def _third_person(verb: str) -> str:
    if verb.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if verb.endswith("y") and len(verb) > 1 and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def rewrite_statement(query: str) -> str:
    """The template statement for a question (see the module docstring)."""
    words = query.strip().rstrip("?").split()
    lowered = [w.lower() for w in words]
    if len(words) >= 4 and lowered[0] in {"what", "which"} and lowered[2] in {"does", "do", "did"}:
        subject, verb = words[3:-1], words[-1]
        verb = _third_person(verb) if lowered[2] == "does" else verb
        statement = " ".join([*subject, verb, words[1]])
    elif len(words) >= 4 and lowered[0] in _WH and lowered[1] in {"does", "do", "did"}:
        verb = _third_person(words[-1]) if lowered[1] == "does" else words[-1]
        statement = " ".join([*words[2:-1], verb])
    elif len(words) >= 3 and lowered[0] in _WH and lowered[1] in {"is", "are", "was", "were"}:
        statement = " ".join([*words[2:], words[1]])
    else:
        start = 0
        while start < len(words) - 1 and lowered[start] in _WH | _AUX:
            start += 1
        statement = " ".join(words[start:])
    return statement[:1].upper() + statement[1:]


def judge_responder_with(rule: Rule) -> ChatResponder:
    """A responder that answers the judge's prompts, its Compare verdicts from `rule` (another
    fake's, such as the eval's oracle) and its Rewrite by the template above."""

    def respond(body: dict[str, Any]) -> str | None:
        system = _role_text(body, "system")
        user = _role_text(body, "user")
        if system.startswith(COMPARE_MARKER):
            return _compare(user, rule)
        if system.startswith(REWRITE_MARKER):
            match = _QUERY.search(user)
            query = html.unescape(match.group(1)) if match else ""
            return json.dumps({"statement": rewrite_statement(query)})
        return None

    return respond


#: The assistant content for a judge prompt by the word-overlap rule, or None when a request
#: is not a judge prompt.
judge_responder: ChatResponder = judge_responder_with(verdict)

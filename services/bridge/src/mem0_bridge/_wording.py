"""How two statements of one fact compare in words: the same words apart from their values, and
whether the newer one names a detail the older lacks.

The verdict guard's second test (see `_folding`): embeddings rate "The API listens on port
8080." and "9000 is the port the API listens on." as less alike than two different facts about
one service, so a change restated in the same words would fall under any similarity floor that
keeps look-alike facts apart. Two statements whose words agree once every value is set aside
are one fact by construction, however an embedder scores them.

Words are lower-cased `\\w` tokens (joined across `.`, `:`, `/` and `-` so `1.4.2`,
`host:9000` and `eu-west-1` stay whole, and keeping a leading `#`, `/` or `@`). A token holding
a digit, or written like code or a path (`/healthz`, `#ops-alerts`, `dev/<name>`, `snake_case`),
is a value; the rest, minus English function words and with a plural or third-person `s`
folded, is the wording. Negations are wording, not function words: "is not replicated" and "is
replicated" differ.

The details a restatement must not lose are its values and its names: values as above, and
words capitalised anywhere but at the start of the statement (`Linear`, `WARNING`, `Kotlin`).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence

_TOKEN = re.compile(r"[#/@]?\w+(?:[.:/-]\w+)*")
_CODE_MARKS = frozenset("#/@_.:")

# fmt: off
_FUNCTION_WORDS = frozenset((
    "a", "an", "the", "this", "that", "these", "those", "our", "we", "us", "i", "me", "my",
    "you", "your", "their", "they", "them", "its", "it", "he", "she", "his", "her",
    "is", "are", "was", "were", "be", "been", "being", "am", "has", "have", "had",
    "do", "does", "did", "will", "shall", "would", "should", "can", "could", "may", "might",
    "to", "of", "on", "in", "at", "for", "from", "by", "with", "as", "into", "onto", "about",
    "and", "or", "so", "then", "than", "there", "here", "now", "currently", "also",
))
# fmt: on

#: Fewer words than this say too little to tell one fact from another ("set to 5").
MIN_WORDS = 2


def _fold(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _is_value(token: str) -> bool:
    return any(ch.isdigit() or ch in _CODE_MARKS for ch in token)


#: Texts whose words and details are kept: a search compares each of its hits with the hits
#: stored as related to it, so the same few dozen texts come up again and again.
_CACHED_TEXTS = 4096


@functools.lru_cache(maxsize=_CACHED_TEXTS)
def wording(text: str) -> frozenset[str]:
    """The words of `text` that are neither values nor function words (see the module doc)."""
    return frozenset(
        _fold(token)
        for token in _TOKEN.findall(text.lower())
        if not _is_value(token) and token not in _FUNCTION_WORDS
    )


@functools.lru_cache(maxsize=_CACHED_TEXTS)
def details(text: str) -> frozenset[str]:
    """The values and names of `text`, case-folded (see the module doc)."""
    found = set()
    for index, token in enumerate(_TOKEN.findall(text)):
        if _is_value(token) or any(ch.isupper() for ch in token[index == 0 :]):
            found.add(token.casefold())
    return frozenset(found)


def adds_details(newer: str, older: str) -> bool:
    """Does `newer` name a value or name that `older` does not? Then a memory that keeps the
    older words would drop it: "Bugs are tracked in Linear." after "...in Jira."."""
    return not details(newer) <= details(older)


def differs_only_in_values(first: str, second: str) -> bool:
    """True when both statements use the same words (at least `MIN_WORDS` of them) once values
    and function words are set aside: "The API port is 8080." / "Our API port is now 9000."."""
    words = wording(first)
    return len(words) >= MIN_WORDS and words == wording(second)


def shares_most_words(first: str, second: str) -> bool:
    """Do the two statements share more than half of the shorter one's words (values and
    function words aside)? "The nazano rugaro moved to 7." and "The replicas of our nazano
    rugaro is 5." do (a fact's names); two facts that share only the sentence's shape ("For
    the lelibu natefu, the timeout is 45s." / "For the dekimi garepi, ...") do not."""
    words, others = wording(first), wording(second)
    return 2 * len(words & others) > min(len(words), len(others))


def same_values(first: str, second: str) -> bool:
    """Do both statements name the same values and names, at least one of them a value?

    Between two memories stored as related (close in meaning), that is one fact said again in
    other words: "The image proxy has a CPU limit of 1 cores." / "The container of the image
    proxy is capped at 1 CPU cores.". A value is required because without one a change said in
    other words ("owned by the growth team" / "the platform team owns") would pass for it.
    """
    found = details(first)
    return found == details(second) and any(_is_value(token) for token in found)


def name_overlap(
    text: str, others: Sequence[str], groups: Sequence[str] | None = None
) -> list[float]:
    """Per text of `others`, how much of `text`'s wording it shares, each shared word weighted
    by how rare it is among `others` (inverse document frequency): the words most of them share
    are a sentence shape ("... is used by the ..."), the rare ones a fact's own names. With
    `groups` (a key per text), texts of one group count as one document: one fact's many
    statements must not make its names look common."""
    words = wording(text)
    sets = [wording(other) & words for other in others]
    keys = range(len(others)) if groups is None else groups
    documents: dict[str, set[object]] = {}
    for key, shared in zip(keys, sets, strict=True):
        for word in shared:
            documents.setdefault(word, set()).add(key)
    count = len(set(keys)) + 1
    weight = {word: math.log(count / (len(found) + 1)) for word, found in documents.items()}
    return [sum(weight[word] for word in shared) for shared in sets]

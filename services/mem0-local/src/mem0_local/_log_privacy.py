"""Memory texts stay out of the logs unless the operator asks for DEBUG.

Two ways they got there: mem0's own INFO lines quote them (`Updating memory with data='...'`
on every update), and exception messages quote whatever the failing call carried (a psycopg
error's CONTEXT line showed a stored text). So, below DEBUG, mem0's records under WARNING are
dropped and every logged exception keeps its traceback but not its message.
"""

from __future__ import annotations

import logging
import traceback

from mem0_local._errors import exception_chain

#: The mem0 library's logger hierarchy (`mem0.memory.main`, `mem0.vector_stores.pgvector`, ...);
#: our own loggers are `mem0_local.*`, which this prefix does not match.
MEM0_LOGGER = "mem0"

_WITHHELD = "(message withheld: it may quote memory text; MEM0_LOCAL_LOG_LEVEL=DEBUG shows it)"


def _from_mem0(record: logging.LogRecord) -> bool:
    return record.name == MEM0_LOGGER or record.name.startswith(f"{MEM0_LOGGER}.")


def traceback_without_messages(exc: BaseException) -> str:
    """Where each exception of the chain was raised, oldest first, with types but no messages."""
    parts = [
        "Traceback (most recent call last):\n"
        + "".join(traceback.format_tb(link.__traceback__))
        + f"{type(link).__module__}.{type(link).__qualname__}: {_WITHHELD}"
        for link in reversed(list(exception_chain(exc)))
    ]
    return "\n\nwhich led to:\n\n".join(parts)


class MemoryTextFilter(logging.Filter):
    """A handler filter: drops mem0's records below WARNING, strips exception messages."""

    def filter(self, record: logging.LogRecord) -> bool:
        if _from_mem0(record) and record.levelno < logging.WARNING:
            return False
        if record.exc_info and record.exc_info[1] is not None:
            # The formatter prints a cached exc_text instead of formatting exc_info itself.
            record.exc_text = traceback_without_messages(record.exc_info[1])
        return True


def memory_text_filters(log_level: str) -> list[logging.Filter]:
    """The filters for the handler at this level: none at DEBUG (or finer), where texts show."""
    level = logging.getLevelNamesMapping().get(log_level.upper(), logging.INFO)
    return [] if level <= logging.DEBUG else [MemoryTextFilter()]

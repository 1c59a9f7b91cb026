"""Logging with the request id on every record, so one call can be followed across services."""

from __future__ import annotations

import contextvars
import logging
import sys
from collections.abc import Sequence

#: The request id of the call being served (from `x-request-id` metadata, else generated).
request_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")


class _RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id_var.get()
        return True


def configure_logging(level: str = "INFO", filters: Sequence[logging.Filter] = ()) -> None:
    """Log to stderr (stdout may carry a protocol, as with MCP over stdio) with request ids.

    `filters` see every record on its way out, whichever library logged it (a filter on a
    logger would only see that logger's own records, not its children's).
    """
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(_RequestIdFilter())
    for extra in filters:
        handler.addFilter(extra)
    handler.setFormatter(
        logging.Formatter("%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s")
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())


def announce_listening(service: str, address: str) -> None:
    """Print the one line that tests and `make run` wait for: `<service> listening on <address>`."""
    print(f"{service} listening on {address}", file=sys.stderr, flush=True)  # noqa: T201

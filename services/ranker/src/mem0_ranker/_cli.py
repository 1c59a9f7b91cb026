"""`mem0-ranker`: serve until SIGTERM/SIGINT, then drain calls and close the store."""

from __future__ import annotations

import asyncio

from mem0_common import clock_for, configure_logging, serve_until_signalled
from mem0_ranker._service import create_server, open_store
from mem0_ranker._settings import RankerSettings


async def _serve(settings: RankerSettings) -> None:
    store = await open_store(settings)
    clock = clock_for(settings.test_clock_file, "RANKER_TEST_CLOCK_FILE")
    await serve_until_signalled(create_server(settings, store, clock), on_stopped=store.close)


def main() -> None:
    settings = RankerSettings()
    configure_logging(settings.log_level)
    asyncio.run(_serve(settings))

"""`mem0-judge`: run the judge until SIGTERM/SIGINT, configured from `JUDGE_*` variables."""

from __future__ import annotations

import asyncio
import logging

from mem0_common import configure_logging, serve_until_signalled
from mem0_judge._server import build_server
from mem0_judge._servicer import NOT_CONFIGURED_MESSAGE
from mem0_judge._settings import JudgeSettings

_log = logging.getLogger("mem0_judge")


async def _serve(settings: JudgeSettings) -> None:
    server = build_server(settings)
    if server.llm is None:
        _log.warning("%s; health reports the judge NOT_SERVING", NOT_CONFIGURED_MESSAGE)
    else:
        _log.info("judging with model %s at %s", settings.llm_model, settings.llm_base_url)
    await serve_until_signalled(server, on_stopped=server.close_llm)


def main() -> None:
    settings = JudgeSettings()
    configure_logging(settings.log_level)
    # httpx logs every request at INFO; the judge's own call line and LLM metrics already cover
    # it, and a second line per call is pure cost on the hot path.
    logging.getLogger("httpx").setLevel(max(logging.WARNING, logging.getLogger().level))
    asyncio.run(_serve(settings))

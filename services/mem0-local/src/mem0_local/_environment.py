"""The process environment mem0 must see before it is first imported.

mem0 reads `MEM0_TELEMETRY` and `MEM0_DIR` at import time (and creates `MEM0_DIR`), and its
OpenAI LLM silently prefers `OPENROUTER_API_KEY` over the configured endpoint. So these are set
before `mem0` is imported, and nothing may call out: telemetry off, Hugging Face offline.
"""

from __future__ import annotations

import logging
import os
import sys

from mem0_local._settings import Mem0LocalSettings

logger = logging.getLogger(__name__)

#: Variables that would make mem0 or its providers reach the network or ignore our config.
_OVERRIDING_VARIABLES = ("OPENROUTER_API_KEY", "OPENROUTER_API_BASE")


def prepare_process_environment(settings: Mem0LocalSettings) -> None:
    """Make the process safe for mem0: offline, no telemetry, a private MEM0_DIR.

    MEM0_DIR only takes effect if mem0 is not imported yet (a second server in the same process,
    as in the tests, keeps the first one's); our history database path is always passed
    explicitly, so that directory only ever holds mem0's own config file.
    """
    os.environ["MEM0_TELEMETRY"] = "false"
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
    if "mem0" not in sys.modules:
        mem0_dir = settings.data_dir / "mem0"
        mem0_dir.mkdir(parents=True, exist_ok=True)
        os.environ["MEM0_DIR"] = str(mem0_dir)
    for name in _OVERRIDING_VARIABLES:
        if os.environ.pop(name, None) is not None:
            logger.warning(
                "removed %s from the environment: it would override mem0-local's LLM", name
            )
    from mem0.memory import telemetry  # noqa: PLC0415 - only after the variables are set

    if telemetry.MEM0_TELEMETRY:
        raise RuntimeError(
            "mem0 was imported with telemetry on before mem0-local could turn it off; "
            "set MEM0_TELEMETRY=false in the environment"
        )

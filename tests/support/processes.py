"""Real subprocesses of our console scripts, for tests (see `mem0_common.ServiceProcess`)."""

from mem0_common import ServiceProcess

__all__ = ["ServiceProcess", "ranker_subprocess"]


def ranker_subprocess(**settings: str) -> ServiceProcess:
    """`mem0-ranker` on an ephemeral port, with these `RANKER_*` variables on top."""
    return ServiceProcess(["mem0-ranker"], {"RANKER_PORT": "0", **settings}, ready_timeout=60)

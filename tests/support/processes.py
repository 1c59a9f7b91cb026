"""Real subprocesses of our console scripts, for tests (see `mem0_common.ServiceProcess`)."""

from mem0_common import ServiceProcess

__all__ = ["ServiceProcess"]

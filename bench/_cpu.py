"""CPU time of the machine's processes over a window, by the part of the stack they are.

A load run on a small machine is limited by CPU long before anything else; where that CPU goes
(mem0-local's embedder, the bridge, PostgreSQL, the load's own clients) is what says what
would raise its rate. Read from /proc (Linux); elsewhere the window reports nothing.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

#: The stack's console scripts, as their processes' command lines name them.
_SERVICES = ("mem0-local", "mem0-bridge", "mem0-ranker", "mem0-judge")
#: This process: the load's MCP clients, the checker and the fake LLM's server thread.
DRIVER = "load driver and fake LLM"
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _part(pid: int, command: str, name: str) -> str:
    if pid == os.getpid():
        return DRIVER
    for service in _SERVICES:
        if service in command:
            return service
    return "postgres" if name.startswith("postgres") else "other"


def _cpu_ticks() -> dict[int, tuple[str, int]]:
    """Per live process: its part of the stack and its user + system CPU in clock ticks."""
    ticks: dict[int, tuple[str, int]] = {}
    for entry in Path("/proc").iterdir() if Path("/proc/self/stat").exists() else ():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue  # gone meanwhile
        # The name is in parentheses and may hold spaces: the fields follow the last ")".
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        pid = int(entry.name)
        ticks[pid] = (_part(pid, command, name), int(fields[11]) + int(fields[12]))
    return ticks


@dataclass
class CpuWindow:
    """CPU seconds per part of the stack between `start()` and `stop()`. A process that ended
    inside the window (a service killed by a fault) is not counted; one started inside it
    counts all it used."""

    _start: dict[int, tuple[str, int]] | None = None

    def start(self) -> None:
        self._start = _cpu_ticks()

    def stop(self) -> dict[str, float]:
        if self._start is None:
            raise RuntimeError("stop() before start()")
        used: Counter[str] = Counter()
        for pid, (part, ticks) in _cpu_ticks().items():
            before = self._start.get(pid)
            used[part] += ticks - (before[1] if before is not None and before[0] == part else 0)
        return {part: round(t / _TICKS, 2) for part, t in sorted(used.items()) if t > 0}

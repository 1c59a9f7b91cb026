"""Run our console scripts as real subprocesses and wait until they say where they listen.

Every service prints `<name> listening on <scheme>://<host>:<port>` to stderr once it accepts
connections (`mem0_common.announce_listening`), so tests bind port 0 and read the port back
instead of sleeping.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

_LISTENING = re.compile(r" listening on (?P<url>(?P<scheme>[a-z]+)://(?P<host>[^\s:]+):(?P<port>\d+)\S*)")
BIN = Path(sys.executable).parent


class ServiceProcess:
    """A started service; `port` and `url` are read from its announcement line."""

    def __init__(
        self,
        command: Sequence[str],
        env: Mapping[str, str] | None = None,
        *,
        ready_timeout: float = 120.0,
        cwd: str | Path | None = None,
    ) -> None:
        self.command = [str(BIN / command[0]) if (BIN / command[0]).exists() else command[0],
                        *command[1:]]
        self._log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - lives as long as the process
            mode="w+", prefix=f"{Path(command[0]).name}-", suffix=".log", delete=False
        )
        full_env = {**os.environ, **(env or {})}
        self.proc = subprocess.Popen(
            self.command, env=full_env, cwd=cwd, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True, bufsize=1,
        )
        self.url = ""
        self.port = 0
        ready = threading.Event()

        def pump() -> None:
            assert self.proc.stderr is not None
            for line in self.proc.stderr:
                self._log.write(line)
                self._log.flush()
                match = _LISTENING.search(line)
                if match and not ready.is_set():
                    self.url = match.group("url")
                    self.port = int(match.group("port"))
                    ready.set()

        self._pump = threading.Thread(target=pump, daemon=True)
        self._pump.start()
        deadline = time.monotonic() + ready_timeout
        while not ready.wait(0.05):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(
                    f"{' '.join(self.command)} did not announce readiness "
                    f"(exit code {self.proc.returncode}); its log:\n{self.log_text()}"
                )

    def log_text(self) -> str:
        return Path(self._log.name).read_text()

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int:
        """Send `sig` and wait; kill if it does not exit in time. Returns the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._pump.join(timeout=5)
        return self.proc.returncode

    def kill(self) -> None:
        self.stop(signal.SIGKILL)

    def __enter__(self) -> ServiceProcess:
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

"""Run our console scripts as subprocesses and wait until they say where they listen.

Every service prints `<name> listening on <scheme>://<host>:<port>` to stderr once it accepts
connections (`announce_listening`), so a supervisor (`make run`, the tests, the benchmarks) can
bind port 0, read the port back, and never sleep-and-hope.
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

_LISTENING = re.compile(
    r" listening on (?P<url>(?P<scheme>[a-z]+)://(?P<host>[^\s:]+):(?P<port>\d+)\S*)"
)
BIN = Path(sys.executable).parent


class ServiceProcess:
    """A started service; `port` and `url` are read from its announcement line.

    The child writes its stderr straight into a log file (`log_text()`): no pipe and no reader
    thread here, so a chatty service costs its supervisor nothing (a benchmark client that
    pumped the log of the server it measures would slow itself down). With `echo_prefix`, a
    thread follows the file and echoes each line to our stderr, as `make run` wants.
    """

    def __init__(
        self,
        command: Sequence[str],
        env: Mapping[str, str] | None = None,
        *,
        ready_timeout: float = 120.0,
        cwd: str | Path | None = None,
        echo_prefix: str | None = None,
        new_session: bool = False,
    ) -> None:
        # Prefer the console script next to this interpreter: it is the one this venv installed.
        local = BIN / command[0]
        self.command = [str(local) if local.exists() else command[0], *command[1:]]
        fd, name = tempfile.mkstemp(prefix=f"{Path(command[0]).name}-", suffix=".log")
        self.log_path = Path(name)
        with os.fdopen(fd, "wb") as log:
            self.proc = subprocess.Popen(  # noqa: S603 - our own console scripts, argv not shell
                self.command,
                env={**os.environ, **(env or {})},
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
                # A supervisor passes new_session so Ctrl-C reaches only it; it then stops each
                # child in order with SIGTERM instead of all of them dying at once.
                start_new_session=new_session,
            )
        self.url = ""
        self.port = 0
        self._stopped = threading.Event()
        self._echo: threading.Thread | None = None
        if echo_prefix is not None:
            self._echo = threading.Thread(target=self._follow, args=(echo_prefix,), daemon=True)
            self._echo.start()
        self._wait_until_listening(ready_timeout)

    def _wait_until_listening(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            match = _LISTENING.search(self.log_text())
            if match:
                self.url = match.group("url")
                self.port = int(match.group("port"))
                return
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(
                    f"{' '.join(self.command)} did not announce readiness "
                    f"(exit code {self.proc.returncode}); its log:\n{self.log_text()}"
                )
            time.sleep(0.02)

    def _follow(self, prefix: str) -> None:
        with self.log_path.open(encoding="utf-8", errors="replace") as log:
            while True:
                line = log.readline()
                if line:
                    sys.stderr.write(f"{prefix}{line}")
                elif self._stopped.is_set():
                    return
                else:
                    time.sleep(0.05)

    def log_text(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int:
        """Send `sig` and wait; kill if it does not exit in time. Returns the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._stopped.set()
        if self._echo is not None:
            self._echo.join(timeout=5)
        return self.proc.returncode

    def kill(self) -> None:
        self.stop(signal.SIGKILL)

    def __enter__(self) -> ServiceProcess:
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

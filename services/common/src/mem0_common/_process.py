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

    Its stderr goes to a log file (`log_text()`), and also to ours with `echo_prefix` set.
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
        self.command = [
            str(BIN / command[0]) if (BIN / command[0]).exists() else command[0],
            *command[1:],
        ]
        self._log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - lives as long as the process
            mode="w+", prefix=f"{Path(command[0]).name}-", suffix=".log", delete=False
        )
        full_env = {**os.environ, **(env or {})}
        self.proc = subprocess.Popen(  # noqa: S603 - our own console scripts, argv not shell
            self.command,
            env=full_env,
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
            # A supervisor passes new_session so Ctrl-C reaches only it; it then stops each
            # child in order with SIGTERM instead of all of them dying at once.
            start_new_session=new_session,
        )
        self.url = ""
        self.port = 0
        ready = threading.Event()

        stderr = self.proc.stderr
        if stderr is None:  # pragma: no cover - stderr=PIPE always gives a stream
            raise RuntimeError("subprocess has no stderr pipe")

        def pump() -> None:
            for line in stderr:
                self._log.write(line)
                self._log.flush()
                if echo_prefix is not None:
                    sys.stderr.write(f"{echo_prefix}{line}")
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
        # Closed here, not left to the GC: an unclosed pipe is a ResourceWarning (a test error).
        if self.proc.stderr is not None and not self._pump.is_alive():
            self.proc.stderr.close()
        self._log.close()
        return self.proc.returncode

    def kill(self) -> None:
        self.stop(signal.SIGKILL)

    def __enter__(self) -> ServiceProcess:
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

"""`make run`: start the local stack in the foreground and stop it cleanly on Ctrl-C.

mem0-local (embedded store under .data/), the ranker (SQLite under .data/), the judge (an LLM
only when JUDGE_LLM_BASE_URL and JUDGE_LLM_MODEL are set) and the bridge over streamable HTTP.
Any variable already set in the environment wins over these local defaults.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Mapping
from pathlib import Path

from mem0_common import ServiceProcess

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / ".data"


def stack_commands(
    environ: Mapping[str, str],
) -> list[tuple[str, list[str], dict[str, str]]]:
    """Each service's name, command and environment, the bridge pointed at the ports the others
    actually use (a port moved with MEM0_LOCAL_PORT, RANKER_PORT or JUDGE_PORT moves the
    bridge's address too, unless MEM0_API_URL or an address variable says otherwise)."""

    def env(**defaults: str) -> dict[str, str]:
        return {key: environ.get(key, value) for key, value in defaults.items()}

    mem0 = env(MEM0_LOCAL_PORT="8000", MEM0_LOCAL_DATA_DIR=str(DATA / "mem0-local"))
    ranker = env(RANKER_PORT="50051", RANKER_DB_PATH=str(DATA / "ranker.sqlite3"))
    judge = env(JUDGE_PORT="50052")
    bridge = env(
        MEM0_HTTP_PORT="8001",
        MEM0_API_URL=f"http://127.0.0.1:{mem0['MEM0_LOCAL_PORT']}",
        MEM0_RANKER_ADDRESS=f"127.0.0.1:{ranker['RANKER_PORT']}",
        MEM0_JUDGE_ADDRESS=f"127.0.0.1:{judge['JUDGE_PORT']}",
    )
    return [
        ("mem0-local", ["mem0-local"], mem0),
        ("ranker", ["mem0-ranker"], ranker),
        ("judge", ["mem0-judge"], judge),
        ("bridge", ["mem0-bridge", "--transport", "http"], bridge),
    ]


def main() -> int:
    DATA.mkdir(exist_ok=True)
    stack = stack_commands(os.environ)
    started: list[tuple[str, ServiceProcess]] = []
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        for name, command, env in stack:
            print(f"starting {name} ...", file=sys.stderr, flush=True)
            started.append(
                (
                    name,
                    ServiceProcess(
                        command, env, echo_prefix=f"[{name}] ", cwd=ROOT, new_session=True
                    ),
                )
            )
        bridge = started[-1][1]
        print(
            "\nmem0-mcp stack is up:\n"
            + "".join(f"  {name:<11} {proc.url}\n" for name, proc in started)
            + "\nRegister with an MCP client:\n"
            f"  over HTTP:  claude mcp add --transport http mem0 {bridge.url}\n"
            f"  over stdio: claude mcp add mem0 --env MEM0_API_URL={stack[-1][2]['MEM0_API_URL']} "
            f"-- {ROOT / '.venv/bin/mem0-bridge'}\n"
            "\nCtrl-C stops everything.",
            file=sys.stderr,
            flush=True,
        )
        while not stop.wait(0.5):
            for name, proc in started:
                if proc.proc.poll() is not None:
                    print(
                        f"{name} exited with {proc.proc.returncode}; stopping the stack",
                        file=sys.stderr,
                        flush=True,
                    )
                    return 1
        return 0
    finally:
        for name, proc in reversed(started):
            print(f"stopping {name} ...", file=sys.stderr, flush=True)
            proc.stop()
        print("stopped.", file=sys.stderr, flush=True)


if __name__ == "__main__":
    raise SystemExit(main())

"""HAProxy (Debian's package) as the load balancer in front of bridge replicas.

One configuration serves the docker suite (HAProxy in a container of its own, the replicas by
their network names) and `make bench-scale` (HAProxy on this machine, the replicas on loopback
ports): round robin per HTTP request, no session affinity (no cookie, no stickiness), a replica
taken out after two failed /healthz checks a second apart, and a request whose connection a
dead replica refused sent to the other one (`retries` + `redispatch`). A request that already
reached a replica is never sent twice: the answer to an add it had begun is lost with it.

    config = haproxy_config(["127.0.0.1:8101", "127.0.0.1:8102"], bind="127.0.0.1:8100")
"""

from __future__ import annotations

import csv
import io
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

#: Longer than a client's longest call (bench.load gives up after 120 s).
IDLE_TIMEOUT = "180s"


def haproxy_config(
    servers: Sequence[str], *, bind: str, stats_bind: str | None = None, dns: str | None = None
) -> str:
    """The configuration: `servers` are host:port of the replicas, `bind` where clients
    connect, `stats_bind` where /stats (CSV with `/stats;csv`) answers, `dns` a resolver
    (host:port) to re-resolve server names with (Docker's 127.0.0.11:53, so that a recreated
    container is found at its new address)."""
    lines = [
        "global",
        "    maxconn 4096",
        "defaults",
        "    mode http",
        "    timeout connect 2s",
        f"    timeout client {IDLE_TIMEOUT}",
        f"    timeout server {IDLE_TIMEOUT}",
        "    timeout http-keep-alive 65s",
        "    retries 2",
        "    option redispatch 1",
    ]
    if dns is not None:
        lines += ["resolvers dns", f"    nameserver dns {dns}", "    hold valid 1s"]
    lines += [
        "frontend mcp",
        f"    bind {bind}",
        "    default_backend bridges",
        "backend bridges",
        "    balance roundrobin",
        "    option httpchk GET /healthz",
        "    http-check expect status 200",
        "    default-server check inter 1s fall 2 rise 1",
    ]
    resolving = " resolvers dns init-addr last,libc,none" if dns is not None else ""
    lines += [f"    server bridge-{i + 1} {s}{resolving}" for i, s in enumerate(servers)]
    if stats_bind is not None:
        lines += [
            "frontend stats",
            f"    bind {stats_bind}",
            "    stats enable",
            "    stats uri /stats",
        ]
    return "\n".join(lines) + "\n"


def served_by_server(stats_url: str) -> dict[str, int]:
    """Responses each replica gave (HAProxy's `/stats;csv`), by server name."""
    answer = httpx.get(f"{stats_url};csv", timeout=10)
    answer.raise_for_status()
    rows = csv.DictReader(io.StringIO(answer.text.lstrip("# ")))
    return {
        row["svname"]: sum(int(row[f"hrsp_{n}xx"] or 0) for n in range(1, 6))
        for row in rows
        if row["pxname"] == "bridges" and row["svname"] not in {"FRONTEND", "BACKEND"}
    }


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class RunningHAProxy:
    process: subprocess.Popen[bytes]
    url: str
    stats_url: str

    def served(self) -> dict[str, int]:
        return served_by_server(self.stats_url)


@contextmanager
def running_haproxy(servers: Sequence[str]) -> Iterator[RunningHAProxy]:
    """HAProxy on this machine (loopback ports) in front of `servers`; stopped after."""
    binary = shutil.which("haproxy") or "/usr/sbin/haproxy"
    if not Path(binary).exists():
        raise RuntimeError("haproxy is not installed: apt-get install haproxy")
    port, stats = _free_port(), _free_port()
    with tempfile.TemporaryDirectory() as work:
        config = Path(work) / "haproxy.cfg"
        config.write_text(
            haproxy_config(servers, bind=f"127.0.0.1:{port}", stats_bind=f"127.0.0.1:{stats}")
        )
        check = subprocess.run(
            [binary, "-c", "-q", "-f", str(config)], capture_output=True, check=False
        )
        if check.returncode != 0:
            raise RuntimeError(f"haproxy refuses its configuration: {check.stderr.decode()}")
        process = subprocess.Popen(
            [binary, "-db", "-f", str(config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            running = RunningHAProxy(
                process, f"http://127.0.0.1:{port}", f"http://127.0.0.1:{stats}/stats"
            )
            deadline = time.monotonic() + 20
            while True:
                try:
                    if all(n >= 0 for n in running.served().values()):
                        break
                except httpx.HTTPError:
                    pass
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("haproxy did not start")
                time.sleep(0.1)
            yield running
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

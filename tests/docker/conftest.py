"""The docker suite's rules: run only when asked, skip with one reason where no engine answers,
and never let a skip pass in CI.

`make test` leaves this suite out (it is deselected, not skipped: nothing was attempted);
`make test-docker` provisions an engine and runs it with MEM0MCP_DOCKER_TESTS=1, as does naming
this folder or `-m docker` on pytest's command line. Under CI=true a skipped docker test is
reported as a failure: a CI run that did not exercise real containers has not passed.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest

# Ryuk, testcontainers' reaper, is an image pulled from a registry; none is reachable where this
# suite must run. Every fixture here stops and removes what it starts, even when a test fails.
os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")

import docker
from docker.errors import DockerException

from tests.docker import images

HERE = Path(__file__).resolve().parent


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def _requested(config: pytest.Config) -> bool:
    if os.environ.get("MEM0MCP_DOCKER_TESTS") == "1":
        return True
    if "docker" in (config.option.markexpr or ""):
        return True
    invocation = Path(config.invocation_params.dir)
    for argument in config.args:
        path = (invocation / argument.split("::", 1)[0]).resolve()
        if path == HERE or HERE in path.parents:
            return True
    return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _requested(config):
        return
    ours = [item for item in items if HERE in Path(str(item.path)).parents]
    if ours:
        config.hook.pytest_deselected(items=ours)
        items[:] = [item for item in items if item not in ours]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.skipped and in_ci() and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"a docker test skipped under CI=true, where every one must run: {reason}"
    return report


def _unreachable(address: str) -> str | None:
    """Why nothing listens at a `unix://` or `tcp://` engine address, or None.

    Asked with a plain socket first: docker-py's own probe leaves its socket open when it fails,
    which this suite's warnings-as-errors would turn into an unrelated error.
    """
    scheme, _, rest = address.partition("://")
    try:
        if scheme == "unix":
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                probe.settimeout(5)
                probe.connect(rest)
        elif scheme == "tcp":
            host, _, port = rest.rpartition(":")
            socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as error:
        return str(error)
    return None


@pytest.fixture(scope="session")
def docker_engine() -> Iterator[docker.DockerClient]:
    """A client of the engine DOCKER_HOST names (scripts/provision-docker.sh prints it)."""
    address = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    problem = _unreachable(address)
    client: docker.DockerClient | None = None
    if problem is None:
        try:
            client = docker.from_env()
            client.ping()
        except DockerException as error:
            problem = str(error)
    if problem is not None or client is None:
        pytest.skip(
            f"no Docker engine answers at {address} ({problem}); "
            'run `make test-docker` or `eval "$(scripts/provision-docker.sh)"` first'
        )
    try:
        yield client
    finally:
        client.close()


@pytest.fixture(scope="session")
def built_images(docker_engine: docker.DockerClient) -> images.Images:
    """The four service images, built from this checkout's Dockerfiles."""
    return images.build_all()

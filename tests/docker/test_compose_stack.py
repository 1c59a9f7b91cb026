"""What only a real Docker can tell about the deployment files: Compose accepts compose.yaml,
the images hold their console scripts and run as non-root users that can write their volumes,
and the stack comes up as written (local profile) with `mem0-bridge selftest` passing inside.
"""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from tests.deploy._repo import (
    ROOT,
    SERVICES,
    Service,
    compose_text,
    env_example,
    required_variables,
)
from tests.docker.images import TAG, Images, image_name

pytestmark = [pytest.mark.docker]


def _docker(*arguments: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["docker", *arguments],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture(scope="module")
def compose_plugin(docker_engine: docker.DockerClient) -> None:
    answer = _docker("compose", "version")
    if answer.returncode != 0:
        pytest.skip(f"the Docker Compose v2 plugin is missing: {answer.stderr.strip()}")


def _env_file(path: Path, **overrides: str) -> Path:
    """.env.example with a placeholder in every required variable, as an operator fills it."""
    values = env_example()
    for name in required_variables(compose_text()):
        values[name] = f"placeholder-{name.lower().replace('_', '-')}"
    values.update(overrides)
    path.write_text("".join(f"{name}={value}\n" for name, value in values.items()))
    return path


@pytest.mark.usefixtures("compose_plugin")
@pytest.mark.parametrize("profile", [None, "local"])
def test_compose_accepts_the_stack(tmp_path: Path, profile: str | None) -> None:
    profile_arguments = ["--profile", profile] if profile else []
    env_file = _env_file(tmp_path / "stack.env")
    answer = _docker("compose", "--env-file", str(env_file), *profile_arguments, "config", "-q")
    assert answer.returncode == 0, answer.stderr


@pytest.mark.usefixtures("compose_plugin")
def test_compose_names_a_missing_required_variable(tmp_path: Path) -> None:
    empty = tmp_path / "empty.env"
    empty.write_text("")
    answer = _docker("compose", "--env-file", str(empty), "config", "--quiet")
    assert answer.returncode != 0
    assert any(name in answer.stderr for name in required_variables(compose_text()))


@pytest.mark.parametrize("service", SERVICES, ids=lambda service: service.directory)
def test_image_runs_its_console_script_as_a_non_root_user(
    built_images: Images, service: Service
) -> None:
    image = f"{image_name(service.compose_name)}:{TAG}"
    found = _docker(
        "run", "--rm", "--entrypoint", "sh", image, "-c", f"command -v {service.script}"
    )
    assert found.returncode == 0, found.stderr
    user = _docker("run", "--rm", "--entrypoint", "id", image, "-u")
    assert user.stdout.strip() not in {"", "0"}


def test_mem0_local_writes_to_a_fresh_named_volume(built_images: Images) -> None:
    volume = f"mem0mcp-suite-{uuid.uuid4().hex[:8]}"
    try:
        answer = _docker(
            "run", "--rm", "--volume", f"{volume}:/var/lib/mem0mcp/data", "--entrypoint", "sh",
            built_images.mem0_local, "-c", "touch /var/lib/mem0mcp/data/probe",
        )  # fmt: skip
        assert answer.returncode == 0, answer.stderr
    finally:
        _docker("volume", "rm", "--force", volume)


@pytest.fixture
def compose_project(tmp_path: Path, built_images: Images) -> Iterator[list[str]]:
    """`docker compose` on compose.yaml as written, local profile, the suite's images, and a
    project name of its own; everything it created is removed after, volumes included."""
    env_file = _env_file(
        tmp_path / "stack.env",
        MEM0_MCP_TAG=TAG,
        MEM0_API_URL="http://mem0-local:8000",
        MEM0_BRIDGE_PORT="0",
        # A closed local port: no test traffic may leave the machine, and without an LLM the
        # judge reports judging unavailable (selftest warns, as designed).
        OPENAI_BASE_URL="http://127.0.0.1:9/v1",
    )
    base = [
        "compose",
        "--project-name",
        f"mem0mcp-suite-{uuid.uuid4().hex[:8]}",
        "--env-file",
        str(env_file),
        "--profile",
        "local",
    ]
    try:
        yield base
    finally:
        _docker(*base, "down", "--volumes", "--remove-orphans", "--timeout", "10", timeout=300)


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.usefixtures("compose_plugin")
def test_compose_stack_comes_up_and_passes_the_selftest(compose_project: list[str]) -> None:
    services = ["postgres", "mem0-local", "ranker", "judge", "bridge"]
    up = _docker(*compose_project, "up", "--detach", "--wait", "--no-build", *services, timeout=600)
    logs = _docker(*compose_project, "logs", "--no-color", "--tail", "40").stdout
    assert up.returncode == 0, f"{up.stderr}\n{logs}"
    selftest = _docker(*compose_project, "exec", "-T", "bridge", "mem0-bridge", "selftest")
    assert selftest.returncode == 0, f"{selftest.stdout}\n{selftest.stderr}\n{logs}"
    assert "selftest OK" in selftest.stdout

"""What only a real Docker can tell: Compose accepts the stack, and an image builds and holds its
console script. Skipped, with the reason, where Docker's compose plugin or engine is missing."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.deploy._repo import ROOT, SERVICES, compose_text, env_example, required_variables

pytestmark = [pytest.mark.docker]


def _docker(*arguments: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["docker", *arguments],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _first_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[0] if lines else "(no output)"


@pytest.fixture(scope="module")
def compose_plugin() -> None:
    if shutil.which("docker") is None:
        pytest.skip("the docker CLI is not installed")
    answer = _docker("compose", "version")
    if answer.returncode != 0:
        pytest.skip(
            "the Docker Compose plugin is not installed "
            f"(`docker compose version`: {_first_line(answer.stderr)})"
        )


@pytest.fixture(scope="module")
def docker_engine() -> None:
    if shutil.which("docker") is None:
        pytest.skip("the docker CLI is not installed")
    answer = _docker("info", "--format", "{{.ServerVersion}}")
    if answer.returncode != 0:
        pytest.skip(f"no Docker engine answers (`docker info`: {_first_line(answer.stderr)})")


@pytest.fixture
def env_file(tmp_path: Path) -> Path:
    """.env.example with a placeholder in every required variable, as an operator fills it."""
    values = env_example()
    for name in required_variables(compose_text()):
        values[name] = f"placeholder-{name.lower().replace('_', '-')}"
    path = tmp_path / "stack.env"
    path.write_text("".join(f"{name}={value}\n" for name, value in values.items()))
    return path


@pytest.mark.usefixtures("compose_plugin")
@pytest.mark.parametrize("profile", [None, "local"])
def test_compose_accepts_the_stack(env_file: Path, profile: str | None) -> None:
    profile_arguments = ["--profile", profile] if profile else []
    answer = _docker(
        "compose", "--env-file", str(env_file), *profile_arguments, "config", "--quiet"
    )
    assert answer.returncode == 0, answer.stderr


@pytest.mark.usefixtures("compose_plugin")
def test_compose_names_a_missing_required_variable(tmp_path: Path) -> None:
    empty = tmp_path / "empty.env"
    empty.write_text("")
    answer = _docker("compose", "--env-file", str(empty), "config", "--quiet")
    assert answer.returncode != 0
    assert any(name in answer.stderr for name in required_variables(compose_text()))


@pytest.fixture
def ranker_image() -> Iterator[str]:
    tag = f"mem0mcp-ranker:test-{uuid.uuid4().hex[:8]}"
    yield tag
    _docker("image", "rm", "--force", tag)


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.usefixtures("docker_engine")
def test_ranker_image_builds_and_carries_its_console_script(ranker_image: str) -> None:
    ranker = next(service for service in SERVICES if service.directory == "ranker")
    build = _docker(
        "build", "--file", str(ranker.dockerfile), "--tag", ranker_image, ".", timeout=1800
    )
    assert build.returncode == 0, build.stderr[-4000:]
    found = _docker(
        "run", "--rm", "--entrypoint", "sh", ranker_image, "-c", "command -v mem0-ranker"
    )
    assert found.returncode == 0, found.stderr
    user = _docker("run", "--rm", "--entrypoint", "id", ranker_image, "-u")
    assert user.stdout.strip() not in {"", "0"}

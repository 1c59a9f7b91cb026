"""scripts/provision-docker.sh is idempotent: run again on a provisioned machine it rebuilds
nothing, changes no image, and prints the same environment."""

from __future__ import annotations

import os
import subprocess

import docker
import pytest

from tests.deploy._repo import ROOT

pytestmark = [pytest.mark.docker]

SCRIPT = ROOT / "scripts" / "provision-docker.sh"


def _provision() -> dict[str, str]:
    answer = subprocess.run(
        [str(SCRIPT)], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False
    )
    assert answer.returncode == 0, answer.stderr
    exports: dict[str, str] = {}
    for line in answer.stdout.splitlines():
        assert line.startswith("export "), f"stdout must carry only exports: {line!r}"
        name, _, value = line.removeprefix("export ").partition("=")
        exports[name] = value.strip("'")
    return exports


def test_provisioning_again_changes_nothing(docker_engine: docker.DockerClient) -> None:
    first = _provision()
    images = [value for name, value in first.items() if name.endswith("_IMAGE")]
    before = {image: docker_engine.images.get(image).id for image in images}
    second = _provision()
    assert second == first
    assert first["DOCKER_HOST"] == os.environ.get("DOCKER_HOST", first["DOCKER_HOST"])
    assert {image: docker_engine.images.get(image).id for image in images} == before

"""This repository's images, built from its Dockerfiles with the engine's own builder (the
ranker's, the judge's and the bridge's from the one they share, told which by SERVICE).

The suite builds them in its session (layer cache makes a rebuild of unchanged sources take
seconds); `python -m tests.docker.images` builds them ahead, which `make test-docker` does so
that CI's log times the image phase on its own. Base images come from the environment that
scripts/provision-docker.sh prints (MEM0_MCP_PYTHON_IMAGE, ...); unset, the Dockerfiles'
public defaults apply.

The classic builder (DOCKER_BUILDKIT=0) is used on purpose: BuildKit would fetch its Dockerfile
frontend and needs buildx, neither of which a machine without a registry has, and the classic
builder builds these Dockerfiles the same.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tests.deploy._repo import ROOT, SERVICES

#: Tag of every image the suite builds; compose is pointed at it with MEM0_MCP_TAG. Two
#: checkouts sharing one engine keep apart with MEM0MCP_IMAGE_TAG.
TAG = os.environ.get("MEM0MCP_IMAGE_TAG") or "test"
#: The load balancer's Dockerfile (HAProxy from Debian, for the replica tests).
BALANCER_DOCKERFILE = Path(__file__).resolve().parent / "haproxy" / "Dockerfile"

#: Build arguments taken from the environment provisioning prints (only those that are set).
_BUILD_ARGUMENTS = {
    "PYTHON_IMAGE": "MEM0_MCP_PYTHON_IMAGE",
    "TORCH_WHEELS_IMAGE": "MEM0_MCP_TORCH_WHEELS_IMAGE",
    "TORCH_INDEX_URL": "MEM0_MCP_TORCH_INDEX_URL",
}


@dataclass(frozen=True)
class Images:
    ranker: str
    judge: str
    mem0_local: str
    bridge: str


def image_name(compose_name: str) -> str:
    """The repository compose.yaml gives a service's image (`mem0mcp-local` for mem0-local)."""
    return "mem0mcp-local" if compose_name == "mem0-local" else f"mem0mcp-{compose_name}"


def postgres_image() -> str:
    return os.environ.get("MEM0_MCP_POSTGRES_IMAGE") or "pgvector/pgvector:pg16"


def build_arguments() -> list[str]:
    arguments: list[str] = []
    for argument, variable in _BUILD_ARGUMENTS.items():
        if variable in os.environ:
            arguments += ["--build-arg", f"{argument}={os.environ[variable]}"]
    return arguments


def build(compose_name: str) -> str:
    """Build one service's image from its Dockerfile; return its tag. Raises on failure."""
    service = next(s for s in SERVICES if s.compose_name == compose_name)
    tag = f"{image_name(compose_name)}:{TAG}"
    build_args = [f"--build-arg={name}={value}" for name, value in service.build_args.items()]
    return _build(service.dockerfile, tag, ROOT, build_args)


def build_balancer() -> str:
    """The load balancer's image (HAProxy from Debian on the suite's base image); its tag."""
    tag = f"mem0mcp-haproxy:{TAG}"
    return _build(BALANCER_DOCKERFILE, tag, BALANCER_DOCKERFILE.parent, [])


def _build(dockerfile: Path, tag: str, context: Path, extra: list[str]) -> str:
    command = [
        "docker",
        "build",
        "--quiet",
        "--file",
        str(dockerfile),
        "--tag",
        tag,
        *build_arguments(),
        *extra,
        str(context),
    ]
    answer = subprocess.run(
        command,
        env={**os.environ, "DOCKER_BUILDKIT": "0"},
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    if answer.returncode != 0:
        raise RuntimeError(
            f"building {tag} failed:\n{answer.stdout[-3000:]}{answer.stderr[-3000:]}"
        )
    return tag


def build_all() -> Images:
    return Images(
        ranker=build("ranker"),
        judge=build("judge"),
        mem0_local=build("mem0-local"),
        bridge=build("bridge"),
    )


def main() -> int:
    for service in SERVICES:
        started = time.monotonic()
        tag = build(service.compose_name)
        sys.stderr.write(f"built {tag} in {time.monotonic() - started:.0f} s\n")
    started = time.monotonic()
    tag = build_balancer()
    sys.stderr.write(f"built {tag} in {time.monotonic() - started:.0f} s\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

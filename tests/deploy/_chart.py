"""The Helm chart (deploy/helm/mem0-mcp) as the pinned Helm renders it, for the deploy tests and
the docker suite's pods (tests/docker/test_helm_pods.py)."""

from __future__ import annotations

import subprocess
from typing import Any

import yaml

from scripts.helm import helm_binary
from tests.deploy._repo import ROOT

CHART = ROOT / "deploy" / "helm" / "mem0-mcp"
HA_VALUES = CHART / "values-ha.yaml"
RELEASE = "mem0-mcp"
#: <fullname> for RELEASE: the release name holds the chart's name, so it is used as is.
FULLNAME = "mem0-mcp"

#: Kinds whose pods the chart runs.
WORKLOADS = frozenset({"Deployment", "StatefulSet"})


def helm(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(helm_binary()), *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
    )


def render(*arguments: str) -> tuple[dict[str, Any], ...]:
    """`helm template` of the chart with these extra arguments (values files, --set)."""
    answer = helm("template", RELEASE, str(CHART), *arguments)
    if answer.returncode != 0:
        raise RuntimeError(f"helm template {' '.join(arguments)}: {answer.stderr}")
    return tuple(doc for doc in yaml.safe_load_all(answer.stdout) if doc)


def component(doc: dict[str, Any]) -> str:
    return str(doc["metadata"]["labels"]["app.kubernetes.io/component"])


def pod_spec(doc: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = doc["spec"]["template"]["spec"]
    return spec


def all_containers(doc: dict[str, Any]) -> list[dict[str, Any]]:
    spec = pod_spec(doc)
    return [*spec.get("initContainers", []), *spec["containers"]]


def env(item: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["name"]: entry for entry in item.get("env", [])}

"""The Helm chart (deploy/helm/mem0-mcp) lints, renders, and its manifests are valid for the
newest Kubernetes and the minor before it; it keeps its security promises; and it says what
compose.yaml and the Dockerfiles say: the same service names, ports, probes, images, users and
environment variable names.

Helm is the official CLI binary from the pinned dev dependency (scripts/helm.py); the API schemas
are kubernetes-validate's. Nothing here needs a cluster; the pods' runtime behaviour under these
settings is the docker suite's (tests/docker/test_helm_pods.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from packaging.version import Version

from scripts.helm import HELM_VERSION
from tests.deploy._chart import (
    CHART,
    FULLNAME,
    HA_VALUES,
    RELEASE,
    WORKLOADS,
    all_containers,
    component,
    env,
    helm,
    pod_spec,
    render,
)
from tests.deploy._repo import (
    SERVICES,
    Instruction,
    compose_environment,
    compose_service,
    compose_text,
    compose_variables,
    dockerfile_env,
    env_names,
    image_instructions,
    required_variables,
    with_defaults,
)

#: Every check runs the helm binary (a process): not part of `make test-fast`.
pytestmark = pytest.mark.subprocess

#: A value no generated secret can be: it must reach the Secret and nothing else.
OPENAI_KEY = "sk-test-openai-key-in-the-secret-only"


@dataclass(frozen=True)
class Variant:
    name: str
    arguments: tuple[str, ...]


VARIANTS = {
    # values.yaml as shipped: mem0-local and PostgreSQL in the chart.
    "default": Variant("default", ()),
    # values-ha.yaml: external PostgreSQL and mem0, replicas, ingress, metrics.
    "ha": Variant("ha", ("--values", str(HA_VALUES))),
    # compose.yaml's own default stack: mem0's official server and PostgreSQL in the chart.
    "compose": Variant(
        "compose", ("--set", "mem0.backend=official", "--set", f"secrets.openaiApiKey={OPENAI_KEY}")
    ),
    # The options the two others leave off: SQLite ranker, tokens file, metrics, spread.
    "options": Variant(
        "options",
        (
            "--set",
            "ranker.store=sqlite",
            "--set",
            "ranker.autoscaling.enabled=false",
            "--set",
            "bridge.tokensFile=true",
            "--set-string",
            "secrets.tokensFile=[[tokens]]",
            "--set",
            "metrics.enabled=true",
            "--set",
            "topologySpread.enabled=true",
            "--set",
            "ingress.enabled=true",
            "--set",
            "ingress.hosts[0]=memory.example.com",
        ),
    ),
}
LINTED = ("default", "ha")

#: Each compose service the chart deploys, and the chart variant that deploys it as compose does
#: (mem0-local is compose's `local` profile, the chart's default backend).
COMPOSE_VARIANT = {
    "bridge": "compose",
    "ranker": "compose",
    "judge": "compose",
    "mem0": "compose",
    "mem0-migrate": "compose",
    "postgres": "compose",
    "mem0-local": "default",
}

#: Variables the chart sets that compose.yaml does not, and why.
EXTRA_ENV = {
    # bridge.tokensFile: the file the tokens Secret is mounted as. The request-state secret:
    # the chart's bridge runs replicas (compose runs one, which needs none).
    "bridge": {"MEM0_HTTP_TOKENS_FILE", "MEM0_REQUEST_STATE_SECRET"},
    # metrics.enabled: metrics on the pod's address behind a token (compose keeps them on loopback).
    "ranker": {"RANKER_METRICS_HOST", "RANKER_METRICS_TOKEN"},
    "judge": {"JUDGE_METRICS_HOST", "JUDGE_METRICS_TOKEN"},
    # A read-only root filesystem and a user the image does not know: home and mem0's files
    # must be somewhere writable.
    "mem0": {"HOME", "MEM0_DIR"},
    "mem0-migrate": {"HOME"},
    # The data directory one level below the volume's root (which may hold lost+found).
    "postgres": {"PGDATA"},
}

#: Variables compose.yaml sets that a chart option may leave out.
OPTIONAL_ENV = {"ranker": {"RANKER_DATABASE_URL"}}  # ranker.store sqlite: RANKER_DB_PATH instead

#: Environment variable names that carry a secret (always from a Secret).
_SECRET_NAME = re.compile(r"(TOKEN|PASSWORD|SECRET|API_KEY|DATABASE_URL)$")


# ------------------------------------------------------------------------------------- rendering


@cache
def rendered(variant: str) -> tuple[dict[str, Any], ...]:
    return render(*VARIANTS[variant].arguments)


def of_kind(variant: str, kind: str) -> list[dict[str, Any]]:
    return [doc for doc in rendered(variant) if doc["kind"] == kind]


def named(variant: str, kind: str, name: str) -> dict[str, Any]:
    matches = [doc for doc in of_kind(variant, kind) if doc["metadata"]["name"] == name]
    assert len(matches) == 1, f"{variant}: {len(matches)} {kind} named {name}"
    return matches[0]


def workloads(variant: str) -> list[dict[str, Any]]:
    return [doc for doc in rendered(variant) if doc["kind"] in WORKLOADS]


def workload(variant: str, name: str) -> dict[str, Any]:
    matches = [doc for doc in workloads(variant) if component(doc) == name]
    assert len(matches) == 1, f"{variant}: {len(matches)} workloads of component {name}"
    return matches[0]


def container(variant: str, name: str) -> dict[str, Any]:
    """The container (or init container) named as compose.yaml's service `name`."""
    matches = [c for doc in workloads(variant) for c in all_containers(doc) if c["name"] == name]
    assert len(matches) == 1, f"{variant}: {len(matches)} containers named {name}"
    return matches[0]


def secret_data(variant: str) -> dict[str, str]:
    (secret,) = of_kind(variant, "Secret")
    data: dict[str, str] = secret["stringData"]
    return data


by_variant = pytest.mark.parametrize("variant", list(VARIANTS))


# ---------------------------------------------------------------------------- helm and its lint


def test_helm_is_the_pinned_official_build() -> None:
    answer = helm("version")
    assert answer.returncode == 0, answer.stderr
    assert f'Version:"{HELM_VERSION}"' in answer.stdout
    assert 'GitTreeState:"clean"' in answer.stdout


@pytest.mark.parametrize("variant", LINTED)
def test_chart_lints_strictly(variant: str) -> None:
    answer = helm("lint", "--strict", str(CHART), *VARIANTS[variant].arguments)
    assert answer.returncode == 0, answer.stdout + answer.stderr
    assert "0 chart(s) failed" in answer.stdout


@by_variant
def test_chart_renders(variant: str) -> None:
    kinds = {doc["kind"] for doc in rendered(variant)}
    assert {"Deployment", "Service", "NetworkPolicy", "HorizontalPodAutoscaler"} <= kinds
    assert {"PodDisruptionBudget", "ServiceAccount"} <= kinds


# ------------------------------------------------------------------------ Kubernetes API schemas


def kubernetes_versions() -> tuple[str, str]:
    """The newest Kubernetes release kubernetes-validate has schemas for, and the minor before."""
    versions = sorted({Version(v) for v in kubernetes_validate.utils.all_versions()})
    newest = versions[-1]
    previous = [v for v in versions if (v.major, v.minor) == (newest.major, newest.minor - 1)]
    assert previous, f"kubernetes-validate has no {newest.major}.{newest.minor - 1} schemas"
    return str(newest), str(previous[-1])


KUBERNETES_VERSIONS = kubernetes_versions()


def test_validates_against_current_and_previous_minor() -> None:
    newest, previous = (Version(v) for v in KUBERNETES_VERSIONS)
    assert newest >= Version("1.37"), "kubernetes-validate is older than the pinned one"
    assert (previous.major, previous.minor) == (newest.major, newest.minor - 1)


@by_variant
@pytest.mark.parametrize("kubernetes", KUBERNETES_VERSIONS)
def test_manifests_match_the_kubernetes_api_schemas(variant: str, kubernetes: str) -> None:
    failures: list[str] = []
    for doc in rendered(variant):
        where = f"{doc['kind']}/{doc['metadata']['name']}"
        try:
            kubernetes_validate.validate(doc, kubernetes, strict=True)
        except kubernetes_validate.ValidationError as error:
            path = ".".join(str(part) for part in error.path)
            failures.append(f"{where}: {path}: {error.message}")
        except kubernetes_validate.SchemaNotFoundError as error:
            failures.append(f"{where}: {error.message}")
    assert not failures, "\n".join(failures)


# ------------------------------------------------------------------------------------- security


def _pod_and_containers(variant: str) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    for doc in workloads(variant):
        for item in all_containers(doc):
            yield doc, item


@by_variant
def test_pods_run_as_non_root_without_a_service_account_token(variant: str) -> None:
    for doc in workloads(variant):
        spec = pod_spec(doc)
        name = doc["metadata"]["name"]
        assert spec["automountServiceAccountToken"] is False, name
        assert spec["securityContext"]["runAsNonRoot"] is True, name
        assert spec["securityContext"]["runAsUser"] > 0, name
        assert spec["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault", name
    for account in of_kind(variant, "ServiceAccount"):
        assert account["automountServiceAccountToken"] is False


@by_variant
def test_containers_are_locked_down(variant: str) -> None:
    for doc, item in _pod_and_containers(variant):
        where = f"{doc['metadata']['name']}/{item['name']}"
        context = item["securityContext"]
        assert context["readOnlyRootFilesystem"] is True, where
        assert context["allowPrivilegeEscalation"] is False, where
        assert context["runAsNonRoot"] is True, where
        assert context.get("privileged", False) is False, where
        assert context["capabilities"]["drop"] == ["ALL"], where
        assert "add" not in context["capabilities"], where


@by_variant
def test_every_container_has_requests_and_limits(variant: str) -> None:
    for doc, item in _pod_and_containers(variant):
        where = f"{doc['metadata']['name']}/{item['name']}"
        for bound in ("requests", "limits"):
            assert set(item["resources"][bound]) >= {"cpu", "memory"}, f"{where}: {bound}"


@by_variant
def test_every_container_has_startup_liveness_and_readiness_probes(variant: str) -> None:
    for doc in workloads(variant):
        for item in pod_spec(doc)["containers"]:
            for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
                assert probe in item, f"{doc['metadata']['name']}/{item['name']}: no {probe}"


@by_variant
def test_secrets_are_referenced_never_inlined(variant: str) -> None:
    secrets = of_kind(variant, "Secret")
    names = {secret["metadata"]["name"] for secret in secrets} or {"mem0-mcp-secrets"}
    values = [value for secret in secrets for value in secret["stringData"].values()]
    keys = {key for secret in secrets for key in secret["stringData"]}
    for doc in rendered(variant):
        if doc["kind"] == "Secret":
            continue
        text = json.dumps(doc)
        leaked = [value[:6] + "..." for value in values if len(value) >= 8 and value in text]
        assert not leaked, f"{doc['kind']}/{doc['metadata']['name']} inlines {leaked}"
    for doc, item in _pod_and_containers(variant):
        for name, entry in env(item).items():
            reference = entry.get("valueFrom", {}).get("secretKeyRef")
            if _SECRET_NAME.search(name):
                assert reference, f"{doc['metadata']['name']}: {name} must come from a Secret"
            if reference is None:
                continue
            assert reference["name"] in names, f"{name}: unknown Secret {reference['name']}"
            if secrets and not reference.get("optional"):
                assert reference["key"] in keys, f"{name}: the Secret has no {reference['key']}"


def test_openai_key_reaches_only_the_secret() -> None:
    assert secret_data("compose")["openai-api-key"] == OPENAI_KEY
    reference = env(container("compose", "mem0"))["OPENAI_API_KEY"]["valueFrom"]["secretKeyRef"]
    assert reference["key"] == "openai-api-key"


# ------------------------------------------------------------------------------ network policies


def _policy_for(variant: str, name: str) -> dict[str, Any]:
    labels = workload(variant, name)["spec"]["template"]["metadata"]["labels"]
    policies = [
        policy
        for policy in of_kind(variant, "NetworkPolicy")
        if policy["spec"]["podSelector"]["matchLabels"].items() <= labels.items()
    ]
    assert len(policies) == 1, f"{variant}: {len(policies)} NetworkPolicies select {name}"
    assert policies[0]["spec"]["policyTypes"] == ["Ingress"]
    return policies[0]


def _peer_components(rule: dict[str, Any]) -> set[str]:
    return {
        peer["podSelector"]["matchLabels"]["app.kubernetes.io/component"] for peer in rule["from"]
    }


def _ports(rule: dict[str, Any]) -> set[int]:
    return {int(port["port"]) for port in rule["ports"]}


@by_variant
def test_every_pod_is_covered_by_a_network_policy(variant: str) -> None:
    for doc in workloads(variant):
        _policy_for(variant, component(doc))


@by_variant
def test_only_the_ingress_controller_reaches_the_bridge(variant: str) -> None:
    (rule, *metrics_rules) = _policy_for(variant, "bridge")["spec"]["ingress"]
    assert all("podSelector" not in peer or "namespaceSelector" in peer for peer in rule["from"])
    assert rule["from"][0]["namespaceSelector"]["matchLabels"] == {
        "kubernetes.io/metadata.name": "ingress-nginx"
    }
    assert _ports(rule) == {8001}
    for extra in metrics_rules:  # metrics scrapers, on the bridge's own port (token-guarded)
        assert _ports(extra) == {8001}


def _backend(variant: str) -> str | None:
    names = {component(doc) for doc in workloads(variant)}
    return next((name for name in ("mem0", "mem0-local") if name in names), None)


@by_variant
def test_only_the_bridge_reaches_the_ranker_judge_and_mem0(variant: str) -> None:
    ports = {"ranker": (50051, 9151), "judge": (50052, 9152), "mem0": (8000, 0)}
    ports["mem0-local"] = ports["mem0"]
    targets = ["ranker", "judge"] + ([b] if (b := _backend(variant)) else [])
    for target in targets:
        service_port, metrics_port = ports[target]
        rule, *metrics_rules = _policy_for(variant, target)["spec"]["ingress"]
        assert _peer_components(rule) == {"bridge"}, target
        assert _ports(rule) == {service_port}, target
        for extra in metrics_rules:
            assert _ports(extra) == {metrics_port}, f"{target}: only metrics beyond the bridge"


@pytest.mark.parametrize("variant", ["default", "compose", "options"])
def test_only_its_clients_reach_postgres(variant: str) -> None:
    (rule,) = _policy_for(variant, "postgres")["spec"]["ingress"]
    clients = {"ranker"} | ({b} if (b := _backend(variant)) else set())
    assert _peer_components(rule) == clients
    assert _ports(rule) == {5432}


# ------------------------------------------------------------------- scaling and availability


@by_variant
def test_bridge_ranker_and_judge_have_an_autoscaler_and_a_budget(variant: str) -> None:
    autoscaled = {
        hpa["spec"]["scaleTargetRef"]["name"] for hpa in of_kind(variant, "HorizontalPodAutoscaler")
    }
    budgets = {
        pdb["spec"]["selector"]["matchLabels"]["app.kubernetes.io/component"]
        for pdb in of_kind(variant, "PodDisruptionBudget")
    }
    scaled = {"bridge", "ranker", "judge"} - ({"ranker"} if variant == "options" else set())
    assert autoscaled == {f"{FULLNAME}-{name}" for name in scaled}
    assert budgets >= {"bridge", "ranker", "judge"}
    for name in scaled:  # the autoscaler owns the replica count
        assert "replicas" not in workload(variant, name)["spec"], name


def test_ha_runs_two_or_more_of_each_spread_over_nodes() -> None:
    for hpa in of_kind("ha", "HorizontalPodAutoscaler"):
        assert hpa["spec"]["minReplicas"] >= 2
        assert hpa["spec"]["maxReplicas"] > hpa["spec"]["minReplicas"]
    for pdb in of_kind("ha", "PodDisruptionBudget"):
        assert pdb["spec"]["minAvailable"] == 1
    for doc in workloads("ha"):
        (spread,) = pod_spec(doc)["topologySpreadConstraints"]
        assert spread["topologyKey"] == "kubernetes.io/hostname"
        assert spread["labelSelector"]["matchLabels"]["app.kubernetes.io/component"] == component(
            doc
        )


@pytest.mark.parametrize("variant", ["default", "ha", "compose"])
def test_rankers_share_postgresql(variant: str) -> None:
    ranker = container(variant, "ranker")
    reference = env(ranker)["RANKER_DATABASE_URL"]["valueFrom"]["secretKeyRef"]
    assert reference["key"] == "ranker-database-url"
    assert "strategy" not in workload(variant, "ranker")["spec"]


def test_sqlite_ranker_is_one_pod_that_never_overlaps() -> None:
    ranker = workload("options", "ranker")
    assert ranker["spec"]["replicas"] == 1
    assert ranker["spec"]["strategy"] == {"type": "Recreate"}
    assert "RANKER_DATABASE_URL" not in env(container("options", "ranker"))
    mounts = {m["mountPath"] for m in container("options", "ranker")["volumeMounts"]}
    db_path = _dockerfile_env("ranker")["RANKER_DB_PATH"]
    assert str(Path(db_path).parent) in mounts


@by_variant
def test_bridge_has_no_session_affinity(variant: str) -> None:
    service = named(variant, "Service", f"{FULLNAME}-bridge")
    assert service["spec"].get("sessionAffinity", "None") == "None"
    for ingress in of_kind(variant, "Ingress"):
        annotations = ingress["metadata"].get("annotations", {})
        assert not [key for key in annotations if "affinity" in key or "session-cookie" in key]


def test_ingress_routes_mcp_to_the_bridge_and_its_hosts_are_allowed() -> None:
    (ingress,) = of_kind("ha", "Ingress")
    (rule,) = ingress["spec"]["rules"]
    (path,) = rule["http"]["paths"]
    assert path["path"] == "/mcp"
    assert path["backend"]["service"] == {"name": f"{FULLNAME}-bridge", "port": {"name": "http"}}
    allowed = env(container("ha", "bridge"))["MEM0_ALLOWED_HOSTS"]["value"].split(",")
    assert rule["host"] in allowed


# -------------------------------------------------------------------------- same as compose.yaml


def _dockerfile_env(compose_name: str) -> dict[str, str]:
    return dockerfile_env(_instructions(compose_name))


def _host_mapped(key: str, value: str) -> str:
    """A compose value with compose's service host names as the chart names them: in `host:port`
    (after `//` or `@`, or alone) and as the whole value of a `*_HOST` variable."""
    names = "|".join(re.escape(name) for name in sorted(COMPOSE_VARIANT, key=len, reverse=True))
    if key.endswith("_HOST") and value in COMPOSE_VARIANT:
        return f"{FULLNAME}-{value}"
    return re.sub(rf"(?:(?<=[/@])|^)({names})(?=:\d)", rf"{FULLNAME}-\1", value)


def _compose_env(name: str) -> dict[str, str]:
    return compose_environment(name)


@pytest.mark.parametrize("name", sorted(COMPOSE_VARIANT))
def test_workload_names_are_compose_service_names(name: str) -> None:
    variant = COMPOSE_VARIANT[name]
    assert name in _compose_services()
    item = container(variant, name)  # the container carries compose's service name
    assert item
    if name != "mem0-migrate":  # an init container of mem0's pod, as compose orders them
        assert workload(variant, name)["metadata"]["name"] == f"{FULLNAME}-{name}"
        assert named(variant, "Service", f"{FULLNAME}-{name}")


def _compose_services() -> set[str]:
    services = yaml.safe_load(compose_text())["services"]
    return set(services)


def test_chart_deploys_every_compose_service() -> None:
    assert _compose_services() == set(COMPOSE_VARIANT)


@pytest.mark.parametrize("name", sorted(set(COMPOSE_VARIANT) - {"mem0-migrate"}))
def test_ports_are_compose_ports(name: str) -> None:
    variant = COMPOSE_VARIANT[name]
    service = compose_service(name)
    expected = {int(port) for port in service.get("expose", [])}
    expected |= {
        int(with_defaults(str(port)).rsplit(":", 1)[-1]) for port in service.get("ports", [])
    }
    if name == "postgres":
        expected = {5432}  # the image's port; compose reaches it on its network only
    ports = {p["containerPort"] for p in container(variant, name)["ports"]}
    assert ports == expected
    service_ports = named(variant, "Service", f"{FULLNAME}-{name}")["spec"]["ports"]
    assert {p["port"] for p in service_ports} == expected


@pytest.mark.parametrize("name", sorted(COMPOSE_VARIANT))
def test_environment_names_are_compose_names(name: str) -> None:
    composed = set(_compose_env(name))
    for variant in VARIANTS:
        if name not in {c["name"] for doc in workloads(variant) for c in all_containers(doc)}:
            continue
        names = set(env(container(variant, name)))
        missing = composed - names - OPTIONAL_ENV.get(name, set())
        assert not missing, f"{variant}: {name} lacks compose's {sorted(missing)}"
        extra = names - composed - EXTRA_ENV.get(name, set())
        assert not extra, f"{variant}: {name} sets {sorted(extra)}, which compose does not"


@pytest.mark.parametrize("name", ["bridge", "ranker", "judge", "mem0-local"])
def test_extra_variables_are_read_by_the_service(name: str) -> None:
    service = next(s for s in SERVICES if s.compose_name == name)
    unknown = EXTRA_ENV.get(name, set()) - env_names(service.settings())
    assert not unknown, f"{name} reads no {sorted(unknown)}"


@pytest.mark.parametrize("name", sorted(COMPOSE_VARIANT))
def test_environment_values_are_compose_defaults(name: str) -> None:
    """Each variable compose fills from a secret comes from the Secret; each other one has the
    value compose gives it when no variable is set (service hosts renamed as in the chart)."""
    required = required_variables(compose_text())
    chart = env(container(COMPOSE_VARIANT[name], name))
    for key, value in _compose_env(name).items():
        if compose_variables(value) & required:
            assert "secretKeyRef" in chart[key].get("valueFrom", {}), f"{name}: {key}"
            continue
        expected = _host_mapped(key, with_defaults(value))
        assert chart[key].get("value", "") == expected, f"{name}: {key}"


def test_in_chart_database_urls_are_compose_urls() -> None:
    data = secret_data("compose")
    password = data["postgres-password"]
    for name, variable, key in [
        ("ranker", "RANKER_DATABASE_URL", "ranker-database-url"),
        ("mem0-local", "MEM0_LOCAL_DATABASE_URL", "mem0-local-database-url"),
    ]:
        composed = with_defaults(_compose_env(name)[variable])  # the password: its message
        expected = re.sub(r"(?<=:)[^:@/]*(?=@)", password, _host_mapped(variable, composed))
        assert data[key] == expected


def _instructions(name: str) -> list[Instruction]:
    service = next(s for s in SERVICES if s.compose_name == name)
    return image_instructions(service)


def _healthcheck(name: str) -> tuple[dict[str, int], str]:
    """Interval, timeout, retries and start period (seconds) and the command of the healthcheck
    compose.yaml or, where it has none, the service's Dockerfile declares."""
    compose_check = compose_service(name).get("healthcheck")
    if compose_check:
        timing = {
            key: int(str(compose_check[key]).rstrip("s"))
            for key in ("interval", "timeout", "retries", "start_period")
        }
        return timing, json.dumps(compose_check["test"])
    (check,) = [i for i in _instructions(name) if i.keyword == "HEALTHCHECK"]
    options = dict(re.findall(r"--([a-z-]+)=(\d+)s?", check.arguments))
    timing = {key.replace("-", "_"): int(value) for key, value in options.items()}
    return timing, check.arguments


@pytest.mark.parametrize("name", sorted(set(COMPOSE_VARIANT) - {"mem0-migrate"}))
def test_probes_are_the_compose_and_image_healthchecks(name: str) -> None:
    timing, command = _healthcheck(name)
    item = container(COMPOSE_VARIANT[name], name)
    liveness, startup = item["livenessProbe"], item["startupProbe"]
    assert liveness["periodSeconds"] == timing["interval"]
    assert liveness["timeoutSeconds"] == timing["timeout"]
    assert liveness["failureThreshold"] == timing["retries"]
    # Docker ignores failures for the start period, then allows `retries` more.
    budget = timing["start_period"] + timing["interval"] * timing["retries"]
    assert startup["periodSeconds"] * startup["failureThreshold"] == budget
    ports = {p["name"]: p["containerPort"] for p in item["ports"]}
    for probe in (item["startupProbe"], liveness, item["readinessProbe"]):
        if "grpc" in command and "HealthCheckRequest(service='')" in command:
            assert probe["grpc"] == {"port": ports["grpc"], "service": ""}
        elif "/healthz" in command:
            assert probe["httpGet"]["port"] == "http"
            assert probe["httpGet"]["path"] in {"/healthz", "/readyz"}
        elif "/docs" in command:
            assert probe["httpGet"] == {"path": "/docs", "port": "http"}
        elif "create_connection" in command:
            assert probe["tcpSocket"] == {"port": "http"}
        elif "pg_isready" in command:
            assert "pg_isready" in " ".join(probe["exec"]["command"])
        else:
            pytest.fail(f"{name}: no probe matches the healthcheck {command}")
    if "/healthz" in command:
        assert liveness["httpGet"]["path"] == "/healthz"
        assert item["readinessProbe"]["httpGet"]["path"] == "/readyz"


@pytest.mark.parametrize("name", sorted(set(COMPOSE_VARIANT) - {"mem0-migrate"}))
def test_images_are_compose_images(name: str) -> None:
    image = container(COMPOSE_VARIANT[name], name)["image"]
    composed = with_defaults(str(compose_service(name)["image"]))
    # Ours are tagged MEM0_MCP_TAG (default latest), as values.yaml's image.tag.
    assert image == composed


@pytest.mark.parametrize("name", ["bridge", "ranker", "judge", "mem0-local"])
def test_pods_run_as_the_images_user(name: str) -> None:
    (useradd,) = [i for i in _instructions(name) if "useradd" in i.arguments]
    uid = int(re.search(r"--uid (\d+)", useradd.arguments).group(1))  # type: ignore[union-attr]
    context = pod_spec(workload(COMPOSE_VARIANT[name], name))["securityContext"]
    assert context["runAsUser"] == uid
    assert context["runAsGroup"] == uid


@pytest.mark.parametrize("name", ["mem0", "mem0-local", "postgres"])
def test_compose_volumes_are_writable_mounts(name: str) -> None:
    item = container(COMPOSE_VARIANT[name], name)
    mounts = {m["mountPath"]: m for m in item["volumeMounts"]}
    for volume in compose_service(name).get("volumes", []):
        target = str(volume).split(":")[1]
        assert target in mounts, f"{name}: {target} is not mounted"
        assert not mounts[target].get("readOnly", False)


@by_variant
def test_python_services_have_a_writable_tmp(variant: str) -> None:
    for doc, item in _pod_and_containers(variant):
        mounts = {m["mountPath"] for m in item.get("volumeMounts", [])}
        where = f"{doc['metadata']['name']}/{item['name']}"
        assert "/tmp" in mounts, where  # noqa: S108 - the pod's own emptyDir


def test_postgres_init_script_is_compose_config() -> None:
    config = named("compose", "ConfigMap", f"{FULLNAME}-postgres-init")
    composed = yaml.safe_load(compose_text())["configs"]["postgres-init"]["content"]
    (target,) = [c["target"] for c in compose_service("postgres")["configs"]]
    assert config["data"][Path(target).name] == composed
    mounts = {m["mountPath"] for m in container("compose", "postgres")["volumeMounts"]}
    assert str(Path(target).parent) in mounts


def test_migrate_runs_compose_command_before_mem0() -> None:
    spec = pod_spec(workload("compose", "mem0"))
    (migrate,) = spec["initContainers"]
    assert migrate["command"] == compose_service("mem0-migrate")["command"]
    assert migrate["image"] == container("compose", "mem0")["image"]


# ---------------------------------------------------------------------------------- bad values


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        # Rankers share state only through PostgreSQL: SQLite with replicas is refused.
        (["--set", "ranker.store=sqlite", "--set", "ranker.replicaCount=3"], "/ranker/"),
        (["--set", "ranker.store=sqlite"], "/ranker/autoscaling/enabled"),
        (["--set", "containerSecurityContext.readOnlyRootFilesystem=false"], "readOnlyRoot"),
        (["--set", "podSecurityContext.runAsNonRoot=false"], "runAsNonRoot"),
        (["--set", "bridge.resources.limits=null"], "limits"),
        (["--set", "mem0.backend=external"], "externalUrl"),
        (["--set", "mem0.backend=elsewhere"], "/mem0/backend"),
        (["--set", "logLevel=LOUD"], "/logLevel"),
        (["--set", "bridge.replicas=2"], "replicas"),
        (["--set", "ingress.enabled=true"], "hosts"),
    ],
)
def test_schema_rejects_bad_values(arguments: list[str], message: str) -> None:
    answer = helm("template", RELEASE, str(CHART), *arguments)
    assert answer.returncode != 0, f"accepted {arguments}"
    assert "schema" in answer.stderr, answer.stderr
    assert message in answer.stderr, answer.stderr


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--set", "mem0.backend=official"], "secrets.openaiApiKey"),
        (
            [
                *("--set", "mem0.backend=official"),
                *("--set", "secrets.openaiApiKey=k"),
                *("--set", "postgresql.enabled=false"),
            ],
            "postgresql.enabled",
        ),
        (["--set", "postgresql.enabled=false"], "ranker.store postgresql needs a database"),
        (["--set", "bridge.autoscaling.minReplicas=9"], "minReplicas (9) is above maxReplicas"),
        (["--set", "bridge.tokensFile=true"], "secrets.tokensFile"),
    ],
)
def test_template_refuses_inconsistent_values(arguments: list[str], message: str) -> None:
    answer = helm("template", RELEASE, str(CHART), *arguments)
    assert answer.returncode != 0, f"accepted {arguments}"
    assert message in answer.stderr, answer.stderr

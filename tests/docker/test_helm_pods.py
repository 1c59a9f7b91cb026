"""The Helm chart's pods, run as containers the way a kubelet would run them.

No conformant Kubernetes cluster can be built from the package registries this project may use,
so the chart's runtime behaviour is proven here instead: every pod of the default values
(PostgreSQL, mem0-local, the ranker, the judge, the bridge) is rendered by `helm template` and
started from its rendered spec alone, with the image built from this checkout, the pod's user,
group and fsGroup, a read-only root filesystem, every capability dropped, no privilege
escalation, each emptyDir a new empty directory, each ConfigMap mounted read-only, the
environment as rendered (secretKeyRef resolved from the rendered Secret) and each pod reachable
under its Service's name. The containers share an internal network: nothing can leave the
machine (the judge's and mem0-local's LLM is the suite's fake, at `llm`).

Then every probe of every container is run as the kubelet runs it (HTTP GET, gRPC health, TCP
connect against the pod's address, or exec), and `mem0-bridge selftest` adds and finds a memory
through the whole chain, with the ranker and the judge serving. PostgreSQL runs the image the
docker suite provisions, under that image's postgres user (postgresql.runAsUser), with the
chart's settings otherwise.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import docker
import pytest
from docker.models.containers import Container
from docker.models.networks import Network

from tests.deploy._chart import FULLNAME, component, env, pod_spec, render
from tests.deploy._repo import ROOT
from tests.docker.images import TAG, Images, postgres_image

pytestmark = [pytest.mark.docker]

STARTUP_TIMEOUT = 300
FAKE_LLM = "http://llm:8080/v1"
#: Start order: each pod's dependencies first, as their probes would gate them in a cluster.
ORDER = ("postgres", "mem0-local", "ranker", "judge", "bridge")


def _postgres_uid(client: docker.DockerClient, image: str) -> int:
    output: bytes = client.containers.run(image, entrypoint=["id", "-u", "postgres"], remove=True)
    return int(output.decode().strip())


def _manifests(client: docker.DockerClient) -> tuple[dict[str, Any], ...]:
    repository, _, tag = postgres_image().rpartition(":")
    return render(
        *("--set-string", f"image.tag={TAG}"),
        *("--set", f"judge.llm.baseUrl={FAKE_LLM}", "--set", "judge.llm.model=fake-model"),
        *("--set", f"mem0Local.llm.baseUrl={FAKE_LLM}", "--set", "mem0Local.llm.model=fake-model"),
        *("--set", "secrets.openaiApiKey=fake-key"),
        *("--set", f"postgresql.image.repository={repository}"),
        *("--set-string", f"postgresql.image.tag={tag}"),
        *("--set", f"postgresql.runAsUser={_postgres_uid(client, postgres_image())}"),
        # A PersistentVolumeClaim needs a cluster; its data directory is a tmpfs here.
        *("--set", "postgresql.persistence.enabled=false"),
    )


class Pods:
    """Rendered pods started as containers on one internal network."""

    def __init__(self, client: docker.DockerClient, manifests: tuple[dict[str, Any], ...]):
        self.client = client
        self.manifests = manifests
        self.run_id = uuid.uuid4().hex[:8]
        self.exits = ExitStack()
        self.network: Network = client.networks.create(
            f"mem0mcp-helm-{self.run_id}", driver="bridge", internal=True
        )
        self.exits.callback(self.network.remove)
        self.containers: dict[str, Container] = {}
        (secret,) = [doc for doc in manifests if doc["kind"] == "Secret"]
        self.secret: dict[str, str] = secret["stringData"]
        self.config_maps = {
            doc["metadata"]["name"]: doc["data"] for doc in manifests if doc["kind"] == "ConfigMap"
        }

    def workload(self, name: str) -> dict[str, Any]:
        (doc,) = [
            d
            for d in self.manifests
            if d["kind"] in {"Deployment", "StatefulSet"} and component(d) == name
        ]
        return doc

    def _attach(self, container: Container, *aliases: str) -> None:
        self.network.connect(container, aliases=list(aliases))
        self.client.networks.get("bridge").disconnect(container)

    def start_container(self, name: str, **options: Any) -> Container:
        container: Container = self.client.containers.create(
            name=f"mem0mcp-helm-{self.run_id}-{name}", detach=True, **options
        )
        self.exits.callback(container.remove, force=True)
        self._attach(container, name)
        container.start()
        self.containers[name] = container
        return container

    def start_pod(self, name: str, tmp: Path) -> Container:
        """Start the pod of component `name` from its rendered spec alone."""
        spec = pod_spec(self.workload(name))
        (item,) = spec["containers"]
        assert not spec.get("initContainers"), "init containers are not run here"
        pod, own = spec["securityContext"], item["securityContext"]
        uid = own.get("runAsUser", pod["runAsUser"])
        gid = own.get("runAsGroup", pod.get("runAsGroup", uid))
        volumes = {volume["name"]: volume for volume in spec.get("volumes", [])}
        binds: dict[str, dict[str, str]] = {}
        shm_size: str | None = None
        for mount in item.get("volumeMounts", []):
            volume = volumes[mount["name"]]
            shared_memory = mount["mountPath"] == "/dev/shm"  # noqa: S108 - the pod's own
            if shared_memory and volume.get("emptyDir", {}).get("medium"):
                shm_size = volume["emptyDir"]["sizeLimit"].replace("Mi", "m")
            elif "emptyDir" in volume:
                # As the kubelet makes one: a new, empty, world-writable directory, bind-mounted
                # (a tmpfs here would take the permissions of the image's directory under it).
                folder = tmp / f"{name}-{mount['name']}"
                folder.mkdir()
                folder.chmod(0o777)
                binds[str(folder)] = {"bind": mount["mountPath"], "mode": "rw"}
            elif "configMap" in volume:
                folder = tmp / f"{name}-{mount['name']}"
                folder.mkdir()
                for key, text in self.config_maps[volume["configMap"]["name"]].items():
                    (folder / key).write_text(text)
                    (folder / key).chmod(0o644)
                folder.chmod(0o755)
                binds[str(folder)] = {"bind": mount["mountPath"], "mode": "ro"}
            else:
                pytest.fail(f"{name}: volume {volume} has no container equivalent here")
        environment: dict[str, str] = {}
        for variable, entry in env(item).items():
            reference = entry.get("valueFrom", {}).get("secretKeyRef")
            if reference is None:
                environment[variable] = str(entry.get("value", ""))
            elif reference["key"] in self.secret:
                environment[variable] = self.secret[reference["key"]]
            else:
                assert reference.get("optional"), f"{name}: {reference['key']} is missing"
        container: Container = self.client.containers.create(
            item["image"],
            name=f"mem0mcp-helm-{self.run_id}-{name}",
            command=item.get("args"),
            entrypoint=item.get("command"),
            user=f"{uid}:{gid}",
            group_add=[str(pod["fsGroup"])] if "fsGroup" in pod else None,
            read_only=own["readOnlyRootFilesystem"],
            cap_drop=own["capabilities"]["drop"],
            security_opt=["no-new-privileges:true"] if not own["allowPrivilegeEscalation"] else [],
            privileged=own.get("privileged", False),
            volumes=binds,
            shm_size=shm_size,
            environment=environment,
            detach=True,
        )
        self.exits.callback(container.remove, force=True)
        self._attach(container, f"{FULLNAME}-{name}")
        container.start()
        self.containers[name] = container
        return container

    def address(self, name: str) -> str:
        container = self.containers[name]
        container.reload()
        address: str = container.attrs["NetworkSettings"]["Networks"][self.network.name][
            "IPAddress"
        ]
        return address

    def logs(self) -> str:
        return "\n".join(
            f"--- {name}\n{container.logs(tail=40).decode(errors='replace')}"
            for name, container in self.containers.items()
        )


def _exec(container: Container, command: list[str]) -> tuple[int, str]:
    """Run `command` in `container`: its exit code and output (stdout and stderr)."""
    result = container.exec_run(command)
    output = result.output
    text = output.decode(errors="replace") if isinstance(output, bytes) else ""
    return (-1 if result.exit_code is None else result.exit_code), text


def _python(code: str) -> list[str]:
    return ["python", "-c", code]


def _probe_command(probe: dict[str, Any], address: str, ports: dict[str, int]) -> list[str]:
    """The kubelet's check as a command the prober container runs against the pod's address."""
    if "httpGet" in probe:
        check = probe["httpGet"]
        port = ports.get(str(check["port"]), check["port"])
        url = f"http://{address}:{port}{check['path']}"
        return _python(
            "import urllib.request; "
            f"urllib.request.urlopen({url!r}, timeout={probe['timeoutSeconds']}).close()"
        )
    if "grpc" in probe:
        check = probe["grpc"]
        return _python(
            "import sys, grpc; from grpc_health.v1 import health_pb2 as h, health_pb2_grpc as g; "
            f"c = grpc.insecure_channel('{address}:{check['port']}'); "
            f"s = g.HealthStub(c).Check(h.HealthCheckRequest(service={check.get('service', '')!r}),"
            f" timeout={probe['timeoutSeconds']}).status; "
            "sys.exit(0 if s == h.HealthCheckResponse.SERVING else 1)"
        )
    if "tcpSocket" in probe:
        port = ports.get(str(probe["tcpSocket"]["port"]), probe["tcpSocket"]["port"])
        return _python(
            "import socket; "
            f"socket.create_connection(({address!r}, {port}), timeout={probe['timeoutSeconds']})"
            ".close()"
        )
    raise AssertionError(f"unknown probe {probe}")


def _passes(pods: Pods, prober: Container, name: str, kind: str) -> tuple[bool, str]:
    item = pod_spec(pods.workload(name))["containers"][0]
    probe = item[kind]
    if "exec" in probe:  # run inside the pod's own container, as the kubelet does
        code, output = _exec(pods.containers[name], probe["exec"]["command"])
    else:
        ports = {p["name"]: p["containerPort"] for p in item["ports"]}
        code, output = _exec(prober, _probe_command(probe, pods.address(name), ports))
    return code == 0, output


def _wait_for(pods: Pods, prober: Container, name: str, kind: str) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while True:
        pods.containers[name].reload()
        assert pods.containers[name].status == "running", f"{name} exited\n{pods.logs()}"
        passed, output = _passes(pods, prober, name, kind)
        if passed:
            return
        if time.monotonic() > deadline:
            pytest.fail(f"{name}: {kind} never passed: {output}\n{pods.logs()}")
        time.sleep(2)


@pytest.fixture(scope="module")
def pods(
    docker_engine: docker.DockerClient,
    built_images: Images,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Pods, Container]]:
    tmp = tmp_path_factory.mktemp("helm-pods")
    tmp.chmod(0o755)
    running = Pods(docker_engine, _manifests(docker_engine))
    with running.exits:
        # The suite's fake LLM (only a stand-in, not a pod of the chart), and a prober: the
        # kubelet's vantage point, another address on the pods' network.
        fake_llm = {
            "image": built_images.bridge,
            "command": ["python", "-m", "tests.docker.fake_llm_server", "--port", "8080"],
            "environment": {"PYTHONPATH": "/src"},
            "volumes": {str(ROOT / "tests"): {"bind": "/src/tests", "mode": "ro"}},
        }
        running.start_container("llm", **fake_llm)
        prober = running.start_container(
            "prober", image=built_images.bridge, command=["sleep", "infinity"]
        )
        for name in ORDER:
            running.start_pod(name, tmp)
            _wait_for(running, prober, name, "startupProbe")
        yield running, prober


@pytest.mark.parametrize("name", ORDER)
@pytest.mark.parametrize("kind", ["startupProbe", "livenessProbe", "readinessProbe"])
def test_probes_pass_under_the_pod_settings(
    pods: tuple[Pods, Container], name: str, kind: str
) -> None:
    running, prober = pods
    deadline = time.monotonic() + 120
    while not (answer := _passes(running, prober, name, kind))[0]:
        if time.monotonic() > deadline:
            pytest.fail(f"{name}: {kind} fails: {answer[1]}\n{running.logs()}")
        time.sleep(2)


@pytest.mark.parametrize("name", ORDER)
def test_pods_run_as_their_user_on_a_read_only_root(
    pods: tuple[Pods, Container], name: str
) -> None:
    running, _ = pods
    container = running.containers[name]
    spec = pod_spec(running.workload(name))
    expected = spec["containers"][0]["securityContext"].get(
        "runAsUser", spec["securityContext"]["runAsUser"]
    )
    assert _exec(container, ["id", "-u"])[1].strip() == str(expected)
    code, _ = _exec(container, ["sh", "-c", "touch /probe-of-the-root-filesystem"])
    assert code != 0, "the root filesystem is writable"
    _, status = _exec(container, ["grep", "-E", "^(CapEff|NoNewPrivs):", "/proc/self/status"])
    fields: dict[str, str] = {}
    for line in status.splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    assert int(fields["CapEff"], 16) == 0, status
    assert fields["NoNewPrivs"] == "1", status


def test_bridge_selftest_passes_through_the_chart_pods(pods: tuple[Pods, Container]) -> None:
    running, _ = pods
    code, output = _exec(running.containers["bridge"], ["mem0-bridge", "selftest"])
    assert code == 0, f"{output}\n{running.logs()}"
    assert "selftest OK" in output
    assert ", 0 warnings" in output, output  # the ranker and the judge (its LLM) serve too

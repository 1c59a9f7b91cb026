"""The whole deployment in containers on one network, started with testcontainers.

PostgreSQL with pgvector, mem0-local, two ranker replicas and two judge replicas (each pair
behind one network alias, as compose's `deploy.replicas` would put them), the bridge on
streamable HTTP, and the FakeLLM in a container of its own (the only stand-in). State lives in
named volumes, so that a container can be removed and recreated without losing it.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any

import docker
import httpx
from docker.models.containers import Container
from testcontainers.core.container import DockerContainer
from testcontainers.core.network import Network
from testcontainers.core.wait_strategies import ExecWaitStrategy, LogMessageWaitStrategy

from tests.deploy._repo import ROOT, compose
from tests.docker.images import Images, postgres_image
from tests.support.haproxy import haproxy_config

POSTGRES_USER = "mem0"
POSTGRES_PASSWORD = "docker-suite-password"  # noqa: S105 - a throwaway test database
API_KEY = "docker-suite-api-key"
RESET_TOKEN = "docker-suite-reset-token"  # noqa: S105
BEARER_TOKEN = "docker-suite-bearer-token"  # noqa: S105
#: Metrics bound beyond a container's loopback must be behind a token (the services insist).
METRICS_TOKEN = "docker-suite-metrics-token"  # noqa: S105
LLM_URL = "http://llm:8080/v1"
STARTUP_TIMEOUT = 300
#: The bridge replicas' network names behind the load balancer, and the port it listens on.
BRIDGE_REPLICAS = ("bridge-1", "bridge-2")
BALANCER_PORT = 8080
#: Docker's resolver on a user-defined network: HAProxy re-resolves the replicas' names there.
DOCKER_DNS = "127.0.0.11:53"


def _database_url(database: str) -> str:
    return f"postgresql://{POSTGRES_USER}:{POSTGRES_PASSWORD}@postgres:5432/{database}"


def image_healthcheck(client: docker.DockerClient, image: str) -> list[str]:
    """The command of the image's own HEALTHCHECK, to poll with `exec` (faster than waiting for
    the engine's first interval) so a container counts as up exactly when its image says so."""
    test: list[str] = client.images.get(image).attrs["Config"]["Healthcheck"]["Test"]
    if test[0] == "CMD":
        return test[1:]
    return ["sh", "-c", test[1]]


def host_port(container: DockerContainer, port: int) -> int:
    """The host port a container port is published on, read afresh (a restart may change it)."""
    wrapped: Container = container.get_wrapped_container()
    wrapped.reload()
    bindings = wrapped.attrs["NetworkSettings"]["Ports"][f"{port}/tcp"]
    return int(bindings[0]["HostPort"])


_SAMPLE = re.compile(
    r"^mem0mcp_grpc_calls_total\{(?P<labels>[^}]*)\} (?P<value>[0-9.e+]+)$", re.MULTILINE
)


#: Health probes (the engine's healthcheck, the bridge's /readyz) are not the bridge's calls.
_PROBES = frozenset({"Check", "Watch"})


def served_calls(metrics_url: str) -> int:
    """gRPC calls a replica served, from its Prometheus counter, health probes excluded."""
    answer = httpx.get(
        metrics_url, headers={"Authorization": f"Bearer {METRICS_TOKEN}"}, timeout=10
    )
    answer.raise_for_status()
    text = answer.text
    total = 0.0
    for sample in _SAMPLE.finditer(text):
        labels = dict(re.findall(r'(\w+)="([^"]*)"', sample["labels"]))
        if labels.get("method") not in _PROBES:
            total += float(sample["value"])
    return int(total)


@dataclass
class Replica:
    name: str
    container: DockerContainer
    metrics_port: int

    def calls(self) -> int:
        url = f"http://127.0.0.1:{host_port(self.container, self.metrics_port)}/metrics"
        return served_calls(url)

    def kill(self) -> None:
        self.container.get_wrapped_container().kill()


@dataclass
class Stack:
    """The running stack; `recreate_stateful` replaces its stateful containers."""

    client: docker.DockerClient
    images: Images
    network: Network
    run_id: str
    exits: ExitStack
    containers: dict[str, DockerContainer] = field(default_factory=dict)
    rankers: list[Replica] = field(default_factory=list)
    judges: list[Replica] = field(default_factory=list)
    removed: set[int] = field(default_factory=set)

    @property
    def bridge_url(self) -> str:
        return f"{self.bridge_base}/mcp"

    @property
    def bridge_base(self) -> str:
        """Where clients reach the bridge: the load balancer in front of the replicas, if any."""
        if "balancer" in self.containers:
            return f"http://127.0.0.1:{host_port(self.containers['balancer'], BALANCER_PORT)}"
        return f"http://127.0.0.1:{host_port(self.containers['bridge'], 8001)}"

    @property
    def mem0_url(self) -> str:
        """mem0-local as published on the host (its API key: API_KEY)."""
        return f"http://127.0.0.1:{host_port(self.containers['mem0-local'], 8000)}"

    def volume(self, name: str) -> str:
        return f"mem0mcp-suite-{self.run_id}-{name}"

    # -- containers ----------------------------------------------------------------------------

    def _start(
        self, key: str, container: DockerContainer, *aliases: str, health: str | None = None
    ) -> DockerContainer:
        """Start `container` on the network; stop and remove it when the stack closes."""
        container.with_network(self.network).with_network_aliases(*(aliases or (key,)))
        container.with_name(f"mem0mcp-suite-{self.run_id}-{key}")
        if health is not None:
            strategy = ExecWaitStrategy(image_healthcheck(self.client, health))
            container.waiting_for(strategy.with_startup_timeout(STARTUP_TIMEOUT))
        try:
            container.start()
        except BaseException:
            container.stop()
            raise
        self.containers[key] = container
        self.exits.callback(self._stop, key, container)
        return container

    def _stop(self, key: str, container: DockerContainer) -> None:
        """Remove `container` once: a recreated one is removed early, not again at the end."""
        if self.containers.get(key) is container:
            del self.containers[key]
        if id(container) not in self.removed:
            self.removed.add(id(container))
            container.stop()

    def start_llm(self) -> None:
        # The bridge image carries uvicorn and starlette, all the fake needs; the tests folder
        # is mounted read-only so the fake runs from this checkout.
        container = (
            DockerContainer(self.images.bridge)
            .with_volume_mapping(str(ROOT / "tests"), "/src/tests", mode="ro")
            .with_env("PYTHONPATH", "/src")
            .with_command(["python", "-m", "tests.docker.fake_llm_server", "--port", "8080"])
            .waiting_for(LogMessageWaitStrategy("fake LLM listening").with_startup_timeout(60))
        )
        self._start("llm", container)

    def start_postgres(self) -> None:
        image = postgres_image()
        init = compose()["configs"]["postgres-init"]["content"]
        container = (
            DockerContainer(image)
            .with_env("POSTGRES_USER", POSTGRES_USER)
            .with_env("POSTGRES_PASSWORD", POSTGRES_PASSWORD)
            .with_env("POSTGRES_DB", "mem0")
            .with_volume_mapping(self.volume("pgdata"), "/var/lib/postgresql/data", mode="rw")
            .with_copy_into_container(init.encode(), "/docker-entrypoint-initdb.d/10-mem0-mcp.sql")
            # TCP answers only once the init scripts ran (they run on the socket alone).
            .waiting_for(
                ExecWaitStrategy(
                    ["pg_isready", "-q", "-h", "127.0.0.1", "-U", POSTGRES_USER, "-d", "mem0"]
                ).with_startup_timeout(STARTUP_TIMEOUT)
            )
        )
        self._start("postgres", container)

    def start_mem0_local(self) -> None:
        container = (
            DockerContainer(self.images.mem0_local)
            .with_volume_mapping(self.volume("mem0-local-data"), "/var/lib/mem0mcp/data", mode="rw")
            # Published so that a load run can read the store it checks.
            .with_exposed_ports(8000)
        )
        for name, value in {
            "MEM0_LOCAL_DATABASE_URL": _database_url("mem0_local"),
            "MEM0_LOCAL_API_KEY": API_KEY,
            "MEM0_LOCAL_RESET_TOKEN": RESET_TOKEN,
            "MEM0_LOCAL_LLM_BASE_URL": LLM_URL,
            "MEM0_LOCAL_LLM_MODEL": "fake-model",
            "MEM0_LOCAL_LLM_API_KEY": "fake-key",
            "MEM0_LOCAL_LLM_MAX_RETRIES": "0",
        }.items():
            container.with_env(name, value)
        self._start("mem0-local", container, health=self.images.mem0_local)

    def start_ranker(self, index: int) -> Replica:
        container = (
            DockerContainer(self.images.ranker)
            .with_env("RANKER_DATABASE_URL", _database_url("ranker"))
            .with_env("RANKER_REINFORCE_DEBOUNCE_SECONDS", "0")
            # Each replica caches mention rows for up to a second (by design: another replica's
            # write shows that late); the tests read counts right after writing them through
            # either replica, so they read the database itself.
            .with_env("RANKER_MENTION_CACHE_TTL_SECONDS", "0")
            .with_env("RANKER_METRICS_HOST", "0.0.0.0")
            .with_env("RANKER_METRICS_TOKEN", METRICS_TOKEN)
            .with_exposed_ports(9151)
        )
        self._start(f"ranker-{index}", container, "ranker", health=self.images.ranker)
        return Replica(f"ranker-{index}", container, 9151)

    def start_judge(self, index: int) -> Replica:
        container = (
            DockerContainer(self.images.judge)
            .with_env("JUDGE_LLM_BASE_URL", LLM_URL)
            .with_env("JUDGE_LLM_MODEL", "fake-model")
            .with_env("JUDGE_LLM_API_KEY", "fake-key")
            .with_env("JUDGE_METRICS_HOST", "0.0.0.0")
            .with_env("JUDGE_METRICS_TOKEN", METRICS_TOKEN)
            .with_exposed_ports(9152)
        )
        self._start(f"judge-{index}", container, "judge", health=self.images.judge)
        return Replica(f"judge-{index}", container, 9152)

    def start_bridge(self, key: str = "bridge", **extra_env: str) -> None:
        """A bridge under network name `key`; `extra_env` adds or overrides variables."""
        container = DockerContainer(self.images.bridge).with_exposed_ports(8001)
        for name, value in {
            "MEM0_API_URL": "http://mem0-local:8000",
            "MEM0_API_KEY": API_KEY,
            "MEM0_DEFAULT_USER_ID": f"suite-{self.run_id}",
            "MEM0_RANKER_ADDRESS": "ranker:50051",
            "MEM0_JUDGE_ADDRESS": "judge:50052",
            "MEM0_HTTP_BEARER_TOKEN": BEARER_TOKEN,
            "MEM0_RESET_TOKEN": RESET_TOKEN,
            # Generous on a shared 2-core machine, as the in-process stack's settings are.
            "MEM0_REWRITE_BUDGET_MS": "15000",
            "MEM0_RANKER_TIMEOUT_SECONDS": "15",
            **extra_env,
        }.items():
            container.with_env(name, value)
        self._start(key, container, health=self.images.bridge)

    def start_balancer(self, image: str, bridges: list[str]) -> None:
        """HAProxy in front of the bridges (network names), round robin without affinity;
        ready once it answers /healthz from the host through a replica."""
        config = haproxy_config(
            [f"{name}:8001" for name in bridges], bind=f"0.0.0.0:{BALANCER_PORT}", dns=DOCKER_DNS
        )
        container = (
            DockerContainer(image)
            .with_exposed_ports(BALANCER_PORT)
            .with_copy_into_container(config.encode(), "/etc/haproxy/haproxy.cfg")
        )
        self._start("balancer", container)
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while True:
            try:
                if httpx.get(f"{self.bridge_base}/healthz", timeout=5).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the load balancer never answered /healthz")
            time.sleep(0.5)

    def logs(self, key: str) -> str:
        """What a container wrote to stdout and stderr so far."""
        wrapped: Container = self.containers[key].get_wrapped_container()
        return bytes(wrapped.logs(stdout=True, stderr=True)).decode(errors="replace")

    def kill(self, key: str) -> None:
        """SIGKILL one container (it stays removed-on-close, like the others)."""
        self.containers[key].get_wrapped_container().kill()

    def recreate(self, key: str) -> None:
        """Remove a container (its named volumes stay) and start a new one in its place."""
        self._stop(key, self.containers[key])
        {
            "postgres": self.start_postgres,
            "mem0-local": self.start_mem0_local,
            "bridge": self.start_bridge,
        }[key]()

    def restart(self, key: str) -> None:
        """`docker restart` one container and wait until its image's healthcheck passes."""
        container = self.containers[key]
        wrapped: Container = container.get_wrapped_container()
        wrapped.restart(timeout=10)
        image = wrapped.image.tags[0] if wrapped.image and wrapped.image.tags else None
        if image is not None:
            ExecWaitStrategy(image_healthcheck(self.client, image)).with_startup_timeout(
                STARTUP_TIMEOUT
            ).wait_until_ready(container)

    def readiness(self) -> dict[str, Any]:
        """/readyz as the operator sees it (with the token, which shows each check)."""
        answer: dict[str, Any] = httpx.get(
            f"{self.bridge_base}/readyz",
            headers={"Authorization": f"Bearer {BEARER_TOKEN}"},
            timeout=30,
        ).json()
        return answer


@contextmanager
def running_stack(
    client: docker.DockerClient,
    built: Images,
    *,
    balancer: str | None = None,
    bridge_env: dict[str, str] | None = None,
) -> Iterator[Stack]:
    """The stack; with a `balancer` image, two bridge replicas (`bridge-1`, `bridge-2`, each
    with `bridge_env` on top of the usual settings) behind it instead of one bridge."""
    run_id = uuid.uuid4().hex[:8]
    with ExitStack() as exits:
        network = exits.enter_context(Network())
        stack = Stack(client, built, network, run_id, exits)
        exits.callback(
            _remove_volumes, client, [stack.volume("pgdata"), stack.volume("mem0-local-data")]
        )
        stack.start_llm()
        stack.start_postgres()
        stack.start_mem0_local()
        stack.rankers = [stack.start_ranker(1), stack.start_ranker(2)]
        stack.judges = [stack.start_judge(1), stack.start_judge(2)]
        if balancer is None:
            stack.start_bridge(**(bridge_env or {}))
        else:
            for key in BRIDGE_REPLICAS:
                stack.start_bridge(key, **(bridge_env or {}))
            stack.start_balancer(balancer, list(BRIDGE_REPLICAS))
        yield stack


def _remove_volumes(client: docker.DockerClient, names: list[str]) -> None:
    for name in names:
        try:
            client.volumes.get(name).remove(force=True)
        except docker.errors.NotFound:
            continue

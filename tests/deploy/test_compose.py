"""compose.yaml wires the services the way their code reads its settings, documents every
variable it needs, and never exposes the bridge beyond loopback without a bearer token."""

from __future__ import annotations

import re

import pytest

from tests.deploy._repo import (
    LOOPBACK,
    ROOT,
    SERVICES,
    Service,
    compose,
    compose_environment,
    compose_service,
    compose_text,
    compose_variables,
    env_example,
    env_names,
    env_prefix,
    published_ports,
    required_variables,
    with_defaults,
)

by_service = pytest.mark.parametrize("service", SERVICES, ids=lambda service: service.directory)


def test_compose_file_parses_into_services_and_volumes() -> None:
    document = compose()
    assert set(document["services"]) >= {"postgres", "mem0", "ranker", "judge", "bridge"}
    assert "pgdata" in document["volumes"]


@by_service
def test_each_service_is_built_from_its_dockerfile_as_itself(service: Service) -> None:
    build = compose_service(service.compose_name)["build"]
    context = (ROOT / build["context"]).resolve()
    assert context == ROOT, "the build context must be the repository root"
    assert (context / build["dockerfile"]).resolve() == service.dockerfile
    assert service.dockerfile.is_file()
    # The shared Dockerfile builds the service its SERVICE argument names.
    assert service.build_args.items() <= build.get("args", {}).items()


@by_service
def test_service_environment_names_are_read_by_its_settings(service: Service) -> None:
    settings = service.settings()
    names = {name.upper() for name in compose_environment(service.compose_name)}
    ours = {name for name in names if name.startswith(env_prefix(settings))}
    assert ours == names, f"{service.compose_name}: {sorted(names - ours)} lack the prefix"
    unknown = ours - env_names(settings)
    assert not unknown, f"{service.compose_name}: {sorted(unknown)} are read by no setting"


def test_every_interpolated_variable_is_documented_in_env_example() -> None:
    undocumented = compose_variables(compose_text()) - set(env_example())
    assert not undocumented, f"add to .env.example: {sorted(undocumented)}"


def test_env_example_documents_no_variable_compose_ignores() -> None:
    stale = set(env_example()) - compose_variables(compose_text())
    assert not stale, f"compose.yaml does not use: {sorted(stale)}"


def test_required_variables_ship_without_an_example_value() -> None:
    examples = env_example()
    filled = {name for name in required_variables(compose_text()) if examples.get(name)}
    assert not filled, f"secrets must be left empty in .env.example: {sorted(filled)}"


def test_compose_uses_only_braced_variables() -> None:
    # `$NAME` is easy to miss in review and cannot carry a default or a required message.
    assert not re.search(r"(?<!\$)\$[A-Za-z_]", compose_text().replace("$$", ""))


def test_bridge_is_published_on_loopback_only() -> None:
    ports = published_ports("bridge")
    assert ports, "the bridge must be published for MCP clients"
    assert {port.host_ip for port in ports} <= LOOPBACK
    assert {port.container_port for port in ports} == {"8001"}


def test_bridge_refuses_to_start_without_a_bearer_token() -> None:
    environment = compose_environment("bridge")
    assert with_defaults(environment["MEM0_HTTP_HOST"]) not in LOOPBACK
    token = environment["MEM0_HTTP_BEARER_TOKEN"]
    assert token.startswith("${MEM0_HTTP_BEARER_TOKEN:?"), "the token must be a required variable"


def test_only_the_bridge_is_published() -> None:
    published = {name for name, service in compose()["services"].items() if service.get("ports")}
    assert published == {"bridge"}


def test_bridge_talks_to_the_stack_by_service_name() -> None:
    environment = compose_environment("bridge")
    assert with_defaults(environment["MEM0_API_URL"]) == "http://mem0:8000"
    assert environment["MEM0_RANKER_ADDRESS"] == "ranker:50051"
    assert environment["MEM0_JUDGE_ADDRESS"] == "judge:50052"


def test_ranker_keeps_its_records_in_the_shared_postgres() -> None:
    url = with_defaults(compose_environment("ranker")["RANKER_DATABASE_URL"])
    assert url.startswith("postgresql://")
    assert "@postgres:5432/ranker" in url
    assert compose_service("ranker")["depends_on"]["postgres"]["condition"] == "service_healthy"


def test_postgres_init_creates_every_database_the_services_use() -> None:
    script = compose()["configs"]["postgres-init"]["content"]
    created = set(re.findall(r"CREATE DATABASE (\w+);", script))
    assert created == {"mem0_app", "ranker", "mem0_local"}
    assert compose_environment("mem0")["APP_DB_NAME"] == "mem0_app"
    assert with_defaults(compose_environment("mem0-local")["MEM0_LOCAL_DATABASE_URL"]).endswith(
        "@postgres:5432/mem0_local"
    )


def test_mem0_official_server_gets_its_required_secrets() -> None:
    environment = compose_environment("mem0")
    for name in ("JWT_SECRET", "ADMIN_API_KEY", "OPENAI_API_KEY", "POSTGRES_PASSWORD"):
        assert ":?" in environment[name], f"{name} must be required, not defaulted"
    assert environment["AUTH_DISABLED"] == "false"
    assert environment["MEM0_TELEMETRY"] == "false"


def test_mem0_local_is_an_opt_in_profile() -> None:
    assert compose_service("mem0-local")["profiles"] == ["local"]
    assert all(
        "profiles" not in compose_service(name) for name in ("postgres", "mem0", "ranker", "judge")
    )


def test_bridge_and_mem0_share_the_api_key() -> None:
    assert compose_environment("bridge")["MEM0_API_KEY"].startswith("${MEM0_API_KEY:?")
    assert compose_environment("mem0")["ADMIN_API_KEY"].startswith("${MEM0_API_KEY:?")
    assert compose_environment("mem0-local")["MEM0_LOCAL_API_KEY"].startswith("${MEM0_API_KEY:?")


def test_mem0_starts_only_after_its_migrations_ran() -> None:
    depends = compose_service("mem0")["depends_on"]
    assert depends["mem0-migrate"]["condition"] == "service_completed_successfully"
    migrate = compose_service("mem0-migrate")
    assert migrate["image"] == compose_service("mem0")["image"]
    assert "alembic upgrade head" in " ".join(migrate["command"])
    assert migrate["restart"] == "no"


def test_mem0_models_and_embedding_size_are_settable() -> None:
    environment = compose_environment("mem0")
    assert environment["MEM0_DEFAULT_LLM_MODEL"].startswith("${MEM0_LLM_MODEL:-")
    assert environment["MEM0_DEFAULT_EMBEDDER_MODEL"].startswith("${MEM0_EMBEDDER_MODEL:-")
    migrate = compose_environment("mem0-migrate")
    assert with_defaults(migrate["MEM0_EMBEDDING_DIMS"]) == "1536"
    command = " ".join(compose_service("mem0-migrate")["command"])
    assert "embedding_model_dims" in command
    assert "embedding_dims" in command


def test_mem0_healthcheck_asks_the_app_not_just_the_port() -> None:
    test = " ".join(compose_service("mem0")["healthcheck"]["test"])
    assert "urlopen('http://127.0.0.1:8000/" in test
    assert "create_connection" not in test


def test_images_that_cannot_be_pulled_everywhere_can_be_replaced() -> None:
    assert compose_service("postgres")["image"].startswith("${MEM0_MCP_POSTGRES_IMAGE:-")
    for service in SERVICES:
        arguments = compose_service(service.compose_name)["build"]["args"]
        assert arguments["PYTHON_IMAGE"].startswith("${MEM0_MCP_PYTHON_IMAGE:-")
    local = compose_service("mem0-local")["build"]["args"]
    assert {"TORCH_WHEELS_IMAGE", "TORCH_INDEX_URL"} <= set(local)

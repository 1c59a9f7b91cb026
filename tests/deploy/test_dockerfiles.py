"""Each service's image runs that service's own console script, as a non-root user, on the
documented ports, configured only through variables its settings class really reads.

The ranker, the judge and the bridge share one Dockerfile (services/Dockerfile) whose SERVICE
argument picks the stage an image is; each test reads the image a service's build arguments make.
"""

from __future__ import annotations

import shlex

import pytest

from tests.deploy._repo import (
    ROOT,
    SERVICES,
    SHARED_DOCKERFILE,
    Instruction,
    Service,
    dockerfile_args,
    dockerfile_env,
    dockerfile_exposed_ports,
    dockerfile_instructions,
    env_names,
    env_prefix,
    exec_form,
    expand,
    field_default,
    global_args,
    image_instructions,
    stage_name,
    stages,
)

# The default ports the design documents (issue "Foundation": mem0-local 8000, ranker 50051 and
# judge 50052 with metrics on 9151 and 9152, bridge 8001).
DOCUMENTED_PORTS = {
    "ranker": {50051, 9151},
    "judge": {50052, 9152},
    "mem0-local": {8000},
    "bridge": {8001},
}

by_directory = pytest.mark.parametrize("service", SERVICES, ids=lambda service: service.directory)


def _last(instructions: list[Instruction], keyword: str) -> Instruction:
    matches = [item for item in instructions if item.keyword == keyword]
    assert matches, f"no {keyword} instruction"
    return matches[-1]


@by_directory
def test_cmd_runs_a_console_script_the_service_declares(service: Service) -> None:
    command = exec_form(_last(image_instructions(service), "CMD").arguments)
    assert command[0] in service.scripts(), (
        f"{service.dockerfile.relative_to(ROOT)} runs {command[0]!r}, but "
        f"services/{service.directory}/pyproject.toml declares {sorted(service.scripts())}"
    )


@by_directory
def test_cmd_runs_the_service_named_console_script(service: Service) -> None:
    assert exec_form(_last(image_instructions(service), "CMD").arguments)[0] == service.script


@by_directory
def test_settings_defaults_are_the_documented_ports(service: Service) -> None:
    settings = service.settings()
    defaults = {field_default(settings, name) for name in service.port_fields}
    assert defaults == DOCUMENTED_PORTS[service.directory]


@by_directory
def test_exposed_ports_are_the_documented_ports(service: Service) -> None:
    assert (
        dockerfile_exposed_ports(image_instructions(service)) == DOCUMENTED_PORTS[service.directory]
    )


@by_directory
def test_env_sets_only_variables_the_settings_read(service: Service) -> None:
    settings = service.settings()
    prefix = env_prefix(settings)
    ours = {
        name
        for name in dockerfile_env(image_instructions(service))
        if name.upper().startswith(prefix)
    }
    unknown = ours - env_names(settings)
    assert not unknown, f"{service.directory}: {sorted(unknown)} are read by no setting"


@by_directory
def test_env_keeps_the_documented_port_values(service: Service) -> None:
    settings = service.settings()
    environment = {
        name.upper(): value for name, value in dockerfile_env(image_instructions(service)).items()
    }
    for field_name in service.port_fields:
        variable = env_prefix(settings) + field_name.upper()
        if variable in environment:
            assert int(environment[variable]) == field_default(settings, field_name)


@by_directory
def test_container_binds_beyond_its_own_loopback(service: Service) -> None:
    environment = {
        name.upper(): value for name, value in dockerfile_env(image_instructions(service)).items()
    }
    hosts = {name: value for name, value in environment.items() if name.endswith("HOST")}
    assert hosts, f"{service.directory}: no *_HOST variable set; the default binds 127.0.0.1"
    # A container's port must be reachable from the other containers and the host.
    assert set(hosts.values()) == {"0.0.0.0"}


@by_directory
def test_image_runs_as_a_non_root_user(service: Service) -> None:
    user = _last(image_instructions(service), "USER").arguments.split(":", 1)[0]
    assert user not in {"root", "0"}


@by_directory
def test_image_declares_a_healthcheck_in_exec_form(service: Service) -> None:
    healthcheck = _last(image_instructions(service), "HEALTHCHECK").arguments
    command = healthcheck.split(" CMD ", 1)[1] if " CMD " in healthcheck else healthcheck[4:]
    assert exec_form(command)[0] == "python"


@by_directory
def test_base_image_is_python_3_11_slim(service: Service) -> None:
    instructions = dockerfile_instructions(service.dockerfile)
    # An argument's default may name another argument (TORCH_WHEELS_IMAGE=${PYTHON_IMAGE}).
    arguments = global_args(instructions, service.build_args)
    every = stages(instructions)
    names = {stage_name(stage) for stage in every}
    for stage in every:
        image = expand(stage[0].arguments.split()[0], arguments)
        assert image in names or image == "python:3.11-slim", stage[0]


@by_directory
def test_every_copy_source_exists_in_the_build_context(service: Service) -> None:
    arguments = service.build_args
    for item in dockerfile_instructions(service.dockerfile):
        if item.keyword != "COPY" or "--from=" in item.arguments:
            continue
        *sources, _destination = shlex.split(expand(item.arguments, arguments))
        for source in sources:
            assert (ROOT / source).exists(), f"{service.directory}: COPY {source} is missing"


@by_directory
def test_installs_are_pinned_by_the_constraints_file(service: Service) -> None:
    for item in dockerfile_instructions(service.dockerfile):
        if item.keyword == "RUN" and " pip install " in f" {item.arguments} ":
            if "pip==" in item.arguments and "-c" not in item.arguments.split():
                continue  # the installer itself, pinned by version
            assert "-c constraints.txt" in item.arguments, item.arguments


@by_directory
def test_dockerfile_needs_no_frontend_from_a_registry(service: Service) -> None:
    # A `# syntax=` line makes BuildKit pull that frontend image before building anything.
    first = service.dockerfile.read_text().splitlines()[0]
    assert not first.lower().replace(" ", "").startswith("#syntax="), first


def test_the_shared_dockerfile_builds_only_the_service_named() -> None:
    instructions = dockerfile_instructions(SHARED_DOCKERFILE)
    # No default: a build that names no service fails rather than building one of them.
    assert global_args(instructions, {})["SERVICE"] == ""
    assert stages(instructions)[-1][0].arguments == "${SERVICE}"
    sharing = {s.directory for s in SERVICES if s.dockerfile == SHARED_DOCKERFILE}
    assert sharing <= {stage_name(stage) for stage in stages(instructions)}
    installs = [
        i.arguments for i in instructions if i.keyword == "RUN" and "./services/" in i.arguments
    ]
    assert installs == [
        "pip install -c constraints.txt ./protos ./services/common ./services/${SERVICE}"
    ]


def test_mem0_local_takes_torch_from_build_arguments() -> None:
    service = next(s for s in SERVICES if s.directory == "mem0-local")
    instructions = dockerfile_instructions(service.dockerfile)
    first_from = next(n for n, item in enumerate(instructions) if item.keyword == "FROM")
    arguments = dockerfile_args(instructions[:first_from])  # the global defaults
    assert arguments["TORCH_WHEELS_IMAGE"] == "${PYTHON_IMAGE}"
    assert arguments["TORCH_INDEX_URL"] == "https://download.pytorch.org/whl/cpu"
    torch = [
        " ".join(i.arguments.split())
        for i in instructions
        if i.keyword == "RUN" and "torch==" in i.arguments
    ]
    assert torch == [
        "pip install -c constraints.txt --find-links /wheels "
        '${TORCH_INDEX_URL:+--extra-index-url "$TORCH_INDEX_URL"} "torch==2.13.0+cpu"'
    ]


def test_mem0_local_image_owns_its_data_directory() -> None:
    service = next(s for s in SERVICES if s.directory == "mem0-local")
    image = image_instructions(service)
    data_dir = dockerfile_env(image)["MEM0_LOCAL_DATA_DIR"]
    created = [i.arguments for i in image if i.keyword == "RUN" and data_dir in i.arguments]
    assert created
    assert f"install -d -o app -g app {data_dir}" in created[0]
    assert any(i.keyword == "VOLUME" and data_dir in i.arguments for i in image)

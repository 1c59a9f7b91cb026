"""What the deployment files say, read the way Docker and Compose read them.

The deploy tests check compose.yaml, the Dockerfiles and the skill against the code they deploy
(console scripts, settings classes), so that a renamed variable or script fails here rather than
in a container that never becomes healthy.
"""

from __future__ import annotations

import copy
import functools
import importlib
import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import AliasChoices
from pydantic_settings import BaseSettings

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = ROOT / "compose.yaml"
ENV_EXAMPLE = ROOT / ".env.example"
SKILL_FILE = ROOT / "skills" / "shared-memory" / "SKILL.md"
#: The Dockerfile the services share; its SERVICE argument picks the one an image runs.
SHARED_DOCKERFILE = ROOT / "services" / "Dockerfile"
#: The services built from a Dockerfile of their own, in their folder, instead.
OWN_DOCKERFILES = frozenset({"mem0-local"})

LOOPBACK = frozenset({"127.0.0.1", "::1", "[::1]", "localhost"})

# `${NAME`, `${NAME:-...}`, `${NAME:?...}`; `$$` is Compose's escape for a literal `$`.
_COMPOSE_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)")
_REQUIRED_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*):\?")


@dataclass(frozen=True)
class Service:
    """One of our services: its folder, compose name, console script and settings class."""

    directory: str
    compose_name: str
    script: str
    package: str
    settings_class: str
    #: Settings fields holding the ports the service listens on (their defaults are documented).
    port_fields: tuple[str, ...]

    @property
    def path(self) -> Path:
        return ROOT / "services" / self.directory

    @property
    def dockerfile(self) -> Path:
        return self.path / "Dockerfile" if self.directory in OWN_DOCKERFILES else SHARED_DOCKERFILE

    @property
    def build_args(self) -> dict[str, str]:
        """The build arguments that make `dockerfile` build this service's image."""
        return {} if self.directory in OWN_DOCKERFILES else {"SERVICE": self.directory}

    def settings(self) -> type[BaseSettings]:
        settings: type[BaseSettings] = getattr(
            importlib.import_module(self.package), self.settings_class
        )
        return settings

    def scripts(self) -> dict[str, str]:
        project = tomllib.loads((self.path / "pyproject.toml").read_text())["project"]
        scripts: dict[str, str] = project.get("scripts", {})
        return scripts


SERVICES = (
    Service(
        "ranker", "ranker", "mem0-ranker", "mem0_ranker", "RankerSettings", ("port", "metrics_port")
    ),
    Service(
        "judge", "judge", "mem0-judge", "mem0_judge", "JudgeSettings", ("port", "metrics_port")
    ),
    Service("mem0-local", "mem0-local", "mem0-local", "mem0_local", "Mem0LocalSettings", ("port",)),
    Service("bridge", "bridge", "mem0-bridge", "mem0_bridge", "BridgeSettings", ("http_port",)),
)


def env_names(settings: type[BaseSettings]) -> frozenset[str]:
    """Every environment variable name the settings class reads (upper case)."""
    prefix = str(settings.model_config.get("env_prefix", ""))
    names: set[str] = set()
    for field_name, info in settings.model_fields.items():
        alias = info.validation_alias
        if isinstance(alias, AliasChoices):
            names.update(choice for choice in alias.choices if isinstance(choice, str))
        elif isinstance(alias, str):
            names.add(alias)
        else:
            names.add(prefix + field_name)
    return frozenset(name.upper() for name in names)


def env_prefix(settings: type[BaseSettings]) -> str:
    return str(settings.model_config.get("env_prefix", "")).upper()


def field_default(settings: type[BaseSettings], field_name: str) -> Any:
    return settings.model_fields[field_name].default


# ---------------------------------------------------------------------------------------- compose


def compose_text() -> str:
    return COMPOSE_FILE.read_text()


@functools.cache
def _compose_document() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(compose_text())
    return document


def compose() -> dict[str, Any]:
    """compose.yaml as data: parsed once (PyYAML's parser took ~20 ms a time, 40 times a run),
    handed out as a copy so that no test sees what another changed."""
    return copy.deepcopy(_compose_document())


def compose_service(name: str) -> dict[str, Any]:
    service: dict[str, Any] = compose()["services"][name]
    return service


def compose_environment(name: str) -> dict[str, str]:
    """A service's `environment`, in either of Compose's two spellings (map or KEY=value list)."""
    environment = compose_service(name).get("environment", {})
    if isinstance(environment, list):
        return dict(entry.split("=", 1) if "=" in entry else (entry, "") for entry in environment)
    return {str(key): str(value) for key, value in environment.items()}


def compose_variables(text: str) -> frozenset[str]:
    """Names of the variables Compose interpolates in `text` (nested defaults included)."""
    return frozenset(_COMPOSE_VARIABLE.findall(text.replace("$$", "")))


def required_variables(text: str) -> frozenset[str]:
    """Variables written `${NAME:?message}`: Compose refuses to start without them."""
    return frozenset(_REQUIRED_VARIABLE.findall(text.replace("$$", "")))


@dataclass(frozen=True)
class PublishedPort:
    host_ip: str
    container_port: str


_INNERMOST_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?[-?]([^{}]*))?\}")


def with_defaults(value: str) -> str:
    """`value` as Compose interpolates it when no variable is set and defaults apply."""
    while True:
        replaced = _INNERMOST_VARIABLE.sub(lambda match: match.group(2) or "", value)
        if replaced == value:
            return value
        value = replaced


def published_ports(name: str) -> list[PublishedPort]:
    """The `ports` of a service, short (`[ip:]host:container`) or long (`host_ip:`) syntax."""
    ports: list[PublishedPort] = []
    for entry in compose_service(name).get("ports", []):
        if isinstance(entry, dict):
            ports.append(PublishedPort(str(entry.get("host_ip", "")), str(entry["target"])))
            continue
        spec = with_defaults(str(entry)).split("/", 1)[0]
        if spec.startswith("["):
            ip, _, rest = spec[1:].partition("]")
            ports.append(PublishedPort(ip, rest.rsplit(":", 1)[-1]))
            continue
        parts = spec.split(":")
        ports.append(PublishedPort(parts[0] if len(parts) == 3 else "", parts[-1]))
    return ports


def env_example() -> dict[str, str]:
    """`NAME=value` lines of .env.example (comments and blank lines skipped)."""
    entries: dict[str, str] = {}
    for line in ENV_EXAMPLE.read_text().splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        name, separator, value = stripped.partition("=")
        if not separator:
            raise ValueError(f".env.example: not a NAME=value line: {line!r}")
        entries[name.strip()] = value.strip()
    return entries


# ------------------------------------------------------------------------------------- Dockerfile


@dataclass(frozen=True)
class Instruction:
    keyword: str
    arguments: str


def dockerfile_instructions(path: Path) -> list[Instruction]:
    """Instructions, continuation lines joined and comments dropped, as the builder sees them."""
    instructions: list[Instruction] = []
    pending = ""
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        full = (pending + line).strip()
        pending = ""
        keyword, _, arguments = full.partition(" ")
        instructions.append(Instruction(keyword.upper(), arguments.strip()))
    return instructions


def stages(instructions: list[Instruction]) -> list[list[Instruction]]:
    """The instructions of each stage, its FROM first (the global ARGs before them left out)."""
    starts = [index for index, item in enumerate(instructions) if item.keyword == "FROM"]
    return [instructions[start:end] for start, end in zip(starts, [*starts[1:], None], strict=True)]


def stage_name(stage: list[Instruction]) -> str | None:
    """The name a stage is given (`FROM image AS name`), None when it has none."""
    words = stage[0].arguments.split()
    return words[2] if len(words) == 3 and words[1].upper() == "AS" else None


_ARGUMENT = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def expand(text: str, arguments: dict[str, str]) -> str:
    """`text` with `$NAME` and `${NAME}` replaced by the arguments' values (unknown ones left)."""
    return _ARGUMENT.sub(lambda match: arguments.get(match[1] or match[2], match[0]), text)


def global_args(instructions: list[Instruction], given: dict[str, str]) -> dict[str, str]:
    """The ARGs before the first FROM, as FROM lines see them in a build passed `given`."""
    first = next(n for n, item in enumerate(instructions) if item.keyword == "FROM")
    arguments: dict[str, str] = {}
    for name, default in dockerfile_args(instructions[:first]).items():
        arguments[name] = given.get(name, expand(default, arguments))
    return arguments


def image_instructions(service: Service) -> list[Instruction]:
    """The instructions a service's image is made of: its Dockerfile's last stage built with
    the service's build arguments, after those of the stage it stands on when its FROM names
    one (and so on), as Docker applies them (a later CMD, USER, ... wins)."""
    instructions = dockerfile_instructions(service.dockerfile)
    arguments = global_args(instructions, service.build_args)
    every = stages(instructions)
    named = {stage_name(stage): stage for stage in every}
    chain = [every[-1]]
    while (base := expand(chain[0][0].arguments.split()[0], arguments)) in named:
        chain.insert(0, named[base])
    return [item for stage in chain for item in stage]


def exec_form(arguments: str) -> list[str]:
    """A JSON-array (exec form) argument list; shell form is refused, it would lose signals."""
    value = json.loads(arguments)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"not an exec-form list: {arguments}")
    return value


def dockerfile_env(instructions: list[Instruction]) -> dict[str, str]:
    """`ENV key=value ...` pairs of the given instructions (later ones win, as in Docker)."""
    environment: dict[str, str] = {}
    for item in instructions:
        if item.keyword != "ENV":
            continue
        for pair in item.arguments.split():
            name, separator, value = pair.partition("=")
            if not separator:
                raise ValueError(f"ENV must use key=value pairs: {item.arguments}")
            environment[name] = value.strip('"')
    return environment


def dockerfile_args(instructions: list[Instruction]) -> dict[str, str]:
    defaults: dict[str, str] = {}
    for item in instructions:
        if item.keyword == "ARG":
            name, _, value = item.arguments.partition("=")
            defaults[name] = value
    return defaults


def dockerfile_exposed_ports(instructions: list[Instruction]) -> frozenset[int]:
    return frozenset(
        int(port.split("/", 1)[0])
        for item in instructions
        if item.keyword == "EXPOSE"
        for port in item.arguments.split()
    )


# ------------------------------------------------------------------------------------------ skill


def skill_front_matter_and_body() -> tuple[dict[str, Any], str]:
    """SKILL.md's YAML front matter (between the leading `---` lines) and the body after it."""
    text = SKILL_FILE.read_text()
    if not text.startswith("---\n"):
        raise ValueError("SKILL.md must start with a `---` front matter line")
    front, separator, body = text[4:].partition("\n---\n")
    if not separator:
        raise ValueError("SKILL.md front matter has no closing `---` line")
    metadata = yaml.safe_load(front)
    if not isinstance(metadata, dict):
        raise TypeError("SKILL.md front matter is not a mapping")
    return metadata, body

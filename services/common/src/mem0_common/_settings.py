"""Settings every service shares: one typed object per service, read once from the environment."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Final, Self

from pydantic import Field, PositiveFloat, SecretStr, field_validator, model_validator
from pydantic.config import JsonDict
from pydantic_settings import BaseSettings, SettingsConfigDict

from mem0_common._metrics import is_loopback

#: Marks a setting whose default suits nearly every deployment (a port, a timeout, a pool or
#: cache size): `Field(..., json_schema_extra=RARELY_SET)`. The README lists such settings apart
#: from the few an operator does set, so those stay easy to find.
RARELY_SET: Final[JsonDict] = {"rarely_set": True}


def rarely_set_field(default: Any, description: str) -> Any:
    """A setting whose default suits nearly every deployment (see `RARELY_SET`)."""
    return Field(default=default, description=description, json_schema_extra=RARELY_SET)


def port_field(default: int, description: str, *, lowest: int = 0) -> Any:
    """A port to listen on, rarely set: 0 lets the system pick a free one (`lowest=-1` lets
    -1 turn the listener off)."""
    return Field(
        default=default,
        ge=lowest,
        le=65535,
        description=description,
        json_schema_extra=RARELY_SET,
    )


def grpc_port_field(default: int) -> Any:
    """A gRPC service's port setting, `default` being the service's own port."""
    return port_field(default, "gRPC port; 0 picks a free one.")


def metrics_port_field(default: int) -> Any:
    """A gRPC service's metrics port setting, `default` being the service's own port."""
    description = "Prometheus metrics HTTP port; 0 picks a free one, -1 turns metrics off."
    return port_field(default, description, lowest=-1)


def listen_host_field(server: str) -> Any:
    """The address `server` binds: loopback unless an operator opens it up."""
    return rarely_set_field("127.0.0.1", f"Address the {server} binds.")


def test_clock_field(reads: str) -> Any:
    """A service's TEST ONLY clock file (`mem0_common.clock_for`); `reads` says what the
    service takes from it."""
    return Field(
        default=None,
        description=(
            f"TEST ONLY, never in production: a file holding epoch seconds {reads} (benchmarks "
            "replay months in minutes)."
        ),
    )


class TuningSettings(BaseSettings):
    """Base of a service's tuning constants: values the benchmarks chose, not operators.

    A service's settings class inherits its tuning class (`class RankerSettings(
    GrpcServiceSettings, RankerTuning)`), so each constant is still read from the environment
    (benchmarks set them for the processes they start) and read as `settings.<field>` like any
    other setting; only the documentation differs: `mem0_common.env_table` lists these fields in
    bench/README.md's tuning table, not in the README's. Subclasses set `env_prefix`.
    """

    model_config = SettingsConfigDict(extra="ignore", frozen=True)


class ServiceSettings(BaseSettings):
    """Base for every service's settings; subclasses set `env_prefix` in their `model_config`.

    Unknown variables are ignored (the environment is shared with other programs), but every
    field a service reads is declared here, in its subclass or in the subclass's tuning class,
    which is what keeps the variable tables complete: `mem0_common.env_table` renders them from
    these classes.
    """

    model_config = SettingsConfigDict(extra="ignore", frozen=True)

    #: Name shown in the variable tables for the service this class configures.
    service_name: ClassVar[str] = "service"

    log_level: str = rarely_set_field("INFO", "Python log level for this service.")

    @field_validator("*")
    @classmethod
    def _expand_home(cls, value: object) -> object:
        """`~` in any path setting means the service user's home, as in a shell."""
        return value.expanduser() if isinstance(value, Path) else value


class GrpcTuning(TuningSettings):
    """How long a gRPC service's stop waits for in-flight calls: a constant, not for operators
    (its 10 s matches Docker's default stop timeout; Kubernetes allows 30 s)."""

    grace_seconds: PositiveFloat = Field(
        default=10.0,
        description="On SIGTERM/SIGINT, seconds in-flight calls may take to finish before cancel.",
    )


class GrpcServiceSettings(ServiceSettings, GrpcTuning):
    """Settings of a gRPC service built on `mem0_common.GrpcServer`, `GrpcTuning`'s too."""

    host: str = listen_host_field("gRPC server")
    port: int = grpc_port_field(0)
    metrics_port: int = metrics_port_field(-1)
    metrics_host: str = rarely_set_field(
        "127.0.0.1",
        "Address the metrics endpoint binds (not the gRPC one): loopback by default; any other "
        "address needs the metrics token.",
    )
    metrics_token: SecretStr | None = rarely_set_field(
        None,
        "When set, `/metrics` answers only requests sending `Authorization: Bearer <token>` (401 "
        "otherwise); required when the metrics address is not loopback.",
    )

    @field_validator("metrics_token")
    @classmethod
    def _empty_token_is_unset(cls, value: SecretStr | None) -> SecretStr | None:
        """`..._METRICS_TOKEN=` (as in an env file) means no token, never an empty one."""
        return value if value is not None and value.get_secret_value() else None

    @model_validator(mode="after")
    def _metrics_private(self) -> Self:
        """Metrics reachable from other hosts must be behind a token: refuse to start otherwise."""
        if (
            self.metrics_port >= 0
            and self.metrics_token is None
            and not is_loopback(self.metrics_host)
        ):
            prefix = str(self.model_config.get("env_prefix", "")).upper()
            raise ValueError(
                f"metrics on {self.metrics_host} would be open to every host that reaches it: "
                f"set {prefix}METRICS_TOKEN, or bind {prefix}METRICS_HOST to loopback "
                f"(127.0.0.1)"
            )
        return self

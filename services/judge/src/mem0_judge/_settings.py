"""The judge's settings: where the LLM is, how hard to lean on it, and what input is accepted."""

from __future__ import annotations

from typing import ClassVar

from pydantic import (
    AliasChoices,
    Field,
    FilePath,
    NonNegativeInt,
    PositiveFloat,
    field_validator,
)
from pydantic_settings import SettingsConfigDict

from mem0_common import (
    RARELY_SET,
    GrpcServiceSettings,
    TuningSettings,
    grpc_port_field,
    metrics_port_field,
    rarely_set_field,
)
from mem0_judge._llm import ResponseFormat


class JudgeTuning(TuningSettings):
    """How hard the judge leans on its LLM and how long it keeps rewrites: not for operators.

    Retries, the failure count that marks the LLM degraded and the rewrite cache are limits
    the benchmarks run at their defaults (bench/README.md); still read from `JUDGE_*`.
    """

    model_config = SettingsConfigDict(env_prefix="JUDGE_", extra="ignore", frozen=True)

    llm_max_retries: int = Field(
        default=2,
        ge=0,
        le=10,
        description="Retries after a 429, a 5xx or a connection failure, with jittered "
        "exponential backoff (a `Retry-After` header is honoured).",
    )
    llm_degraded_after_failures: int = Field(
        default=3,
        ge=1,
        description="Consecutive failed LLM calls after which health reports "
        "`mem0mcp.judge.v1.JudgeService.llm` NOT_SERVING (degraded); the next success "
        "reports it SERVING again.",
    )
    cache_size: NonNegativeInt = Field(
        default=1024,
        description="Rewrites kept in the LRU cache; 0 disables caching.",
    )
    cache_ttl_seconds: PositiveFloat = Field(
        default=3600.0,
        description="How long a cached rewrite is reused.",
    )


class JudgeSettings(GrpcServiceSettings, JudgeTuning):
    """Read once from `JUDGE_*` variables at start and passed down, `JudgeTuning`'s limits too.

    With `llm_base_url` or `llm_model` unset the judge still starts, but reports itself NOT_SERVING
    and answers every call UNAVAILABLE at once: there is deliberately no similarity-threshold
    fallback, because a threshold cannot tell a restatement from a topically close fact.
    """

    model_config = SettingsConfigDict(
        env_prefix="JUDGE_", extra="ignore", frozen=True, populate_by_name=True
    )
    service_name: ClassVar[str] = "judge"

    port: int = grpc_port_field(50052)
    metrics_port: int = metrics_port_field(9152)
    # MEM0_REWRITE_* configured the query rewriter's LLM in older deployments; the judge rewrites
    # queries now, so those names are accepted as aliases of its LLM settings.
    llm_base_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("JUDGE_LLM_BASE_URL", "MEM0_REWRITE_BASE_URL"),
        description="OpenAI-compatible base URL (ending in `/v1`) of the chat endpoint that "
        "judges; judging is unavailable until it and `JUDGE_LLM_MODEL` are set.",
    )
    llm_model: str | None = Field(
        default=None,
        validation_alias=AliasChoices("JUDGE_LLM_MODEL", "MEM0_REWRITE_MODEL"),
        description="Chat model id sent to the LLM.",
    )
    llm_api_key: str | None = Field(
        default=None,
        validation_alias=AliasChoices("JUDGE_LLM_API_KEY", "MEM0_REWRITE_API_KEY"),
        description="Optional API key, sent as `Authorization: Bearer`.",
    )
    llm_ca_bundle: FilePath | None = rarely_set_field(
        None, "Optional PEM CA bundle for an LLM endpoint with a private CA; system CAs otherwise."
    )
    llm_timeout_seconds: PositiveFloat = rarely_set_field(
        30.0,
        "Per-attempt timeout of one LLM HTTP call; the caller's gRPC deadline, when "
        "shorter, wins. A hosted model answers in seconds; a model on a few CPU cores can take "
        "ten seconds or more a verdict, so give a local model 60 (and the bridge's "
        "`MEM0_JUDGE_TIMEOUT_SECONDS` as much).",
    )
    llm_max_concurrency: int = Field(
        default=8,
        ge=1,
        description="LLM calls in flight at once; further calls queue (within their deadline), "
        "so a burst of agents cannot trip the provider's rate limit.",
        json_schema_extra=RARELY_SET,
    )
    llm_response_format: ResponseFormat = Field(
        default="json_object",
        description="How to ask for JSON: `json_object` (OpenAI JSON mode), "
        "`json_object_schema` (`json_object` with a `schema`: llama.cpp and llama-cpp-python "
        "turn it into a grammar), `json_schema` (OpenAI structured outputs, vLLM, Ollama) or "
        "`none` for endpoints that reject the field; answers are validated either way.",
    )

    @field_validator("llm_base_url", "llm_model", "llm_api_key", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("llm_base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError(f"must be an http:// or https:// URL ending in /v1, not {value!r}")
        return value

    @property
    def llm_configured(self) -> bool:
        return bool(self.llm_base_url) and bool(self.llm_model)

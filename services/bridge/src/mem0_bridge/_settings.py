"""The bridge's settings: one typed object read once from `MEM0_*` variables and passed down.

`BridgeSettings` holds what an operator sets; it inherits `BridgeTuning`, the retrieval constants
the benchmarks chose, so both are read alike (`settings.<field>`). Older names (`MEM0_URL`,
`MEM0_USER_ID`, `MCP_TRANSPORT`, `REINFORCEMENT_PREFILTER_THRESHOLD`) are accepted as aliases, so
a deployment written with them keeps working.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal

from mcp.server.request_state import RequestStateSecurity
from pydantic import AliasChoices, Field, NonNegativeInt, PositiveFloat, field_validator
from pydantic_settings import SettingsConfigDict

from mem0_common import ServiceSettings, TuningSettings, port_field, rarely_set_field
from mem0mcp.contract import MAX_COMPARE_CANDIDATES

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
#: The SDK's floor for a request-state secret (AES-256 keys are derived from it).
MIN_STATE_KEY_LENGTH = 32


def _split(value: str) -> list[str]:
    """A comma list's non-empty items, stripped."""
    return [part.strip() for part in value.split(",") if part.strip()]


class BridgeTuning(TuningSettings):
    """Retrieval and reconcile constants, the time budgets of adds and searches and the
    deadlines of mem0 and ranker calls: not for operators.

    The constants' defaults were chosen on the retrieval benchmark (`make eval`, `make
    eval-floor`, `make eval-sweep`), the budgets on the load benchmark (`make bench-load`);
    bench/README.md gives the findings.
    """

    model_config = SettingsConfigDict(
        env_prefix="MEM0_", extra="ignore", frozen=True, populate_by_name=True
    )

    search_overfetch: int = Field(
        default=2,
        ge=1,
        le=20,
        description="Search fetches limit x this many hits from mem0 before reranking, so the "
        "ranker can lift a hit mem0 placed below the limit.",
    )
    reinforcement_prefilter_threshold: float = Field(
        default=0.3,
        ge=0,
        le=1,
        validation_alias=AliasChoices(
            "MEM0_REINFORCEMENT_PREFILTER_THRESHOLD", "REINFORCEMENT_PREFILTER_THRESHOLD"
        ),
        description="Semantic similarity (mem0's cosine part of the score) a stored memory "
        "needs to be shown to the judge on add: a cheap filter that spares the judge memories "
        "too far from the new fact to be the same one.",
    )
    verdict_similarity_floor: float = Field(
        default=0.92,
        ge=0,
        le=1,
        description="Semantic similarity (mem0's cosine part of the score) a stored memory "
        "needs for the judge's SAME on it to be acted on (the new statement folded into it, or "
        "an older memory made current again), unless the two statements differ only in their "
        "values; otherwise the new fact is stored as its own memory, a wording of the one it "
        "restates, since a wrong SAME on two different facts would hide one of them.",
    )
    supersede_similarity_floor: float = Field(
        default=0.7,
        ge=0,
        le=1,
        description="Semantic similarity from which the judge's SUPERSEDES on a current memory "
        "is acted on as given; under it (unless the two statements differ only in their values) "
        "the judge is asked again the other way round, and only a second SUPERSEDES counts. The "
        "memory is then marked superseded, never changed or deleted, so a wrong verdict costs a "
        "demotion that restating or memory_reinstate undoes.",
    )
    confirmed_supersede_floor: float = Field(
        default=0.4,
        ge=0,
        le=1,
        description="Semantic similarity a current memory needs for a SUPERSEDES under "
        "MEM0_SUPERSEDE_SIMILARITY_FLOOR to be asked again the other way round (and acted on "
        "when the judge says it again): changes are often worded far from the old value. 1 "
        "acts on no SUPERSEDES under the floor: for a judge whose mistakes repeat both ways "
        "round, as a weak model's do.",
    )
    echo_similarity_floor: float = Field(
        default=0.84,
        ge=0,
        le=1,
        description="Semantic similarity a stored memory needs for a SAME verdict the floor above "
        "kept apart to count as a mention of it (a restatement in other words). Below it the "
        "SAME is ignored: a pair that far apart is often the same value of another subject, "
        "and counting it would lift another fact's memory.",
    )
    related_similarity_floor: float = Field(
        default=0.7,
        ge=0,
        le=1,
        description="Semantic similarity at which a new memory is stored as related to a close "
        "older one (its metadata `related_ids`): the ranker lets recency order only related "
        "memories, which may be versions of one fact. Lower relates look-alike facts; higher "
        "misses changes said in other words.",
    )
    timeout_seconds: PositiveFloat = Field(
        default=10.0,
        description="Timeout of every mem0 request except inferring adds.",
    )
    ranker_timeout_seconds: PositiveFloat = Field(
        default=2.0,
        description="Deadline of each ranker call; past it the bridge degrades.",
    )
    verdict_budget_ms: NonNegativeInt = Field(
        default=300,
        description="How long an add waits for the judge's verdicts; past it, or at once while "
        "the judge's latest verdicts took longer, the fact is stored and judged in the "
        "background (the reconciler). 300 ms lets a judge on a loaded machine answer (at 100 "
        "ms, half the adds of a 16-client load run were left to the reconciler) and holds no "
        "add for a hosted LLM's 0.3-2 s. 0: every add is judged in the background.",
    )
    rewrite_budget_ms: NonNegativeInt = Field(
        default=1500,
        description="Time budget of the query rewrite plus its search; past it, raw results only.",
    )
    rewrite_wait_ms: NonNegativeInt = Field(
        default=0,
        description="How long a search waits for the rewrite of a question none is kept for "
        "yet (it is asked for in the background either way, and searched from the question's "
        "next search on). 0: no search waits on the LLM. The recall benchmark sets it to the "
        "rewrite budget, to measure what the rewrite itself does.",
    )
    scope_lease_seconds: float = Field(
        default=10.0,
        gt=0,
        le=3600,
        description="How long a scope's lease in the ranker lasts (renewed at half of it while "
        "a write runs): bridge replicas order a scope's writes through it, and a replica that "
        "dies holding it blocks the scope's writes elsewhere at most this long.",
    )
    scope_lease_wait_seconds: float = Field(
        default=30.0,
        ge=0,
        description="Longest a write waits for its scope's lease while another replica holds it; "
        "past it the write goes ahead unordered (logged and counted) rather than fail.",
    )
    test_clock_file: Path | None = Field(
        default=None,
        description=(
            "TEST ONLY, never in production: a file holding epoch seconds read as the bridge's "
            "current time (when a value began or stopped holding), so benchmarks replay months "
            "in minutes."
        ),
    )
    judge_max_candidates: int = Field(
        default=5,
        ge=1,
        le=MAX_COMPARE_CANDIDATES,
        description="Most candidate texts the judge compares a new fact with (the protocol "
        f"allows {MAX_COMPARE_CANDIDATES}; copies of one text count once); each one lengthens "
        "the judge's prompt.",
    )


class BridgeSettings(ServiceSettings, BridgeTuning):
    """Everything the MCP bridge reads from the environment: what an operator sets here, the
    tuning constants through `BridgeTuning`."""

    model_config = SettingsConfigDict(
        env_prefix="MEM0_", extra="ignore", frozen=True, populate_by_name=True
    )

    service_name: ClassVar[str] = "bridge"

    api_url: str = Field(
        default="http://localhost:8000",
        validation_alias=AliasChoices("MEM0_API_URL", "MEM0_URL"),
        description="Base URL of the mem0 REST server (mem0-local or mem0's own server).",
    )
    api_key: str | None = Field(
        default=None,
        description="Sent to mem0 as `X-API-Key` when set.",
    )
    default_user_id: str = Field(
        default="default",
        min_length=1,
        validation_alias=AliasChoices("MEM0_DEFAULT_USER_ID", "MEM0_USER_ID"),
        description="mem0 `user_id` that owns every memory the bridge reads or writes.",
    )
    insecure_tls: bool = rarely_set_field(
        False, "`1` skips verifying mem0's TLS certificate; prefer MEM0_CA_BUNDLE."
    )
    ca_bundle: Path | None = Field(
        default=None,
        description="Extra CA file (PEM) trusted for mem0's TLS; wins over MEM0_INSECURE_TLS.",
    )
    infer: bool = Field(
        default=True,
        description="`0` stores added text verbatim, skipping mem0's LLM extraction.",
    )
    query_rewrite: bool = Field(
        default=True,
        description="`0` turns off rewriting question-style queries into statements (HyDE-lite).",
    )
    scope_key: str | None = Field(
        default=None,
        description="Pins every operation to this one namespace (run_id), overriding `scope`.",
    )
    project: str | None = Field(
        default=None,
        description="Fixed project scope, used instead of deriving it from git, cwd or MCP roots.",
    )
    add_timeout_seconds: PositiveFloat = rarely_set_field(
        45.0, "Timeout of a mem0 add that infers (the server runs an LLM call)."
    )
    ranker_address: str = Field(
        default="127.0.0.1:50051",
        description="host:port of the ranker (gRPC); empty runs without dedupe and reranking.",
    )
    judge_address: str = Field(
        default="127.0.0.1:50052",
        description="host:port of the judge (gRPC); empty runs without reconcile and rewrite.",
    )
    judge_timeout_seconds: PositiveFloat = rarely_set_field(
        20.0, "Deadline of each judge Compare call; past it the add proceeds unjudged."
    )
    reset_token: str | None = Field(
        default=None,
        description="The secret memory_reset must be given; checked by the bridge in constant "
        "time before anything is sent. Unset (and no MEM0_RESET_TOKEN_FILE): reset is refused.",
    )
    reset_token_file: Path | None = rarely_set_field(
        None, "File holding the reset token (its first line), instead of MEM0_RESET_TOKEN."
    )
    transport: Literal["stdio", "http"] = Field(
        default="stdio",
        validation_alias=AliasChoices("MEM0_TRANSPORT", "MCP_TRANSPORT"),
        description="`stdio` or `http` (streamable HTTP on MEM0_HTTP_HOST:MEM0_HTTP_PORT/mcp).",
    )
    http_host: str = Field(
        default="127.0.0.1",
        description="Address the HTTP transport binds; non-loopback needs MEM0_HTTP_BEARER_TOKEN.",
    )
    http_port: int = port_field(8001, "HTTP transport port; 0 picks a free one.")
    http_bearer_token: str | None = Field(
        default=None,
        description="Bearer token HTTP clients must send (`Authorization: Bearer ...`).",
    )
    http_tokens_file: Path | None = Field(
        default=None,
        description="TOML file of bearer tokens (by SHA-256) with per-token project, global and "
        "reset grants; reloaded on SIGHUP. Works beside or instead of MEM0_HTTP_BEARER_TOKEN.",
    )
    allowed_hosts: str = Field(
        default="",
        description="Comma list of extra Host values accepted over HTTP (DNS-rebinding guard).",
    )
    http_stateless: bool = rarely_set_field(
        True,
        "`1`: every HTTP request stands alone (no MCP session kept in the process), "
        "so replicas behind a load balancer without affinity can answer any request. Clients "
        "before protocol 2026-07-28 then get no server-to-client requests: the bridge cannot ask "
        "them for their roots, so they name the project (or set MEM0_PROJECT). `0` keeps "
        "sessions (and roots) for one replica or a sticky balancer.",
    )
    request_state_secret: str | None = Field(
        default=None,
        description="Secret (32 characters or more) sealing what a 2026-07-28 client carries "
        "between the rounds of one call (the round that asks for its roots). Every replica "
        "behind one load balancer needs the same: unset, each process makes its own and refuses "
        "a round another replica began. A comma list rotates keys: the first seals, all open.",
    )

    @field_validator("transport", mode="before")
    @classmethod
    def _transport_alias(cls, value: object) -> object:
        # `streamable-http` is the MCP specification's name for the HTTP transport.
        if isinstance(value, str) and value.strip().lower() in {"streamable-http", "http"}:
            return "http"
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator(
        "api_key",
        "scope_key",
        "project",
        "http_bearer_token",
        "reset_token",
        "request_state_secret",
        mode="before",
    )
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        if isinstance(value, str) and not value.strip():
            return None
        return value.strip() if isinstance(value, str) else value

    @field_validator("request_state_secret")
    @classmethod
    def _state_keys(cls, value: str | None) -> str | None:
        if value is not None and any(len(key) < MIN_STATE_KEY_LENGTH for key in _split(value)):
            raise ValueError(
                f"each MEM0_REQUEST_STATE_SECRET key needs {MIN_STATE_KEY_LENGTH} characters or "
                'more; make one with: python -c "import secrets; print(secrets.token_hex(32))"'
            )
        return value

    @field_validator("api_url")
    @classmethod
    def _url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"MEM0_API_URL must start with http:// or https://, got {value!r}")
        return value.rstrip("/")

    def reset_secret(self) -> str | None:
        """The reset token, from MEM0_RESET_TOKEN or the first line of MEM0_RESET_TOKEN_FILE
        (read on each reset, so a rotated file takes effect without a restart)."""
        if self.reset_token is not None:
            return self.reset_token
        if self.reset_token_file is None:
            return None
        try:
            lines = self.reset_token_file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            return None
        token = lines[0].strip() if lines else ""
        return token or None

    @property
    def allowed_host_list(self) -> list[str]:
        return _split(self.allowed_hosts)

    def request_state_security(self) -> RequestStateSecurity | None:
        """The sealing of multi-round call state under MEM0_REQUEST_STATE_SECRET, or None for
        the SDK's default (a key of this process only)."""
        if self.request_state_secret is None:
            return None
        return RequestStateSecurity(keys=_split(self.request_state_secret))

    @property
    def http_on_loopback(self) -> bool:
        return self.http_host in LOOPBACK_HOSTS

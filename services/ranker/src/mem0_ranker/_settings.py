"""The ranker's settings, read once from `RANKER_*` variables: how it listens and where it keeps
its records (`RankerSettings`), and the constants the benchmarks chose (`RankerTuning`)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from pydantic import Field, NonNegativeFloat, NonNegativeInt, PositiveFloat
from pydantic_settings import SettingsConfigDict

from mem0_common import (
    GrpcServiceSettings,
    TuningSettings,
    grpc_port_field,
    metrics_port_field,
    test_clock_field,
)


class RankerTuning(TuningSettings):
    """The rerank formula's constants (`_scoring`), the store's limits and windows (pool,
    mention cache, dedupe window, reinforce debounce) and the test clock: not for operators.

    The formula's defaults were chosen on the retrieval benchmark and the limits on the load and
    scale benchmarks (bench/README.md gives the findings); the clock lets a benchmark replay
    months in minutes.
    """

    model_config = SettingsConfigDict(env_prefix="RANKER_", extra="ignore", frozen=True)

    alpha: NonNegativeFloat = Field(
        default=0.2,
        description=(
            "Weight of mentions: score grows by the factor 1 + alpha * ln(1 + mentions); "
            "it acts only inside the similarity band (RANKER_SIMILARITY_MARGIN)."
        ),
    )
    half_life_days: PositiveFloat = Field(
        default=90.0,
        description="Days after which the fading part of a memory's freshness halves (its age "
        "counts only against a fresher related memory).",
    )
    recency_floor: float = Field(
        default=0.6,
        ge=0,
        le=1,
        description="Smallest freshness: how much of its score a very old memory keeps next to a "
        "fresh related one.",
    )
    similarity_margin: float = Field(
        default=0.045,
        ge=0,
        le=1,
        description=(
            "Mentions and recency reorder only candidates whose similarity is within this share "
            "of the best one's (0.045: at least 95.5% of it), so they break near-ties and never "
            "lift a clearly weaker match; the rest keep similarity order below them. 1 lets them "
            "reorder every candidate."
        ),
    )
    mention_margin: float = Field(
        default=0.08,
        ge=0,
        le=1,
        description=(
            "A memory whose fact was stated at least RANKER_MENTION_BAND_MIN times beyond the "
            "first may be lifted by its mentions from this share below the best similarity "
            "(0.08: 92% of it), since a query may match a much-restated fact a little worse than "
            "a neighbour said once; at or under RANKER_SIMILARITY_MARGIN it changes nothing."
        ),
    )
    mention_band_min: int = Field(
        default=2,
        ge=1,
        description="Mentions (restatements in any words) that let a memory reach from "
        "RANKER_MENTION_MARGIN below the best similarity; one restatement is too little "
        "evidence to outrank a better match.",
    )
    pg_pool_max: int = Field(
        default=8,
        ge=1,
        le=256,
        description="Largest PostgreSQL connection pool per replica.",
    )
    pg_timeout_seconds: PositiveFloat = Field(
        default=5.0,
        description=(
            "How long a call waits for a PostgreSQL connection before failing with UNAVAILABLE."
        ),
    )
    mention_cache_size: NonNegativeInt = Field(
        default=100_000,
        description=(
            "Most memories whose mention row (or its absence) is kept in memory, so reranking "
            "hot memories skips the database; about 250 bytes each; 0 turns the cache off."
        ),
    )
    mention_cache_ttl_seconds: NonNegativeFloat = Field(
        default=1.0,
        description=(
            "PostgreSQL only: seconds a cached mention row is used before it is read again, "
            "which bounds how late another replica's Reinforce or Forget shows in this one's "
            "reranks; 0 turns the cache off. With SQLite the cache is exact and never expires."
        ),
    )
    dedupe_window_seconds: NonNegativeFloat = Field(
        default=7 * 24 * 3600.0,
        description="An identical text in the same scope within this many seconds is a duplicate.",
    )
    reinforce_debounce_seconds: NonNegativeFloat = Field(
        default=3600.0,
        description="A memory's mention count rises at most once per this many seconds.",
    )
    test_clock_file: Path | None = test_clock_field(
        "read as the ranker's current time on every call"
    )


class RankerSettings(GrpcServiceSettings, RankerTuning):
    """How the ranker listens and where it keeps its records, plus `RankerTuning`'s constants."""

    model_config = SettingsConfigDict(env_prefix="RANKER_", extra="ignore", frozen=True)
    service_name: ClassVar[str] = "ranker"

    port: int = grpc_port_field(50051)
    metrics_port: int = metrics_port_field(9151)
    database_url: str | None = Field(
        default=None,
        description=(
            "PostgreSQL URL (`postgresql://...`) shared by several ranker replicas; "
            "unset keeps the records in the SQLite file `RANKER_DB_PATH`."
        ),
    )
    # Not relative to the working directory: where the service is started from must not
    # decide where its acknowledged writes live.
    db_path: Path = Field(
        default=Path("~/.local/share/mem0-ranker/ranker.sqlite3"),
        description="SQLite file used when `RANKER_DATABASE_URL` is unset (folder created).",
    )

"""mem0-ranker: mention counts, exact-content dedupe and mention + recency reranking over gRPC."""

from mem0_ranker._content import content_key
from mem0_ranker._scoring import Candidate, MentionRecord, Scored, ScoringParams, rank
from mem0_ranker._service import SERVICE_NAME, RankerServicer, create_server, open_store
from mem0_ranker._settings import RankerSettings
from mem0_ranker._store import Forgotten, Reinforcement, Stats, Store, StoredText

__all__ = [
    "SERVICE_NAME",
    "Candidate",
    "Forgotten",
    "MentionRecord",
    "RankerServicer",
    "RankerSettings",
    "Reinforcement",
    "Scored",
    "ScoringParams",
    "Stats",
    "Store",
    "StoredText",
    "content_key",
    "create_server",
    "open_store",
    "rank",
]

"""The ranker over real gRPC on a loopback port: health, reflection, every RPC, every bad input."""

from __future__ import annotations

import math
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import psycopg
import pytest
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from mem0_ranker import SERVICE_NAME, RankerSettings, Store, create_server
from mem0_ranker._postgres import PostgresStore
from mem0_ranker._service import NEXT_IN_LINE_SECONDS
from mem0mcp.contract import candidate_columns
from mem0mcp.ranker.v1 import ranker_pb2 as pb
from mem0mcp.ranker.v1 import ranker_pb2_grpc
from tests.ranker.conftest import Clock, open_backend
from tests.support.postgres import temporary_database
from tests.support.postgres import url as postgres_url

pytestmark = pytest.mark.anyio

DAY = 86400.0
SETTINGS = RankerSettings(
    port=0,
    metrics_port=-1,
    dedupe_window_seconds=DAY,
    reinforce_debounce_seconds=3600,
)


@dataclass
class Ranker:
    stub: ranker_pb2_grpc.RankerServiceStub
    channel: grpc.aio.Channel
    clock: Clock
    store: Store


@pytest.fixture
async def ranker(backend: str, backend_url: str, tmp_path: Path) -> AsyncIterator[Ranker]:
    store = await open_backend(backend, tmp_path, backend_url)
    clock = Clock()
    server = create_server(SETTINGS, store, clock)
    await server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            yield Ranker(ranker_pb2_grpc.RankerServiceStub(channel), channel, clock, store)
    finally:
        await server.stop(grace=1)
        await store.close()


def _iso(clock: Clock, days_ago: float) -> str:
    from mem0_ranker._timestamps import format_timestamp  # noqa: PLC0415

    return format_timestamp(clock.now - days_ago * DAY)


# --- plumbing ---------------------------------------------------------------------------------


async def test_health_reports_the_ranker_serving(ranker: Ranker) -> None:
    health = health_pb2_grpc.HealthStub(ranker.channel)
    reply = await health.Check(health_pb2.HealthCheckRequest(service=SERVICE_NAME))
    assert reply.status == health_pb2.HealthCheckResponse.SERVING


async def test_reflection_lists_the_ranker_service(ranker: Ranker) -> None:
    reflection = reflection_pb2_grpc.ServerReflectionStub(ranker.channel)
    request = reflection_pb2.ServerReflectionRequest(list_services="")
    async for reply in reflection.ServerReflectionInfo(iter([request])):
        names = {s.name for s in reply.list_services_response.service}
        assert SERVICE_NAME in names
        break


# --- dedupe -----------------------------------------------------------------------------------


async def test_check_duplicate_finds_a_recorded_text_with_other_spacing(ranker: Ranker) -> None:
    await ranker.stub.RecordStored(
        pb.RecordStoredRequest(scope="u", text="Likes tea", memory_id="m1")
    )
    reply = await ranker.stub.CheckDuplicate(
        pb.CheckDuplicateRequest(scope="u", text=" Likes \t tea\n")
    )
    assert (reply.duplicate, reply.memory_id) == (True, "m1")
    assert reply.stored_at == _iso(ranker.clock, 0)


async def test_check_duplicate_forgets_after_the_window(ranker: Ranker) -> None:
    await ranker.stub.RecordStored(
        pb.RecordStoredRequest(scope="u", text="Likes tea", memory_id="m1")
    )
    ranker.clock.advance(DAY + 1)
    reply = await ranker.stub.CheckDuplicate(pb.CheckDuplicateRequest(scope="u", text="Likes tea"))
    assert reply == pb.CheckDuplicateResponse(duplicate=False)


async def test_an_unrecorded_check_is_no_duplicate_and_stays_unrecorded(ranker: Ranker) -> None:
    request = pb.CheckDuplicateRequest(scope="u", text="Likes tea")
    assert not (await ranker.stub.CheckDuplicate(request)).duplicate
    assert not (await ranker.stub.CheckDuplicate(request)).duplicate


# --- reinforce --------------------------------------------------------------------------------


async def test_reinforce_is_debounced_per_memory(ranker: Ranker) -> None:
    first = await ranker.stub.Reinforce(pb.ReinforceRequest(memory_id="m1", scope="u"))
    ranker.clock.advance(60)
    second = await ranker.stub.Reinforce(pb.ReinforceRequest(memory_id="m1", scope="u"))
    other = await ranker.stub.Reinforce(pb.ReinforceRequest(memory_id="m2", scope="u"))
    assert (first.counted, first.mentions) == (True, 1)
    assert (second.counted, second.mentions) == (False, 1)
    assert second.last_reinforced_at == first.last_reinforced_at
    assert (other.counted, other.mentions) == (True, 1)


async def test_reinforce_counts_again_after_the_debounce(ranker: Ranker) -> None:
    await ranker.stub.Reinforce(pb.ReinforceRequest(memory_id="m1", scope="u"))
    ranker.clock.advance(3600)
    again = await ranker.stub.Reinforce(pb.ReinforceRequest(memory_id="m1", scope="u"))
    assert (again.counted, again.mentions) == (True, 2)


# --- rerank -----------------------------------------------------------------------------------


async def test_rerank_lifts_a_reinforced_memory_over_a_slightly_closer_one(ranker: Ranker) -> None:
    for _ in range(3):
        await ranker.stub.Reinforce(pb.ReinforceRequest(memory_id="often", scope="u"))
        ranker.clock.advance(3600)
    created = _iso(ranker.clock, 1)
    reply = await ranker.stub.Rerank(
        pb.RerankRequest(
            candidates=[
                pb.Candidate(memory_id="once", similarity=0.80, created_at=created),
                pb.Candidate(memory_id="often", similarity=0.78, created_at=created),
            ]
        )
    )
    assert [r.memory_id for r in reply.results] == ["often", "once"]
    often = reply.results[0]
    assert often.mentions == 3
    assert math.isclose(often.mention_factor, 1 + SETTINGS.alpha * math.log(4))
    assert math.isclose(often.score, often.similarity * often.mention_factor * often.recency)


async def test_rerank_sinks_a_stale_memory_below_a_fresh_related_one(ranker: Ranker) -> None:
    reply = await ranker.stub.Rerank(
        pb.RerankRequest(
            candidates=[
                pb.Candidate(memory_id="stale", similarity=0.7, created_at=_iso(ranker.clock, 400)),
                pb.Candidate(
                    memory_id="fresh",
                    similarity=0.7,
                    created_at=_iso(ranker.clock, 400),
                    updated_at=_iso(ranker.clock, 2),
                    related_ids=["stale"],
                ),
            ]
        )
    )
    assert [r.memory_id for r in reply.results] == ["fresh", "stale"]
    stale = reply.results[1]
    assert math.isclose(stale.age_days, 400)
    assert 0.6 <= stale.recency < 1.0


async def test_a_restatement_kept_apart_freshens_the_memory_it_restates(ranker: Ranker) -> None:
    """A, then the change B, then A again in other words (a memory of its own): told when A's
    values were restated, the ranker ranks A above the change it is older than."""
    clock = ranker.clock
    older = pb.Candidate(memory_id="a", similarity=0.7, created_at=_iso(clock, 120))
    change = pb.Candidate(
        memory_id="b", similarity=0.7, created_at=_iso(clock, 60), related_ids=["a"]
    )
    unaware = await ranker.stub.Rerank(pb.RerankRequest(candidates=[older, change]))
    assert [r.memory_id for r in unaware.results] == ["b", "a"]
    older.restated_at = _iso(clock, 5)
    told = await ranker.stub.Rerank(pb.RerankRequest(candidates=[older, change]))
    assert [r.memory_id for r in told.results] == ["a", "b"]
    assert told.results[0].age_days == pytest.approx(5)
    assert told.results[0].recency == 1.0


async def test_rerank_counts_each_restatement_of_a_fact_as_a_mention(ranker: Ranker) -> None:
    """One fact in three wordings, each a memory of its own with no mentions recorded: told
    which candidates restate it, the ranker weighs it as a fact said three times."""
    clock = ranker.clock
    wordings = [
        pb.Candidate(memory_id=f"w{i}", similarity=0.69 - i / 10, created_at=_iso(clock, 30))
        for i in range(3)
    ]
    rival = pb.Candidate(memory_id="rival", similarity=0.7, created_at=_iso(clock, 30))
    alone = await ranker.stub.Rerank(pb.RerankRequest(candidates=[rival, *wordings]))
    assert [r.memory_id for r in alone.results][:2] == ["rival", "w0"]
    wordings[0].restatement_ids.extend(["w1"])
    wordings[2].restatement_ids.extend(["w1"])
    told = await ranker.stub.Rerank(pb.RerankRequest(candidates=[rival, *wordings]))
    assert [r.memory_id for r in told.results][:2] == ["w0", "rival"]
    first = told.results[0]
    assert first.mentions == 0
    assert math.isclose(first.mention_factor, 1 + SETTINGS.alpha * math.log(3))


async def test_rerank_leaves_unrelated_memories_of_any_age_in_similarity_order(
    ranker: Ranker,
) -> None:
    reply = await ranker.stub.Rerank(
        pb.RerankRequest(
            candidates=[
                pb.Candidate(memory_id="old", similarity=0.71, created_at=_iso(ranker.clock, 400)),
                pb.Candidate(memory_id="new", similarity=0.70, created_at=_iso(ranker.clock, 0)),
            ]
        )
    )
    assert [(r.memory_id, r.recency) for r in reply.results] == [("old", 1.0), ("new", 1.0)]


async def test_rerank_returns_at_most_limit_results(ranker: Ranker) -> None:
    created = _iso(ranker.clock, 0)
    candidates = [
        pb.Candidate(memory_id=f"m{i}", similarity=i / 10, created_at=created) for i in range(5)
    ]
    reply = await ranker.stub.Rerank(pb.RerankRequest(candidates=candidates, limit=2))
    assert [r.memory_id for r in reply.results] == ["m4", "m3"]


async def test_rerank_of_no_candidates_is_empty(ranker: Ranker) -> None:
    assert await ranker.stub.Rerank(pb.RerankRequest()) == pb.RerankResponse()


async def test_rerank_scores_a_hit_without_timestamps_instead_of_refusing_the_call(
    ranker: Ranker,
) -> None:
    reply = await ranker.stub.Rerank(
        pb.RerankRequest(
            candidates=[
                pb.Candidate(
                    memory_id="dated",
                    similarity=0.7,
                    created_at=_iso(ranker.clock, 400),
                    related_ids=["undated", "updated"],
                ),
                pb.Candidate(memory_id="undated", similarity=0.7),
                pb.Candidate(memory_id="updated", similarity=0.7, updated_at=_iso(ranker.clock, 1)),
            ]
        )
    )
    by_id = {r.memory_id: r for r in reply.results}
    assert by_id["undated"].recency == 1.0
    assert by_id["updated"].age_days == pytest.approx(1)
    assert by_id["dated"].recency < 1.0


async def test_rerank_answers_the_columns_form_exactly_as_candidate_messages(
    ranker: Ranker,
) -> None:
    clock = ranker.clock
    for memory_id in ("a", "a", "c", "e"):
        await ranker.stub.Reinforce(pb.ReinforceRequest(memory_id=memory_id, scope="u"))
        clock.now += 2 * 3600  # past the debounce
    candidates = [
        pb.Candidate(
            memory_id="a", similarity=0.80, created_at=_iso(clock, 300), related_ids=["b", "x"]
        ),
        pb.Candidate(
            memory_id="b",
            similarity=0.79,
            created_at=_iso(clock, 200),
            updated_at=_iso(clock, 5),
            restatement_ids=["c"],
        ),
        pb.Candidate(memory_id="c", similarity=0.78, restated_at=_iso(clock, 2)),
        pb.Candidate(memory_id="d", similarity=0.5, updated_at=_iso(clock, 50)),
        pb.Candidate(
            memory_id="e",
            similarity=0.79,
            created_at=_iso(clock, 1),
            restated_at=_iso(clock, 40),
            related_ids=["a"],
        ),
        pb.Candidate(memory_id="f", similarity=0.0),
    ]
    for limit in (0, 3):
        as_messages = await ranker.stub.Rerank(pb.RerankRequest(candidates=candidates, limit=limit))
        as_columns = await ranker.stub.Rerank(
            pb.RerankRequest(columns=candidate_columns(candidates), limit=limit)
        )
        assert as_columns == as_messages
        assert len(as_columns.results) == (limit or len(candidates))


async def test_rerank_columns_may_leave_out_what_no_candidate_has(ranker: Ranker) -> None:
    candidates = [
        pb.Candidate(memory_id="old", similarity=0.7),
        pb.Candidate(memory_id="new", similarity=0.7),
    ]
    bare = pb.CandidateColumns(memory_ids=["old", "new"], similarities=[0.7, 0.7])
    assert await ranker.stub.Rerank(pb.RerankRequest(columns=bare)) == await ranker.stub.Rerank(
        pb.RerankRequest(candidates=candidates)
    )


# --- text changes, folds and pending reconciliation -------------------------------------------


async def _duplicate_of(ranker: Ranker, scope: str, text: str) -> str | None:
    reply = await ranker.stub.CheckDuplicate(pb.CheckDuplicateRequest(scope=scope, text=text))
    return reply.memory_id if reply.duplicate else None


async def test_a_replacing_record_drops_the_records_of_the_memorys_old_text(ranker: Ranker) -> None:
    record = ranker.stub.RecordStored
    await record(pb.RecordStoredRequest(scope="u", text="port 8080", memory_id="m"))
    await record(pb.RecordStoredRequest(scope="u", text="port 9000", memory_id="m", replaces=True))
    assert await _duplicate_of(ranker, "u", "port 8080") is None
    assert await _duplicate_of(ranker, "u", "port 9000") == "m"


async def test_a_plain_record_keeps_the_memorys_other_texts(ranker: Ranker) -> None:
    record = ranker.stub.RecordStored
    await record(pb.RecordStoredRequest(scope="u", text="as sent", memory_id="m"))
    await record(pb.RecordStoredRequest(scope="u", text="as extracted", memory_id="m"))
    assert await _duplicate_of(ranker, "u", "as sent") == "m"


async def test_fold_carries_mentions_to_the_survivor_and_drops_the_others(ranker: Ranker) -> None:
    for memory_id, times in [("keep", 1), ("copy1", 2), ("copy2", 1)]:
        for _ in range(times):
            await ranker.stub.Reinforce(pb.ReinforceRequest(memory_id=memory_id, scope="u"))
            ranker.clock.advance(7200)
        await ranker.stub.RecordStored(
            pb.RecordStoredRequest(scope="u", text=f"text of {memory_id}", memory_id=memory_id)
        )
    await ranker.stub.MarkPending(pb.MarkPendingRequest(scope="u", memory_id="copy1"))
    reply = await ranker.stub.Fold(
        pb.FoldRequest(scope="u", into_memory_id="keep", from_memory_ids=["copy1", "copy2"])
    )
    assert reply.mentions == 4
    assert await _duplicate_of(ranker, "u", "text of copy1") is None
    stats = await ranker.stub.GetStats(pb.GetStatsRequest())
    assert (stats.mention_rows, stats.total_mentions, stats.pending_rows) == (1, 4, 0)


async def test_fold_into_a_never_reinforced_memory_creates_its_count(ranker: Ranker) -> None:
    await ranker.stub.Reinforce(pb.ReinforceRequest(memory_id="copy", scope="u"))
    reply = await ranker.stub.Fold(
        pb.FoldRequest(scope="u", into_memory_id="keep", from_memory_ids=["copy"])
    )
    assert reply.mentions == 1


async def test_pending_memories_are_claimed_oldest_first_and_leased(ranker: Ranker) -> None:
    for memory_id in ["first", "second", "third"]:
        await ranker.stub.MarkPending(
            pb.MarkPendingRequest(scope="u", memory_id=memory_id, reason="judge unavailable")
        )
        ranker.clock.advance(1)
    claim = pb.ClaimPendingRequest(limit=2, lease_seconds=30)
    first = await ranker.stub.ClaimPending(claim)
    assert [p.memory_id for p in first.pending] == ["first", "second"]
    assert first.pending[0].reason == "judge unavailable"
    assert first.pending[0].attempts == 1
    second = await ranker.stub.ClaimPending(claim)
    assert [p.memory_id for p in second.pending] == ["third"]
    ranker.clock.advance(31)
    again = await ranker.stub.ClaimPending(claim)
    assert [p.memory_id for p in again.pending] == ["first", "second"]
    assert again.pending[0].attempts == 2


async def test_marking_a_claimed_memory_again_hands_it_back(ranker: Ranker) -> None:
    await ranker.stub.MarkPending(pb.MarkPendingRequest(scope="u", memory_id="m", reason="r"))
    claim = pb.ClaimPendingRequest(limit=5, lease_seconds=30)
    assert [p.memory_id for p in (await ranker.stub.ClaimPending(claim)).pending] == ["m"]
    await ranker.stub.MarkPending(pb.MarkPendingRequest(scope="u", memory_id="m", reason="r"))
    again = await ranker.stub.ClaimPending(claim)
    assert [(p.memory_id, p.attempts) for p in again.pending] == [("m", 2)]


async def test_a_duplicate_says_when_its_scope_has_memories_awaiting_a_verdict(
    ranker: Ranker,
) -> None:
    await ranker.stub.RecordStored(pb.RecordStoredRequest(scope="u", text="t", memory_id="m"))
    check = pb.CheckDuplicateRequest(scope="u", text="t")
    assert not (await ranker.stub.CheckDuplicate(check)).scope_pending
    await ranker.stub.MarkPending(pb.MarkPendingRequest(scope="u", memory_id="p"))
    await ranker.stub.MarkPending(pb.MarkPendingRequest(scope="other", memory_id="q"))
    assert (await ranker.stub.CheckDuplicate(check)).scope_pending
    await ranker.stub.ResolvePending(pb.ResolvePendingRequest(memory_ids=["p"]))
    assert not (await ranker.stub.CheckDuplicate(check)).scope_pending


async def test_resolved_and_forgotten_memories_are_no_longer_pending(ranker: Ranker) -> None:
    for memory_id in ["a", "b", "c"]:
        await ranker.stub.MarkPending(pb.MarkPendingRequest(scope="u", memory_id=memory_id))
    resolved = await ranker.stub.ResolvePending(pb.ResolvePendingRequest(memory_ids=["a", "zz"]))
    assert resolved.resolved == 1
    forgotten = await ranker.stub.Forget(pb.ForgetRequest(memories=pb.MemoryIds(memory_ids=["b"])))
    assert forgotten.pending_rows_deleted == 1
    claimed = await ranker.stub.ClaimPending(pb.ClaimPendingRequest(limit=10, lease_seconds=5))
    assert [p.memory_id for p in claimed.pending] == ["c"]


# --- forget and stats -------------------------------------------------------------------------


async def _seed(ranker: Ranker) -> None:
    for memory_id, scope in [("m1", "user:a"), ("m2", "user:a/run:1"), ("m3", "user:b")]:
        await ranker.stub.Reinforce(pb.ReinforceRequest(memory_id=memory_id, scope=scope))
        await ranker.stub.RecordStored(
            pb.RecordStoredRequest(scope=scope, text=f"fact {memory_id}", memory_id=memory_id)
        )


async def test_forget_memories_drops_their_records(ranker: Ranker) -> None:
    await _seed(ranker)
    reply = await ranker.stub.Forget(pb.ForgetRequest(memories=pb.MemoryIds(memory_ids=["m1"])))
    assert (reply.mention_rows_deleted, reply.dedupe_rows_deleted) == (1, 1)
    check = pb.CheckDuplicateRequest(scope="user:a", text="fact m1")
    assert not (await ranker.stub.CheckDuplicate(check)).duplicate


async def test_forget_scope_drops_nested_scopes_too(ranker: Ranker) -> None:
    await _seed(ranker)
    reply = await ranker.stub.Forget(pb.ForgetRequest(scope="user:a"))
    assert (reply.mention_rows_deleted, reply.dedupe_rows_deleted) == (2, 2)


async def test_forget_everything_resets_the_rows(ranker: Ranker) -> None:
    await _seed(ranker)
    reply = await ranker.stub.Forget(pb.ForgetRequest(everything=True))
    assert (reply.mention_rows_deleted, reply.dedupe_rows_deleted) == (3, 3)
    stats = await ranker.stub.GetStats(pb.GetStatsRequest())
    assert (stats.mention_rows, stats.dedupe_rows) == (0, 0)


async def test_stats_report_rows_mentions_and_dedupe_hits(ranker: Ranker) -> None:
    await _seed(ranker)
    before = (await ranker.stub.GetStats(pb.GetStatsRequest())).dedupe_hits
    await ranker.stub.CheckDuplicate(pb.CheckDuplicateRequest(scope="user:b", text="fact m3"))
    stats = await ranker.stub.GetStats(pb.GetStatsRequest())
    assert (stats.mention_rows, stats.total_mentions, stats.dedupe_rows) == (3, 3, 3)
    assert stats.dedupe_hits == before + 1


# --- leases -----------------------------------------------------------------------------------
# Lease rows outlive `forget_everything` (they order work, they are no records), and the
# PostgreSQL database is shared by the tests: each test leases keys of its own.


def _lease_key() -> str:
    return f"scope/{uuid.uuid4().hex}"


async def _acquire(
    ranker: Ranker, key: str, holder: str, ttl: float = 10.0
) -> pb.AcquireLeaseResponse:
    reply: pb.AcquireLeaseResponse = await ranker.stub.AcquireLease(
        pb.AcquireLeaseRequest(key=key, holder=holder, ttl_seconds=ttl)
    )
    return reply


async def _release(ranker: Ranker, key: str, holder: str) -> bool:
    reply = await ranker.stub.ReleaseLease(pb.ReleaseLeaseRequest(key=key, holder=holder))
    return bool(reply.released)


async def test_a_free_lease_is_granted_and_refused_to_others_while_held(ranker: Ranker) -> None:
    key = _lease_key()
    granted = await _acquire(ranker, key, "a")
    ranker.clock.advance(4)
    refused = await _acquire(ranker, key, "b")
    assert (granted.granted, granted.expires_in_seconds) == (True, 10.0)
    assert (refused.granted, refused.expires_in_seconds) == (False, 6.0)


async def test_a_dead_holder_frees_the_lease_when_it_expires(ranker: Ranker) -> None:
    key = _lease_key()
    await _acquire(ranker, key, "dead")
    ranker.clock.advance(10)
    taken = await _acquire(ranker, key, "b")
    late_release = await _release(ranker, key, "dead")
    assert taken.granted
    assert not late_release
    assert not (await _acquire(ranker, key, "c")).granted


async def test_a_released_lease_is_free_at_once_and_only_its_holder_releases_it(
    ranker: Ranker,
) -> None:
    key = _lease_key()
    await _acquire(ranker, key, "a")
    assert not await _release(ranker, key, "b")
    assert not (await _acquire(ranker, key, "b")).granted
    assert await _release(ranker, key, "a")
    assert not await _release(ranker, key, "a")
    assert (await _acquire(ranker, key, "b")).granted


async def test_reacquiring_extends_the_holders_lease(ranker: Ranker) -> None:
    key = _lease_key()
    await _acquire(ranker, key, "a")
    ranker.clock.advance(8)
    renewed = await _acquire(ranker, key, "a")
    ranker.clock.advance(8)  # past the first lease's end, within the renewed one
    other = await _acquire(ranker, key, "b")
    assert (renewed.granted, renewed.expires_in_seconds) == (True, 10.0)
    assert (other.granted, other.expires_in_seconds) == (False, 2.0)


async def test_a_refused_holder_is_next_in_line_when_the_lease_frees(ranker: Ranker) -> None:
    """A replica that releases and at once retakes a lease cannot starve one polling for it."""
    key = _lease_key()
    await _acquire(ranker, key, "a")
    await _acquire(ranker, key, "b")  # refused: next in line
    await _release(ranker, key, "a")
    retaken = await _acquire(ranker, key, "a")
    third = await _acquire(ranker, key, "c")
    turn = await _acquire(ranker, key, "b")
    assert (retaken.granted, retaken.expires_in_seconds) == (False, 0.0)
    assert not third.granted
    assert turn.granted
    # Taking its turn ended "b"'s place in line: the next one refused ("a") takes it.
    await _acquire(ranker, key, "a")
    await _release(ranker, key, "b")
    assert (await _acquire(ranker, key, "a")).granted


async def test_next_in_line_lapses_when_its_holder_stops_asking(ranker: Ranker) -> None:
    key = _lease_key()
    await _acquire(ranker, key, "a")
    await _acquire(ranker, key, "gone")
    await _release(ranker, key, "a")
    ranker.clock.advance(NEXT_IN_LINE_SECONDS)
    assert (await _acquire(ranker, key, "a")).granted


async def test_leases_of_different_keys_are_independent(ranker: Ranker) -> None:
    one, two = _lease_key(), _lease_key()
    assert (await _acquire(ranker, one, "a")).granted
    assert (await _acquire(ranker, two, "b")).granted
    assert not (await _acquire(ranker, one, "b")).granted


# --- bad input --------------------------------------------------------------------------------

NOW_ISO = "2026-12-02T12:00:00Z"


def _rerank(**candidate: object) -> pb.RerankRequest:
    fields: dict[str, object] = {"memory_id": "m1", "similarity": 0.5, "created_at": NOW_ISO}
    fields.update(candidate)
    return pb.RerankRequest(candidates=[pb.Candidate(**fields)])  # type: ignore[arg-type]


def _columns(**columns: object) -> pb.RerankRequest:
    fields: dict[str, object] = {
        "memory_ids": ["m1"],
        "similarities": [0.5],
        "created_at": [NOW_ISO],
    }
    fields.update(columns)
    return pb.RerankRequest(columns=pb.CandidateColumns(**fields))  # type: ignore[arg-type]


def _with_unknown_field(message: Message) -> Message:
    """The same message plus field 99 (varint 1), as a client with a newer contract sends it."""
    extended = type(message)()
    extended.ParseFromString(message.SerializeToString() + b"\x98\x06\x01")
    return extended


BAD_REQUESTS: list[tuple[str, Message, str]] = [
    ("CheckDuplicate", pb.CheckDuplicateRequest(scope="", text="t"), "scope: must not be empty"),
    ("CheckDuplicate", pb.CheckDuplicateRequest(scope="s" * 513, text="t"), "scope: 513 char"),
    ("CheckDuplicate", pb.CheckDuplicateRequest(scope="u", text=""), "text: must not be empty"),
    ("CheckDuplicate", pb.CheckDuplicateRequest(scope="u", text=" \n"), "text: must contain"),
    ("CheckDuplicate", pb.CheckDuplicateRequest(scope="u", text="x" * 20_001), "text: 20001 "),
    ("RecordStored", pb.RecordStoredRequest(scope="u", text="t"), "memory_id: must not be empty"),
    (
        "RecordStored",
        pb.RecordStoredRequest(scope="u", text="t", memory_id="m" * 129),
        "memory_id: 129 characters",
    ),
    ("RecordStored", pb.RecordStoredRequest(scope="", text="t", memory_id="m"), "scope: must not"),
    ("Reinforce", pb.ReinforceRequest(memory_id="", scope="u"), "memory_id: must not be empty"),
    ("Reinforce", pb.ReinforceRequest(memory_id="m", scope=""), "scope: must not be empty"),
    ("Rerank", _rerank(similarity=math.nan), "candidates[0].similarity: must be a finite"),
    ("Rerank", _rerank(similarity=-0.1), "candidates[0].similarity: must be a finite"),
    ("Rerank", _rerank(similarity=math.inf), "candidates[0].similarity: must be a finite"),
    ("Rerank", _rerank(memory_id=""), "candidates[0].memory_id: must not be empty"),
    ("Rerank", _rerank(memory_id="m" * 129), "candidates[0].memory_id: 129 characters"),
    ("Rerank", _rerank(created_at="yesterday"), "candidates[0].created_at: not an RFC 3339"),
    ("Rerank", _rerank(updated_at="2026-02-30T00:00:00Z"), "candidates[0].updated_at: not an RFC"),
    ("Rerank", _rerank(restated_at="last week"), "candidates[0].restated_at: not an RFC 3339"),
    ("Rerank", _rerank(related_ids=["m2", ""]), "candidates[0].related_ids[1]: must not be empty"),
    ("Rerank", _rerank(related_ids=["m" * 129]), "candidates[0].related_ids[0]: 129 characters"),
    ("Rerank", _rerank(related_ids=["m\x00"]), "candidates[0].related_ids[0]: must not contain"),
    ("Rerank", _rerank(related_ids=["m"] * 17), "candidates[0].related_ids: 17 given, at most 16"),
    (
        "Rerank",
        _rerank(restatement_ids=["m2", ""]),
        "candidates[0].restatement_ids[1]: must not be empty",
    ),
    (
        "Rerank",
        _rerank(restatement_ids=["m\x00"]),
        "candidates[0].restatement_ids[0]: must not contain",
    ),
    (
        "Rerank",
        _rerank(restatement_ids=["m"] * 17),
        "candidates[0].restatement_ids: 17 given, at most 16",
    ),
    (
        "Rerank",
        pb.RerankRequest(
            candidates=[pb.Candidate(memory_id="m", similarity=0.1, created_at=NOW_ISO)] * 1001
        ),
        "candidates: 1001 given, at most 1000 allowed",
    ),
    ("Rerank", _columns(similarities=[math.nan]), "columns.similarities[0]: must be a finite"),
    ("Rerank", _columns(similarities=[-0.1]), "columns.similarities[0]: must be a finite"),
    ("Rerank", _columns(similarities=[math.inf]), "columns.similarities[0]: must be a finite"),
    (
        "Rerank",
        _columns(memory_ids=["m1", "m2"], similarities=[0.5, math.nan], created_at=[]),
        "columns.similarities[1]: must be a finite",
    ),
    ("Rerank", _columns(memory_ids=[""]), "columns.memory_ids[0]: must not be empty"),
    ("Rerank", _columns(memory_ids=["m" * 129]), "columns.memory_ids[0]: 129 characters"),
    ("Rerank", _columns(memory_ids=["m\x00"]), "columns.memory_ids[0]: must not contain"),
    (
        "Rerank",
        _columns(memory_ids=["m1", "m2"], created_at=[]),
        "columns.similarities: 1 given for 2 memory_ids",
    ),
    ("Rerank", _columns(created_at=["yesterday"]), "columns.created_at[0]: not an RFC 3339"),
    (
        "Rerank",
        _columns(updated_at=["2026-02-30T00:00:00Z"]),
        "columns.updated_at[0]: not an RFC 3339",
    ),
    ("Rerank", _columns(restated_at=["last week"]), "columns.restated_at[0]: not an RFC 3339"),
    (
        "Rerank",
        _columns(created_at=[NOW_ISO, NOW_ISO]),
        "columns.created_at: 2 given for 1 memory_ids",
    ),
    (
        "Rerank",
        _columns(related_ids=["m2", ""], related_counts=[2]),
        "columns.related_ids[1]: must not be empty",
    ),
    (
        "Rerank",
        _columns(related_ids=["m" * 129], related_counts=[1]),
        "columns.related_ids[0]: 129 characters",
    ),
    (
        "Rerank",
        _columns(related_ids=["m\x00"], related_counts=[1]),
        "columns.related_ids[0]: must not contain",
    ),
    (
        "Rerank",
        _columns(related_ids=["m"] * 17, related_counts=[17]),
        "columns.related_counts[0]: 17 related_ids given, at most 16 allowed",
    ),
    (
        "Rerank",
        _columns(related_ids=["m2"]),
        "columns.related_counts: empty, but columns.related_ids names 1",
    ),
    (
        "Rerank",
        _columns(related_ids=["m2"], related_counts=[2]),
        "columns.related_counts: they add up to 2, but columns.related_ids holds 1",
    ),
    (
        "Rerank",
        _columns(related_counts=[0, 0]),
        "columns.related_counts: 2 given for 1 memory_ids",
    ),
    (
        "Rerank",
        _columns(restatement_ids=["m2", ""], restatement_counts=[2]),
        "columns.restatement_ids[1]: must not be empty",
    ),
    (
        "Rerank",
        _columns(restatement_ids=["m\x00"], restatement_counts=[1]),
        "columns.restatement_ids[0]: must not contain",
    ),
    (
        "Rerank",
        _columns(restatement_ids=["m"] * 17, restatement_counts=[17]),
        "columns.restatement_counts[0]: 17 restatement_ids given, at most 16 allowed",
    ),
    (
        "Rerank",
        _columns(memory_ids=["m"] * 1001, similarities=[0.1] * 1001, created_at=[]),
        "columns.memory_ids: 1001 given, at most 1000 allowed",
    ),
    (
        "Rerank",
        _columns(memory_ids=[], similarities=[], created_at=[NOW_ISO]),
        "columns.created_at: 1 given for 0 memory_ids",
    ),
    (
        "Rerank",
        pb.RerankRequest(candidates=_rerank().candidates, columns=_columns().columns),
        "columns: give the candidates as candidates or as columns, not both",
    ),
    (
        "Rerank",
        pb.RerankRequest(columns=_with_unknown_field(_columns().columns)),  # type: ignore[arg-type]
        "columns: unknown field number 99",
    ),
    (  # unknown fields are named before any other fault, in the columns form too
        "Rerank",
        pb.RerankRequest(
            columns=_with_unknown_field(_columns(similarities=[math.nan]).columns)  # type: ignore[arg-type]
        ),
        "columns: unknown field number 99",
    ),
    ("Forget", pb.ForgetRequest(), "target: set one of memories, scope or everything"),
    ("Forget", pb.ForgetRequest(everything=False), "everything: must be true"),
    ("Forget", pb.ForgetRequest(memories=pb.MemoryIds()), "memories.memory_ids: must name"),
    (
        "Forget",
        pb.ForgetRequest(memories=pb.MemoryIds(memory_ids=["ok", ""])),
        "memories.memory_ids[1]: must not be empty",
    ),
    ("Forget", pb.ForgetRequest(scope=""), "scope: must not be empty"),
    ("Fold", pb.FoldRequest(scope="u", into_memory_id="a"), "from_memory_ids: must name"),
    (
        "Fold",
        pb.FoldRequest(scope="u", into_memory_id="a", from_memory_ids=["b", "a"]),
        "from_memory_ids: must not contain into_memory_id",
    ),
    ("MarkPending", pb.MarkPendingRequest(scope="u", memory_id=""), "memory_id: must not be"),
    (
        "MarkPending",
        pb.MarkPendingRequest(scope="u", memory_id="m", reason="r" * 513),
        "reason: 513 characters",
    ),
    ("ClaimPending", pb.ClaimPendingRequest(limit=0, lease_seconds=1), "limit: must be 1..1000"),
    ("ClaimPending", pb.ClaimPendingRequest(limit=1, lease_seconds=0), "lease_seconds: must be"),
    (
        "ClaimPending",
        pb.ClaimPendingRequest(limit=1, lease_seconds=math.nan),
        "lease_seconds: must be",
    ),
    ("ResolvePending", pb.ResolvePendingRequest(), "memory_ids: must name"),
    ("AcquireLease", pb.AcquireLeaseRequest(holder="h", ttl_seconds=1), "key: must not be empty"),
    ("AcquireLease", pb.AcquireLeaseRequest(key="k", ttl_seconds=1), "holder: must not be empty"),
    (
        "AcquireLease",
        pb.AcquireLeaseRequest(key="k" * 641, holder="h", ttl_seconds=1),
        "key: 641 characters",
    ),
    (
        "AcquireLease",
        pb.AcquireLeaseRequest(key="k", holder="h" * 129, ttl_seconds=1),
        "holder: 129 characters",
    ),
    (
        "AcquireLease",
        pb.AcquireLeaseRequest(key="k\x00", holder="h", ttl_seconds=1),
        "key: must not contain a NUL",
    ),
    ("AcquireLease", pb.AcquireLeaseRequest(key="k", holder="h"), "ttl_seconds: must be in"),
    (
        "AcquireLease",
        pb.AcquireLeaseRequest(key="k", holder="h", ttl_seconds=-1),
        "ttl_seconds: must be in",
    ),
    (
        "AcquireLease",
        pb.AcquireLeaseRequest(key="k", holder="h", ttl_seconds=math.inf),
        "ttl_seconds: must be in",
    ),
    (
        "AcquireLease",
        pb.AcquireLeaseRequest(key="k", holder="h", ttl_seconds=3601),
        "ttl_seconds: must be in",
    ),
    ("ReleaseLease", pb.ReleaseLeaseRequest(key="", holder="h"), "key: must not be empty"),
    ("ReleaseLease", pb.ReleaseLeaseRequest(key="k", holder=""), "holder: must not be empty"),
    (
        "Reinforce",
        _with_unknown_field(pb.ReinforceRequest(memory_id="m", scope="u")),
        "request: unknown field number 99",
    ),
    (
        "Rerank",
        pb.RerankRequest(candidates=[_with_unknown_field(_rerank().candidates[0])]),  # type: ignore[list-item]
        "candidates[0]: unknown field number 99",
    ),
    (
        "Rerank",
        pb.RerankRequest(
            candidates=[
                _rerank().candidates[0],
                _with_unknown_field(_rerank(memory_id="m2").candidates[0]),  # type: ignore[list-item]
            ]
        ),
        "candidates[1]: unknown field number 99",
    ),
    (  # unknown fields are named before any other fault, wherever they are
        "Rerank",
        pb.RerankRequest(
            candidates=[
                _rerank(similarity=math.nan).candidates[0],
                _with_unknown_field(_rerank(memory_id="m2").candidates[0]),  # type: ignore[list-item]
            ]
        ),
        "candidates[1]: unknown field number 99",
    ),
    ("Rerank", _with_unknown_field(_rerank()), "request: unknown field number 99"),
    ("GetStats", _with_unknown_field(pb.GetStatsRequest()), "request: unknown field number 99"),
    (
        "Forget",
        pb.ForgetRequest(memories=_with_unknown_field(pb.MemoryIds(memory_ids=["m"]))),  # type: ignore[arg-type]
        "memories: unknown field number 99",
    ),
]


@pytest.mark.parametrize(
    ("method", "request_message", "message"),
    BAD_REQUESTS,
    ids=[f"{m}-{i}" for i, (m, _, _) in enumerate(BAD_REQUESTS)],
)
async def test_bad_input_is_invalid_argument_naming_the_field_and_writes_nothing(
    ranker: Ranker, method: str, request_message: Message, message: str
) -> None:
    before = await ranker.store.stats()
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await getattr(ranker.stub, method)(request_message)
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert message in (raised.value.details() or "")
    assert await ranker.store.stats() == before


# --- storage failure --------------------------------------------------------------------------


@pytest.mark.postgres
async def test_a_lost_database_answers_unavailable_not_an_internal_error() -> None:
    with temporary_database("mem0mcp_ranker_lost", vector=False) as url:
        store = await PostgresStore.open(url, max_size=1, wait_seconds=1)
        server = create_server(SETTINGS, store)
        await server.start()
        try:
            with psycopg.connect(postgres_url("postgres"), autocommit=True) as admin:
                admin.execute(f'DROP DATABASE "{url.rsplit("/", 1)[1]}" WITH (FORCE)')
            async with grpc.aio.insecure_channel(server.address) as channel:
                stub = ranker_pb2_grpc.RankerServiceStub(channel)
                with pytest.raises(grpc.aio.AioRpcError) as raised:
                    await stub.Reinforce(pb.ReinforceRequest(memory_id="m1", scope="u"))
            assert raised.value.code() == grpc.StatusCode.UNAVAILABLE
            assert "storage unavailable" in (raised.value.details() or "")
        finally:
            await server.stop(grace=1)
            await store.close()

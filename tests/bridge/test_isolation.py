"""Tenants cannot reach each other: by-id tools, scope keys and pins, and per-token grants.

In process, over a fake mem0 that (like mem0's official server) serves any id to anyone and
wipes on any reset: every boundary here is the bridge's own.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp import Client

from mem0_bridge import BridgeError, BridgeSettings, create_server
from mem0_bridge._access import EVERYTHING, Grant, Tokens, TokensFileError, bearer_token
from mem0_bridge._mem0 import Mem0Client
from mem0_bridge._service import MemoryService, Where
from tests.bridge._calls import call, call_error
from tests.fakes.mem0 import FakeMem0

pytestmark = pytest.mark.anyio

UNKNOWN = "No memory has id"


def _bridge(mem0: FakeMem0, **settings: object) -> Client:
    values = {"api_url": "http://mem0.test", "ranker_address": "", "judge_address": ""}
    return Client(
        create_server(
            BridgeSettings.model_validate({**values, **settings}), mem0_transport=mem0.transport
        )
    )


@pytest.fixture
def mem0() -> FakeMem0:
    return FakeMem0()


@pytest.fixture
async def seeded(mem0: FakeMem0) -> dict[str, str]:
    """One memory each: project h2proj and a pin of it, another user's, one with no user."""
    async with _bridge(mem0, project="h2proj") as client:
        ours = await call(client, "memory_add", text="h2proj deploys on Fridays")
        pin = await call(client, "memory_pin", text="Never force-push.")
        glob = await call(client, "memory_pin", text="Answer in English.", scope="global")
    async with _bridge(mem0, project="h2proj", default_user_id="someone-else") as client:
        theirs = await call(client, "memory_add", text="their secret plan")
    orphan = await call_direct(mem0, "an orphan memory")
    return {
        "ours": ours["memory_ids"][0],
        "pin": pin["pin"]["id"],
        "global_pin": glob["pin"]["id"],
        "theirs": theirs["memory_ids"][0],
        "orphan": orphan,
    }


async def call_direct(mem0: FakeMem0, text: str) -> str:
    """Store a memory with no user_id, as another client of mem0 could."""
    settings = BridgeSettings.model_validate({"api_url": "http://mem0.test"})
    client = Mem0Client(settings, transport=mem0.transport)
    stored = await client.add(text, user_id="", run_id="h2proj", infer=False, metadata={})
    await client.aclose()
    return stored[0][0]


# --- by-id tools are confined to the caller's namespaces --------------------------------------


@pytest.mark.parametrize("tool", ["memory_history", "memory_update", "memory_delete"])
@pytest.mark.parametrize("whose", ["theirs", "orphan"])
async def test_by_id_tools_answer_another_tenants_id_like_an_unknown_one(
    mem0: FakeMem0, seeded: dict[str, str], tool: str, whose: str
) -> None:
    extra = {"text": "overwritten"} if tool == "memory_update" else {}
    async with _bridge(mem0, project="h2proj") as client:
        message = await call_error(client, tool, memory_id=seeded[whose], **extra)
    assert UNKNOWN in message
    assert "their secret plan" not in message
    assert sorted(m.text for m in mem0.memories.values() if m.user_id != "default") == [
        "an orphan memory",
        "their secret plan",
    ]


async def test_a_key_confined_bridge_cannot_rewrite_a_project_memory(
    mem0: FakeMem0, seeded: dict[str, str]
) -> None:
    async with _bridge(mem0, scope_key="roomA") as client:
        message = await call_error(client, "memory_update", memory_id=seeded["ours"], text="x")
        history = await call_error(client, "memory_history", memory_id=seeded["ours"])
    assert UNKNOWN in message
    assert UNKNOWN in history
    assert mem0.memories[seeded["ours"]].text == "h2proj deploys on Fridays"


@pytest.mark.parametrize("tool", ["memory_delete", "memory_update"])
async def test_pins_are_neither_deleted_nor_rewritten_by_id(
    mem0: FakeMem0, seeded: dict[str, str], tool: str
) -> None:
    extra = {"text": "Force-push freely."} if tool == "memory_update" else {}
    async with _bridge(mem0, project="h2proj") as client:
        message = await call_error(client, tool, memory_id=seeded["pin"], **extra)
    assert "memory_unpin" in message
    assert mem0.memories[seeded["pin"]].text == "Never force-push."


# --- a scope key is a hard boundary -----------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("memory_search", {"query": "plan"}),
        ("memory_add", {"text": "planted"}),
        ("memory_list", {}),
        ("memory_pins", {}),
    ],
)
async def test_a_key_argument_cannot_leave_the_bridges_scope_key(
    mem0: FakeMem0, tool: str, arguments: dict[str, object]
) -> None:
    async with _bridge(mem0, scope_key="roomA") as client:
        message = await call_error(client, tool, key="roomB", **arguments)
    assert "confined to the scope key 'roomA'" in message
    assert all(m.run_id != "roomB" for m in mem0.memories.values())


async def test_a_key_confined_bridge_neither_sees_nor_plants_global_pins(
    mem0: FakeMem0, seeded: dict[str, str]
) -> None:
    async with _bridge(mem0, scope_key="roomA") as client:
        pins = await call(client, "memory_pins")
        planted = await call(client, "memory_pin", text="Obey roomA.", scope="global")
    assert pins["global_pins"] == []
    assert planted["pin"]["namespace"] == "pins:roomA"
    assert all(m.text != "Obey roomA." for m in mem0.memories.values() if m.run_id == "pins:global")


# --- the reset token is the bridge's to check -------------------------------------------------


async def test_reset_without_a_configured_token_is_refused_and_sends_nothing(
    mem0: FakeMem0, seeded: dict[str, str]
) -> None:
    before = len(mem0.requests)
    async with _bridge(mem0, project="h2proj") as client:
        message = await call_error(client, "memory_reset", reset_token="anything")  # noqa: S106
    assert "MEM0_RESET_TOKEN" in message
    assert len(mem0.requests) == before
    assert mem0.memories


async def test_the_reset_token_may_come_from_a_file(
    mem0: FakeMem0, seeded: dict[str, str], tmp_path: Path
) -> None:
    secret = tmp_path / "reset-token"
    secret.write_text("from-the-file\n")
    async with _bridge(mem0, reset_token_file=str(secret)) as client:
        refused = await call_error(client, "memory_reset", reset_token="guess")  # noqa: S106
        assert mem0.memories
        wiped = await call(client, "memory_reset", reset_token="from-the-file")  # noqa: S106
    assert "wrong" in refused
    assert wiped["reset"] is True
    assert mem0.memories == {}


# --- per-token grants ---------------------------------------------------------------------------

TEAM_A = Grant(name="team-a", projects=("alpha", "alpha-*"), global_access="read")


def _service(mem0: FakeMem0) -> MemoryService:
    from mem0_bridge._judge import JudgeClient  # noqa: PLC0415
    from mem0_bridge._ranker import RankerClient  # noqa: PLC0415

    settings = BridgeSettings.model_validate(
        {"api_url": "http://mem0.test", "ranker_address": "", "judge_address": ""}
    )
    return MemoryService(
        settings,
        Mem0Client(settings, transport=mem0.transport),
        RankerClient("", 1),
        JudgeClient("", 1),
    )


@pytest.mark.parametrize(
    ("attempt", "missing"),
    [
        (lambda s, w: s.add("x", "project", Where(None, "beta", TEAM_A)), "project 'beta'"),
        (lambda s, w: s.add("x", "global", Where(None, "alpha", TEAM_A)), "writing global"),
        (lambda s, w: s.search("x", "all", 5, Where(None, "alpha", TEAM_A)), 'scope="all"'),
        (lambda s, w: s.list_scope("project", 5, Where("roomB", None, TEAM_A)), "project 'roomB'"),
        (lambda s, w: s.pin("x", "global", Where(None, "alpha", TEAM_A)), "writing global"),
        (lambda s, w: s.reset("t", TEAM_A), "memory_reset"),
    ],
)
async def test_a_token_is_refused_what_its_grant_lacks_naming_it(
    mem0: FakeMem0,
    attempt: Callable[[MemoryService, None], object],
    missing: str,
) -> None:
    service = _service(mem0)
    with pytest.raises(BridgeError, match=f"token 'team-a' has no grant for {missing}"):
        await attempt(service, None)  # type: ignore[misc]
    assert mem0.requests == []


async def test_a_token_uses_its_projects_and_reads_global(mem0: FakeMem0) -> None:
    service = _service(mem0)
    everything = Where(None, "alpha-web", EVERYTHING)
    await service.add("alpha web deploys nightly", "global", everything)
    added = await service.add(
        "alpha web deploys at noon", "project", Where(None, "alpha-web", TEAM_A)
    )
    found = await service.search(
        "alpha web deploys", "project", 5, Where(None, "alpha-web", TEAM_A)
    )
    assert added.namespace == "alpha-web"
    assert {hit.namespace for hit in found.hits} == {"alpha-web", "global"}


async def test_a_token_without_global_access_searches_its_project_alone(mem0: FakeMem0) -> None:
    service = _service(mem0)
    await service.add("deploys nightly", "global", Where(None, "alpha", EVERYTHING))
    await service.add("deploys at noon", "project", Where(None, "alpha", EVERYTHING))
    local_only = Grant(name="team-b", projects=("alpha",))
    found = await service.search("deploys", "project", 5, Where(None, "alpha", local_only))
    assert {hit.namespace for hit in found.hits} == {"alpha"}


async def test_by_id_calls_answer_ids_outside_the_grant_like_unknown_ones(mem0: FakeMem0) -> None:
    service = _service(mem0)
    beta = await service.add("beta secret", "project", Where(None, "beta", EVERYTHING))
    with pytest.raises(BridgeError, match=UNKNOWN):
        await service.history(beta.memory_ids[0], Where(None, "beta", TEAM_A))


def _write_tokens(path: Path, body: str) -> Path:
    path.write_text(body)
    return path


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def test_a_tokens_file_maps_each_token_to_its_grant(tmp_path: Path) -> None:
    tokens_file = _write_tokens(
        tmp_path / "tokens.toml",
        f"""
[[tokens]]
name = "team-a"
sha256 = "{_digest("secret-a")}"
projects = ["alpha", "alpha-*"]
global = "read"
reset = false
""",
    )
    tokens = Tokens("the-bearer", tokens_file)
    assert tokens.grant_for("secret-a") == TEAM_A
    assert tokens.grant_for("the-bearer") is EVERYTHING
    assert tokens.grant_for("secret-b") is None


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('[[tokens]]\nname = "a"\nsha256 = "abc"\n', "sha256: 64 hex digits"),
        (f'[[tokens]]\nname = "a"\nsha256 = "{"0" * 64}"\nglobal = "all"\n', "global: one of"),
        (f'[[tokens]]\nname = "a"\nsha256 = "{"0" * 64}"\nproject = ["x"]\n', "unknown keys"),
        ("tokens = 3\n", "needs at least one"),
        ("[[tokens]\n", "tokens.toml"),
    ],
)
def test_a_bad_tokens_file_is_refused_naming_what_is_wrong(
    tmp_path: Path, body: str, message: str
) -> None:
    with pytest.raises(TokensFileError, match=message):
        Tokens(None, _write_tokens(tmp_path / "tokens.toml", body))


def test_a_reload_picks_up_new_tokens_and_keeps_the_old_table_on_a_broken_file(
    tmp_path: Path,
) -> None:
    entry = '[[tokens]]\nname = "{n}"\nsha256 = "{d}"\nprojects = ["p"]\n'
    path = _write_tokens(tmp_path / "t.toml", entry.format(n="one", d=_digest("t1")))
    tokens = Tokens(None, path)
    path.write_text(entry.format(n="two", d=_digest("t2")))
    tokens.reload()
    assert tokens.grant_for("t1") is None
    assert tokens.grant_for("t2") is not None
    path.write_text("not toml [")
    tokens.reload()
    assert tokens.grant_for("t2") is not None


@pytest.mark.parametrize("header", [b"Bearer tok", b"bearer tok", b"BEARER  tok "])
def test_the_bearer_scheme_is_matched_in_any_case(header: bytes) -> None:
    assert bearer_token(header) == "tok"


@pytest.mark.parametrize("header", [b"", b"Basic tok", b"Bearer", b"Bearer   "])
def test_other_schemes_and_empty_tokens_are_no_token(header: bytes) -> None:
    assert bearer_token(header) is None

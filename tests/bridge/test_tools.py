"""Every tool in process (official MCP client, in-memory transport) against the real stack.

All run on the in-process stack. One test per tool path, and the tests whose outcome rests on
mem0's score against a threshold, run on the full stack as well (`BOTH_STACKS`): mem0 blends
pgvector's keyword match into the score (halving it where a short query matches), which the
embedded store does not; the cosine part is the same on both.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Literal

import anyio
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp_types import ListRootsResult, Root
from pydantic import FileUrl

from mem0_bridge import BridgeSettings
from mem0_bridge._ranker import LeaseAnswer, RankerClient
from tests.bridge._calls import call, call_error, text_of
from tests.bridge.conftest import BOTH_STACKS, RESET_TOKEN, Stack
from tests.fakes.llm import FakeLLM
from tests.support.tools import TOOL_NAMES

pytestmark = pytest.mark.anyio

HIT_LINE = re.compile(r"^[0-9a-f-]{36}\t(\d\.\d{3}|-)\t(<1h|\d+h|\d+d|\d+mo|\d+y)\t.+$")


async def _ids(client: Client, tool: str = "memory_list", **arguments: object) -> list[str]:
    return [hit["id"] for hit in (await call(client, tool, **arguments))["hits"]]


async def test_every_tool_is_listed_with_a_description_and_an_output_schema(
    client: Client,
) -> None:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == set(TOOL_NAMES)
    for tool in tools.values():
        assert len(tool.description or "") > 40, tool.name
        assert tool.output_schema is not None, tool.name


@pytest.mark.parametrize("stack", BOTH_STACKS, indirect=True)
async def test_add_stores_a_new_fact_and_says_added(client: Client) -> None:
    result = await client.call_tool("memory_add", {"text": "The API listens on port 8080."})
    added = result.structured_content
    assert added is not None
    assert added["action"] == "added"
    assert text_of(result).startswith(f"added {added['memory_ids'][0]} in alpha")
    assert await _ids(client) == added["memory_ids"]


async def test_identical_add_is_a_duplicate_without_calling_mem0(
    client: Client, llm: FakeLLM
) -> None:
    first = await call(client, "memory_add", text="The cache lives in Redis.")
    llm.requests.clear()
    again = await call(client, "memory_add", text="The cache lives in Redis.")
    assert again["action"] == "duplicate"
    assert again["memory_ids"] == first["memory_ids"]
    assert llm.chat_requests == []
    assert await _ids(client) == first["memory_ids"]


async def test_a_bridge_shut_down_right_after_an_add_finishes_what_the_add_left(
    stack: Stack, settings: BridgeSettings, llm: FakeLLM
) -> None:
    text = "The deploy job runs at 02:00 UTC."
    async with Client(stack.server(settings)) as client:
        added = await call(client, "memory_add", text=text)
    # Shut down: the add's dedupe record and its scope's lease, left for after its answer,
    # were done before the bridge closed its ranker channel.
    scope = f"{settings.default_user_id}/alpha"
    ranker = RankerClient(settings.ranker_address, 5.0)
    try:
        recorded = await ranker.check_duplicate(scope, text)
        lease = await ranker.acquire_lease(f"scope/{scope}", "onlooker", 10.0)
    finally:
        await ranker.aclose()
    assert recorded == added["memory_ids"][0]
    assert isinstance(lease, LeaseAnswer)
    assert lease.granted


async def test_identical_adds_racing_store_one_memory(client: Client) -> None:
    results: list[dict[str, object]] = []

    async def add() -> None:
        results.append(await call(client, "memory_add", text="Releases are tagged vMAJOR.MINOR."))

    async with anyio.create_task_group() as tasks:
        for _ in range(4):
            tasks.start_soon(add)
    assert sorted(str(r["action"]) for r in results) == [
        "added",
        "duplicate",
        "duplicate",
        "duplicate",
    ]
    assert len(await _ids(client)) == 1


@pytest.mark.parametrize("stack", BOTH_STACKS, indirect=True)
async def test_paraphrase_reinforces_the_stored_fact_instead_of_adding(client: Client) -> None:
    first = await call(client, "memory_add", text="The API listens on port 8080.")
    again = await call(client, "memory_add", text="Our API service uses port 8080.")
    assert again["action"] == "reinforced"
    assert again["memory_ids"] == first["memory_ids"]
    assert again["mentions"] == 1
    assert await _ids(client) == first["memory_ids"]


@pytest.mark.parametrize("stack", BOTH_STACKS, indirect=True)
async def test_a_changed_fact_is_stored_and_the_old_value_superseded(client: Client) -> None:
    first = await call(client, "memory_add", text="The API listens on port 8080.")
    changed = await call(client, "memory_add", text="We moved the API to port 9000.")
    assert changed["action"] == "updated"
    assert changed["superseded_ids"] == first["memory_ids"]
    assert changed["previous_text"] == "The API listens on port 8080."
    listed = (await call(client, "memory_list"))["hits"]
    assert sorted((h["text"], h["current"], h["superseded_by"]) for h in listed) == [
        ("The API listens on port 8080.", False, changed["memory_ids"][0]),
        ("We moved the API to port 9000.", True, None),
    ]


async def test_a_wrong_change_is_undone_by_reinstating_the_old_value(client: Client) -> None:
    first = await call(client, "memory_add", text="The API listens on port 8080.")
    changed = await call(client, "memory_add", text="We moved the API to port 9000.")
    undone = await call(client, "memory_reinstate", memory_id=first["memory_ids"][0])
    assert undone["action"] == "reinstated"
    found = await call(client, "memory_search", query="Which port does the API listen on?")
    assert [(h["id"], h["current"]) for h in found["hits"]] == [
        (first["memory_ids"][0], True),
        (changed["memory_ids"][0], False),
    ]
    history = await call(client, "memory_history", memory_id=first["memory_ids"][0])
    assert history["current"] is True
    assert len(history["validity"]) == 2  # held, was superseded, holds again


async def test_unrelated_fact_is_added_beside_existing_ones(client: Client) -> None:
    await call(client, "memory_add", text="The API listens on port 8080.")
    other = await call(client, "memory_add", text="I prefer tea over coffee.")
    assert other["action"] == "added"
    assert len(await _ids(client)) == 2


async def test_add_with_inference_stores_each_extracted_fact(client: Client) -> None:
    added = await call(client, "memory_add", text="I use vim. The database is Postgres 15.")
    assert added["action"] == "added"
    assert sorted(added["memories"]) == ["I use vim.", "The database is Postgres 15."]
    assert len(added["memory_ids"]) == 2


async def test_add_without_inference_stores_the_text_verbatim(stack: Stack, llm: FakeLLM) -> None:
    async with Client(stack.server(stack.settings(project="alpha", infer=False))) as client:
        added = await call(client, "memory_add", text="I use vim. The database is Postgres 15.")
    assert added["memories"] == ["I use vim. The database is Postgres 15."]
    extraction = [r for r in llm.chat_requests if r.get("response_format")]
    assert not any("## New Messages" in str(r["messages"]) for r in extraction)


@pytest.mark.parametrize("text", ["", "   \n "])
async def test_add_of_empty_text_is_refused_naming_the_field(client: Client, text: str) -> None:
    message = await call_error(client, "memory_add", text=text)
    assert "text must not be empty" in message
    assert await _ids(client) == []


async def test_add_to_scope_all_is_refused_by_the_schema(client: Client) -> None:
    message = await call_error(client, "memory_add", text="A fact.", scope="all")
    assert "scope" in message


@pytest.mark.parametrize("stack", BOTH_STACKS, indirect=True)
async def test_search_renders_one_tab_separated_line_per_hit(client: Client) -> None:
    await call(client, "memory_add", text="The nightly backup runs at two in the morning.")
    result = await client.call_tool("memory_search", {"query": "when does the backup run?"})
    lines = text_of(result).splitlines()
    assert lines
    assert all(HIT_LINE.match(line) for line in lines), lines
    assert result.structured_content is not None
    hit = result.structured_content["hits"][0]
    assert lines[0] == f"{hit['id']}\t{hit['score']:.3f}\t<1h\t{hit['text']}"


async def test_search_in_project_scope_merges_global_memories(client: Client) -> None:
    project = await call(client, "memory_add", text="The nightly backup runs at two.")
    shared = await call(client, "memory_add", text="Backups are kept for 30 days.", scope="global")
    found = await _ids(client, "memory_search", query="backup")
    assert set(found) == {*project["memory_ids"], *shared["memory_ids"]}


async def test_search_in_global_scope_reads_only_global(client: Client) -> None:
    await call(client, "memory_add", text="The nightly backup runs at two.")
    shared = await call(client, "memory_add", text="Backups are kept for 30 days.", scope="global")
    found = await _ids(client, "memory_search", query="backup", scope="global")
    assert found == shared["memory_ids"]


async def test_search_in_all_scope_reads_every_project(client: Client) -> None:
    alpha = await call(client, "memory_add", text="The nightly backup runs at two.")
    beta = await call(client, "memory_add", text="Backups go to S3.", project="beta")
    found = await _ids(client, "memory_search", query="backup", scope="all")
    assert set(found) == {*alpha["memory_ids"], *beta["memory_ids"]}


async def test_project_memories_do_not_leak_into_another_project(client: Client) -> None:
    await call(client, "memory_add", text="The nightly backup runs at two.")
    assert await _ids(client, "memory_search", query="backup", project="beta") == []
    assert await _ids(client, "memory_list", project="beta") == []


async def test_search_returns_at_most_limit_hits(client: Client) -> None:
    for text in (
        "The nightly backup runs at two.",
        "Backup files are encrypted with age.",
        "Old backup tapes go offsite.",
    ):
        await call(client, "memory_add", text=text)
    assert len(await _ids(client, "memory_search", query="backups", limit=2)) == 2


@pytest.mark.parametrize("limit", [0, 51])
async def test_search_limit_out_of_range_is_refused(client: Client, limit: int) -> None:
    message = await call_error(client, "memory_search", query="x", limit=limit)
    assert "limit" in message


async def test_question_is_also_searched_as_its_rewritten_statement(client: Client) -> None:
    await call(client, "memory_add", text="The API uses port 8080.")
    with anyio.fail_after(60):  # a rewrite not back in time is searched from the next search on
        while True:
            result = await call(client, "memory_search", query="what port does the API use?")
            if result["rewritten_query"] is not None:
                break
            await anyio.sleep(0.1)
    assert result["rewritten_query"] == "The API uses port"
    assert result["reranked"] is True
    assert result["notes"] == []


async def test_query_rewrite_can_be_turned_off(stack: Stack, llm: FakeLLM) -> None:
    async with Client(stack.server(stack.settings(project="a", query_rewrite=False))) as client:
        result = await call(client, "memory_search", query="what port does the API use?")
    assert result["rewritten_query"] is None
    assert not any("rewrite" in str(r["messages"]) for r in llm.chat_requests)


@pytest.mark.parametrize("stack", BOTH_STACKS, indirect=True)
async def test_recent_lists_newest_first(client: Client) -> None:
    first = await call(client, "memory_add", text="Alpha fact number 1.", scope="project")
    second = await call(client, "memory_add", text="Totally different topic: 2 cats.")
    recent = await _ids(client, "memory_recent")
    assert recent == [*second["memory_ids"], *first["memory_ids"]]
    assert await _ids(client, "memory_recent", limit=1) == second["memory_ids"]


async def test_list_of_project_scope_leaves_out_global(client: Client) -> None:
    project = await call(client, "memory_add", text="The nightly backup runs at two.")
    await call(client, "memory_add", text="I prefer tea.", scope="global")
    assert await _ids(client) == project["memory_ids"]


async def test_pin_is_stored_verbatim_and_returned_by_pins(client: Client) -> None:
    text = "Always run `make test` before committing. Never push to main."
    pinned = await call(client, "memory_pin", text=text)
    assert pinned["action"] == "pinned"
    assert pinned["pin"]["namespace"] == "pins:alpha"
    pins = await call(client, "memory_pins")
    assert [p["text"] for p in pins["local_pins"]] == [text]


async def test_pinning_the_same_text_again_is_deduped(client: Client) -> None:
    first = await call(client, "memory_pin", text="Use tabs.")
    again = await call(client, "memory_pin", text="  Use   tabs. ")
    assert again["action"] == "already_pinned"
    assert again["pin"]["id"] == first["pin"]["id"]


async def test_pins_returns_global_and_local_pins_together(client: Client) -> None:
    await call(client, "memory_pin", text="Answer in English.", scope="global")
    await call(client, "memory_pin", text="This repo uses poetry.")
    result = await client.call_tool("memory_pins", {})
    pins = result.structured_content
    assert pins is not None
    assert [p["text"] for p in pins["global_pins"]] == ["Answer in English."]
    assert [p["text"] for p in pins["local_pins"]] == ["This repo uses poetry."]
    assert "global pins:" in text_of(result)
    assert "pins of project alpha:" in text_of(result)


async def test_pins_never_appear_in_search_list_or_recent(client: Client) -> None:
    await call(client, "memory_pin", text="The backup password lives in the vault.")
    await call(client, "memory_pin", text="Backups are sacred.", scope="global")
    for scope in ("project", "global", "all"):
        assert await _ids(client, "memory_search", query="backup", scope=scope) == []
        assert await _ids(client, "memory_list", scope=scope) == []
        assert await _ids(client, "memory_recent", scope=scope) == []


@pytest.mark.parametrize("stack", BOTH_STACKS, indirect=True)
async def test_unpin_removes_a_pin(client: Client) -> None:
    pinned = await call(client, "memory_pin", text="Use tabs.")
    removed = await call(client, "memory_unpin", memory_id=pinned["pin"]["id"])
    assert removed["action"] == "unpinned"
    assert (await call(client, "memory_pins"))["local_pins"] == []


async def test_unpin_refuses_an_ordinary_memory(client: Client) -> None:
    added = await call(client, "memory_add", text="The API listens on port 8080.")
    message = await call_error(client, "memory_unpin", memory_id=added["memory_ids"][0])
    assert "not a pin" in message
    assert "memory_delete" in message
    assert await _ids(client) == added["memory_ids"]


@pytest.mark.parametrize("stack", BOTH_STACKS, indirect=True)
async def test_update_rewrites_a_memory_keeping_its_id(client: Client) -> None:
    added = await call(client, "memory_add", text="The API listens on port 8080.")
    memory_id = added["memory_ids"][0]
    updated = await call(client, "memory_update", memory_id=memory_id, text="The API is gone.")
    assert updated["previous_text"] == "The API listens on port 8080."
    listed = (await call(client, "memory_list"))["hits"]
    assert [(h["id"], h["text"]) for h in listed] == [(memory_id, "The API is gone.")]


@pytest.mark.parametrize("stack", BOTH_STACKS, indirect=True)
async def test_delete_removes_one_memory(client: Client) -> None:
    kept = await call(client, "memory_add", text="The API listens on port 8080.")
    gone = await call(client, "memory_add", text="I prefer tea over coffee.")
    deleted = await call(client, "memory_delete", memory_id=gone["memory_ids"][0])
    assert deleted["text"] == "I prefer tea over coffee."
    assert await _ids(client) == kept["memory_ids"]


@pytest.mark.parametrize("stack", BOTH_STACKS, indirect=True)
async def test_history_shows_the_add_and_the_update(client: Client) -> None:
    added = await call(client, "memory_add", text="The API listens on port 8080.")
    memory_id = added["memory_ids"][0]
    await call(client, "memory_update", memory_id=memory_id, text="The API listens on 9000.")
    result = await client.call_tool("memory_history", {"memory_id": memory_id})
    assert result.structured_content is not None
    events = result.structured_content["events"]
    assert [e["event"] for e in events] == ["ADD", "UPDATE"]
    assert events[1]["old_text"] == "The API listens on port 8080."
    assert events[1]["new_text"] == "The API listens on 9000."
    assert "UPDATE" in text_of(result)


@pytest.mark.parametrize(
    "tool", ["memory_update", "memory_delete", "memory_unpin", "memory_history"]
)
async def test_unknown_memory_id_is_reported_as_not_found(client: Client, tool: str) -> None:
    arguments = {"memory_id": str(uuid.uuid4())}
    if tool == "memory_update":
        arguments["text"] = "new text"
    message = await call_error(client, tool, **arguments)
    assert arguments["memory_id"] in message


async def test_memory_of_another_user_is_not_found(stack: Stack, client: Client) -> None:
    async with Client(stack.server(stack.settings(project="alpha"))) as other:
        theirs = await call(other, "memory_add", text="Their secret plan.")
    message = await call_error(client, "memory_delete", memory_id=theirs["memory_ids"][0])
    assert "No memory has id" in message


async def test_reset_without_the_token_says_to_ask_the_human(client: Client) -> None:
    added = await call(client, "memory_add", text="The API listens on port 8080.")
    message = await call_error(client, "memory_reset")
    assert "only the human user holds" in message
    assert await _ids(client) == added["memory_ids"]


async def test_reset_with_a_wrong_token_wipes_nothing(client: Client) -> None:
    added = await call(client, "memory_add", text="The API listens on port 8080.")
    message = await call_error(client, "memory_reset", reset_token="guessed-token")  # noqa: S106
    assert "the reset token is wrong" in message
    assert await _ids(client) == added["memory_ids"]


@pytest.mark.parametrize("stack", BOTH_STACKS, indirect=True)
async def test_reset_with_the_token_wipes_the_store(client: Client) -> None:
    await call(client, "memory_add", text="The API listens on port 8080.")
    await call(client, "memory_pin", text="Use tabs.")
    assert (await call(client, "memory_reset", reset_token=RESET_TOKEN))["reset"] is True
    assert await _ids(client, scope="all") == []
    assert (await call(client, "memory_pins"))["local_pins"] == []
    again = await call(client, "memory_add", text="The API listens on port 8080.")
    assert again["action"] == "added"


async def test_scope_key_setting_confines_every_call_to_one_namespace(stack: Stack) -> None:
    settings = stack.settings(project="alpha", scope_key="room-7")
    async with Client(stack.server(settings)) as client:
        added = await call(client, "memory_add", text="The meeting is on Friday.", scope="global")
        assert added["namespace"] == "room-7"
        for scope in ("project", "global", "all"):
            assert (
                await _ids(client, "memory_search", query="meeting", scope=scope)
                == (added["memory_ids"])
            )


async def test_key_argument_overrides_scope_and_project(client: Client) -> None:
    added = await call(client, "memory_add", text="The meeting is on Friday.", key="room-9")
    assert added["namespace"] == "room-9"
    assert await _ids(client, "memory_list") == []
    assert await _ids(client, "memory_list", key="room-9") == added["memory_ids"]


async def test_project_argument_overrides_the_configured_project(client: Client) -> None:
    added = await call(client, "memory_add", text="The meeting is on Friday.", project="beta")
    assert added["namespace"] == "beta"


@pytest.mark.parametrize("project", ["global", "pins:alpha", " "])
async def test_reserved_or_empty_project_names_are_refused(client: Client, project: str) -> None:
    message = await call_error(client, "memory_add", text="A fact.", project=project)
    assert "project" in message


async def test_project_scoped_call_without_a_project_says_how_to_fix_it(
    stack: Stack, llm: FakeLLM
) -> None:
    async with Client(stack.server(stack.settings())) as client:
        message = await call_error(client, "memory_add", text="A fact.")
        assert 'project="<repository name>"' in message
        shared = await call(client, "memory_add", text="A global fact.", scope="global")
        assert shared["namespace"] == "global"


async def test_pins_without_a_project_return_global_pins_and_say_why(stack: Stack) -> None:
    async with Client(stack.server(stack.settings())) as client:
        await call(client, "memory_pin", text="Answer in English.", scope="global")
        pins = await call(client, "memory_pins")
    assert [p["text"] for p in pins["global_pins"]] == ["Answer in English."]
    assert any("project=" in note for note in pins["notes"])


def test_settings_fixture_uses_a_fresh_user_each_time(stack: Stack) -> None:
    first: BridgeSettings = stack.settings()
    assert first.default_user_id != stack.settings().default_user_id


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_project_comes_from_the_client_roots_when_nothing_else_names_it(
    stack: Stack, tmp_path: Path, mode: Literal["auto", "legacy"]
) -> None:
    async def share_roots(context: ClientRequestContext) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=FileUrl((tmp_path / "billing").as_uri()))])

    server = stack.server(stack.settings())
    async with Client(server, list_roots_callback=share_roots, mode=mode) as client:
        added = await call(client, "memory_add", text="Invoices go out on the 1st.")
    assert added["namespace"] == "billing"


async def test_recent_puts_a_just_updated_memory_first(client: Client) -> None:
    old = await call(client, "memory_add", text="The nightly backup runs at two.")
    await call(client, "memory_add", text="Old backup tapes go offsite.")
    await call(client, "memory_update", memory_id=old["memory_ids"][0], text="Backups run at 3.")
    assert (await _ids(client, "memory_recent"))[0] == old["memory_ids"][0]


async def test_an_extracted_fact_added_again_verbatim_is_a_duplicate(client: Client) -> None:
    added = await call(client, "memory_add", text="I use vim. The database is Postgres 15.")
    again = await call(client, "memory_add", text="The database is Postgres 15.")
    assert again["action"] == "duplicate"
    assert again["memory_ids"][0] in added["memory_ids"]


@pytest.mark.parametrize("stack", BOTH_STACKS, indirect=True)
async def test_candidates_below_the_prefilter_threshold_are_not_judged(
    stack: Stack, llm: FakeLLM
) -> None:
    settings = stack.settings(project="alpha", reinforcement_prefilter_threshold=0.99)
    async with Client(stack.server(settings)) as client:
        await call(client, "memory_add", text="The API listens on port 8080.")
        llm.requests.clear()
        again = await call(client, "memory_add", text="Our API service uses port 8080.")
    assert again["action"] == "added"
    assert not any("mem0-judge compare" in str(r["messages"]) for r in llm.chat_requests)


@pytest.mark.parametrize("stack", BOTH_STACKS, indirect=True)
async def test_the_judge_sees_at_most_the_configured_number_of_candidates(
    stack: Stack, llm: FakeLLM
) -> None:
    seeding = stack.settings(project="alpha", judge_address="")
    async with Client(stack.server(seeding)) as client:
        for text in ("API port is 1.", "API host is 2.", "API path is 3.", "API name is 4."):
            await call(client, "memory_add", text=text)
    judging = stack.settings(
        project="alpha", default_user_id=seeding.default_user_id, judge_max_candidates=2
    )
    async with Client(stack.server(judging)) as client:
        llm.requests.clear()
        await call(client, "memory_add", text="The API version is 5.")
    compares = [
        message["content"]
        for request in llm.chat_requests
        if "mem0-judge compare" in str(request)
        for message in request["messages"]
        if message["role"] == "user"
    ]
    # The first asks about the candidates; any further one asks a change again the other way
    # round, about the new statement alone.
    assert compares[0].count("<memory id=") == 2
    assert all(c.count("<memory id=") == 1 for c in compares[1:])

"""Tool arguments as an MCP client sends them: names, types and namespaces, refused or derived
the same way in every tool (the bridge in process over a fake mem0, helpers off)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Literal

import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp_types import ListRootsResult, Root
from pydantic import FileUrl

from mem0_bridge import BridgeSettings, create_server
from mem0mcp.contract import MAX_COMPARE_CANDIDATES, MAX_TEXT_CHARS
from scripts.run_stack import stack_commands
from tests.bridge._calls import call, call_error
from tests.fakes.mem0 import FakeMem0

pytestmark = pytest.mark.anyio


@pytest.fixture
def mem0() -> FakeMem0:
    return FakeMem0()


@pytest.fixture
async def client(mem0: FakeMem0) -> AsyncIterator[Client]:
    settings = BridgeSettings.model_validate(
        {"api_url": "http://mem0.test", "ranker_address": "", "judge_address": ""}
    )
    async with Client(create_server(settings, mem0_transport=mem0.transport)) as connected:
        yield connected


# --- what the agent sends: the input schemas ------------------------------------------------


async def test_the_input_schemas_hold_only_what_the_agent_sends(client: Client) -> None:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    for name, tool in tools.items():
        properties = tool.input_schema["properties"]
        # The service, the resolved scope and the caller's grant are filled by the bridge.
        assert not {"service", "where", "grant", "roots", "ctx"} & set(properties), name
        assert tool.input_schema.get("additionalProperties") is False, name
        if name != "memory_reset":
            assert {"project", "key"} <= set(properties), name
    assert set(tools["memory_reset"].input_schema["properties"]) == {"reset_token"}


async def test_tool_hints_say_which_tools_only_read_and_which_remove(client: Client) -> None:
    hints = {tool.name: tool.annotations for tool in (await client.list_tools()).tools}
    read_only = {name for name, hint in hints.items() if hint and hint.read_only_hint}
    assert read_only == {
        "memory_search",
        "memory_list",
        "memory_recent",
        "memory_pins",
        "memory_history",
    }
    destructive = {name for name, hint in hints.items() if hint and hint.destructive_hint}
    assert destructive == {"memory_unpin", "memory_update", "memory_delete", "memory_reset"}


# --- 12. unknown arguments, coercion and JSON-in-strings --------------------------------------


async def test_an_unknown_argument_is_refused_naming_it(client: Client, mem0: FakeMem0) -> None:
    message = await call_error(client, "memory_add", text="a fact", project="p", scope_key="k")
    assert "scope_key" in message
    assert "Extra inputs are not permitted" in message
    assert mem0.requests == []


async def test_a_numeric_string_is_not_a_limit(client: Client, mem0: FakeMem0) -> None:
    message = await call_error(client, "memory_search", query="q", project="p", limit="5")
    assert "limit" in message
    assert mem0.requests == []


@pytest.mark.parametrize("value", ["null", '["x"]', "42", "{}"])
async def test_string_arguments_stay_strings(client: Client, mem0: FakeMem0, value: str) -> None:
    added = await call(client, "memory_add", text="a fact", key=value)
    assert added["namespace"] == value


# --- 11. names with whitespace name one namespace, in every tool ------------------------------


async def test_a_project_with_spaces_is_one_namespace_for_add_pin_and_search(
    client: Client,
) -> None:
    added = await call(client, "memory_add", text="The API port is 8080", project="my app")
    pinned = await call(client, "memory_pin", text="Use tabs.", project=" my   app ")
    found = await call(client, "memory_search", query="API port", project="my\tapp")
    assert added["namespace"] == "my-app"
    assert pinned["pin"]["namespace"] == "pins:my-app"
    assert [hit["id"] for hit in found["hits"]] == added["memory_ids"]


async def test_a_key_with_control_characters_is_refused_the_same_everywhere(
    client: Client,
) -> None:
    for tool, extra in [("memory_add", {"text": "f"}), ("memory_search", {"query": "q"})]:
        message = await call_error(client, tool, key="a\x00b", **extra)
        assert "key must not contain control characters" in message


# --- 8. one set of limits ---------------------------------------------------------------------


def test_the_bridge_cannot_ask_the_judge_for_more_candidates_than_the_protocol_allows() -> None:
    with pytest.raises(ValueError, match="less than or equal"):
        BridgeSettings.model_validate({"judge_max_candidates": MAX_COMPARE_CANDIDATES + 1})


async def test_a_fact_at_the_shared_limit_is_stored_and_one_past_it_refused(
    client: Client,
) -> None:
    fact = ("The API listens on port 8080. " * MAX_TEXT_CHARS)[:MAX_TEXT_CHARS]
    assert (await call(client, "memory_add", text=fact, project="p"))["action"] == "added"
    message = await call_error(client, "memory_add", text=fact + "x", project="p")
    assert f"the limit is {MAX_TEXT_CHARS}" in message


# --- 13. make run follows moved ports ---------------------------------------------------------


def test_the_local_stack_points_the_bridge_at_moved_ports() -> None:
    moved = {"MEM0_LOCAL_PORT": "9100", "RANKER_PORT": "9200", "JUDGE_PORT": "9300"}
    stack = {name: env for name, _, env in stack_commands(moved)}
    bridge = stack["bridge"]
    assert bridge["MEM0_API_URL"] == "http://127.0.0.1:9100"
    assert bridge["MEM0_RANKER_ADDRESS"] == "127.0.0.1:9200"
    assert bridge["MEM0_JUDGE_ADDRESS"] == "127.0.0.1:9300"


def test_an_explicit_bridge_address_still_wins_over_a_moved_port() -> None:
    stack = {
        name: env
        for name, _, env in stack_commands({"RANKER_PORT": "9200", "MEM0_RANKER_ADDRESS": ""})
    }
    assert stack["bridge"]["MEM0_RANKER_ADDRESS"] == ""


# --- client roots: named from the URI, and a root that is not a file is ignored ---------------


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_project_comes_from_a_file_root_by_its_name_alone(
    mem0: FakeMem0, mode: Literal["auto", "legacy"]
) -> None:
    async def share_roots(context: ClientRequestContext) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=FileUrl("file:///home/dev/My%20Billing"))])

    settings = BridgeSettings.model_validate(
        {"api_url": "http://mem0.test", "ranker_address": "", "judge_address": ""}
    )
    server = create_server(settings, mem0_transport=mem0.transport)
    async with Client(server, list_roots_callback=share_roots, mode=mode) as client:
        added = await call(client, "memory_add", text="Invoices go out on the 1st.")
    assert added["namespace"] == "My-Billing"


async def test_a_root_that_is_not_a_file_is_ignored_with_a_clear_answer(mem0: FakeMem0) -> None:
    async def share_roots(context: ClientRequestContext) -> ListRootsResult:
        # What a non-conformant client sends: built without the client-side validation.
        return ListRootsResult.model_construct(
            roots=[Root.model_construct(uri="https://example.test/repo")]
        )

    settings = BridgeSettings.model_validate(
        {"api_url": "http://mem0.test", "ranker_address": "", "judge_address": ""}
    )
    server = create_server(settings, mem0_transport=mem0.transport)
    async with Client(server, list_roots_callback=share_roots, mode="legacy") as client:
        message = await call_error(client, "memory_add", text="Invoices go out on the 1st.")
        found = await call(client, "memory_search", query="invoices", scope="global")
    assert 'project="<repository name>"' in message
    assert found["hits"] == []

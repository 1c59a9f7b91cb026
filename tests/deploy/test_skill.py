"""The shared-memory skill loads as a Claude Code skill and names the bridge's tools exactly."""

from __future__ import annotations

import re

import pytest
from mcp import Client

from mem0_bridge import BridgeSettings, create_server
from tests.deploy._repo import SKILL_FILE, skill_front_matter_and_body
from tests.support.tools import TOOL_NAMES


def test_front_matter_names_the_skill_after_its_folder() -> None:
    metadata, _ = skill_front_matter_and_body()
    assert metadata["name"] == SKILL_FILE.parent.name == "shared-memory"


def test_front_matter_description_says_when_to_use_it() -> None:
    metadata, _ = skill_front_matter_and_body()
    description = metadata["description"]
    assert isinstance(description, str)
    # Claude Code caps a skill description at 1024 characters.
    assert 50 < len(description) <= 1024
    assert "memory_" in description


@pytest.mark.parametrize("tool", TOOL_NAMES)
def test_body_names_every_tool(tool: str) -> None:
    _, body = skill_front_matter_and_body()
    assert re.search(rf"`{tool}\(", body), f"SKILL.md never shows `{tool}(...)`"


def test_body_names_no_tool_that_does_not_exist() -> None:
    _, body = skill_front_matter_and_body()
    named = set(re.findall(r"\bmemory_[a-z_]+\b", body)) - {"memory_id"}  # a parameter
    assert named <= set(TOOL_NAMES), f"unknown tool names: {sorted(named - set(TOOL_NAMES))}"


def test_body_forbids_resetting_without_the_humans_token() -> None:
    _, body = skill_front_matter_and_body()
    assert re.search(r"Never call `memory_reset\(reset_token\)`", body)
    assert "token" in body.split("memory_reset", 2)[1][:400]


def test_skill_stays_short_enough_to_read_every_session() -> None:
    assert len(SKILL_FILE.read_text().splitlines()) <= 130


async def _bridge_tools() -> dict[str, set[str]]:
    """Tool name -> parameter names, as the bridge lists them to an MCP client."""
    settings = BridgeSettings(ranker_address="", judge_address="")
    async with Client(create_server(settings), raise_exceptions=True) as client:
        listed = await client.list_tools()
    return {
        tool.name: set((tool.input_schema or {}).get("properties", {})) for tool in listed.tools
    }


def _skill_calls() -> list[tuple[str, set[str]]]:
    """Every `memory_x(a, b?, c="v")` the skill shows, with the parameter names it uses."""
    _, body = skill_front_matter_and_body()
    calls = []
    for name, arguments in re.findall(r"`(memory_[a-z_]+)\(([^)]*)\)", body):
        parameters = {
            part.split("=", 1)[0].strip().rstrip("?") for part in arguments.split(",") if part
        }
        calls.append((name, parameters - {""}))
    return calls


@pytest.mark.anyio
async def test_skill_names_exactly_the_tools_the_bridge_lists() -> None:
    assert set(await _bridge_tools()) == set(TOOL_NAMES)


@pytest.mark.anyio
async def test_skill_uses_only_parameters_the_bridge_tools_take() -> None:
    tools = await _bridge_tools()
    for name, parameters in _skill_calls():
        unknown = parameters - tools[name]
        assert not unknown, f"SKILL.md shows {name}({', '.join(sorted(unknown))}), not a parameter"

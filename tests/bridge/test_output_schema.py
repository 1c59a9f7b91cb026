"""What keeps the official MCP SDK's work per call cheap: output schemas rewritten to be cheap to
validate (accepting exactly what pydantic's did), and the class resolved values are wrapped in
kept alive."""

from __future__ import annotations

import gc
import weakref
from typing import Any, Literal

import pytest
from jsonschema.validators import validator_for
from mcp import Client
from pydantic import BaseModel, TypeAdapter
from referencing import Registry

from mem0_bridge import BridgeSettings, create_server
from mem0_bridge._models import HistoryResult, SearchResult
from mem0_bridge._output_schema import cheap_to_validate

_NULL = {"type": "null"}


def _pydantic_schema(model: type[BaseModel]) -> dict[str, Any]:
    return TypeAdapter(model).json_schema()


def _accepts(schema: dict[str, Any], instance: object) -> bool:
    validator = validator_for(schema)(schema, registry=Registry())
    return not list(validator.iter_errors(instance))


def _nodes(schema: object) -> list[dict[str, Any]]:
    if isinstance(schema, list):
        return [node for item in schema for node in _nodes(item)]
    if not isinstance(schema, dict):
        return []
    return [schema, *(node for value in schema.values() for node in _nodes(value))]


_HIT = {
    "id": "8e5b0f4e-0d7e-4f57-9a43-4f0e8f0c5e11",
    "text": "The API listens on port 8080.",
    "namespace": "alpha",
    "score": 0.81,
    "similarity": 0.77,
    "mentions": 2,
    "age": "3d",
    "created_at": "2026-12-03T10:00:00+00:00",
    "updated_at": None,
    "current": False,
    "valid_from": "2026-12-03T10:00:00+00:00",
    "valid_until": "2026-12-05T10:00:00+00:00",
    "superseded_by": "1d2c3b4a-0000-4000-8000-000000000000",
}
_SEARCH = {
    "query": "Which port does the API use?",
    "rewritten_query": None,
    "as_of": None,
    "reranked": True,
    "hits": [_HIT, {**_HIT, "namespace": None, "score": None, "mentions": None}],
    "notes": [],
}


@pytest.mark.parametrize(
    ("instance", "valid"),
    [
        pytest.param(_SEARCH, True, id="valid"),
        pytest.param({**_SEARCH, "hits": []}, True, id="no hits"),
        pytest.param({**_SEARCH, "rewritten_query": "The API uses 8080."}, True, id="a string"),
        pytest.param({**_SEARCH, "rewritten_query": 7}, False, id="a number for a string"),
        pytest.param({**_SEARCH, "hits": [{**_HIT, "score": "high"}]}, False, id="a bad score"),
        pytest.param({**_SEARCH, "hits": [{**_HIT, "id": None}]}, False, id="null for an id"),
        pytest.param(
            {**_SEARCH, "hits": [{k: v for k, v in _HIT.items() if k != "text"}]},
            False,
            id="a hit without its text",
        ),
        pytest.param({**_SEARCH, "hits": [None]}, False, id="null for a hit"),
        pytest.param(
            {k: v for k, v in _SEARCH.items() if k != "reranked"}, False, id="no reranked"
        ),
    ],
)
def test_a_search_result_is_judged_alike_by_both_schemas(instance: object, valid: bool) -> None:
    original = _pydantic_schema(SearchResult)
    assert _accepts(original, instance) is valid
    assert _accepts(cheap_to_validate(original), instance) is valid


def test_a_history_result_is_judged_alike_by_both_schemas() -> None:
    original = _pydantic_schema(HistoryResult)
    valid = {
        "memory_id": "m",
        "events": [{"event": "ADD", "old_text": None, "new_text": "x", "at": None}],
        "current": True,
        "validity": [{"valid_from": "2026-12-03T10:00:00+00:00", "valid_until": None}],
        "superseded_by": None,
        "supersedes": [],
        "folded_into": None,
    }
    for instance in (valid, {**valid, "validity": [{"valid_from": None, "valid_until": None}]}):
        assert _accepts(cheap_to_validate(original), instance) == _accepts(original, instance)


class _Tree(BaseModel):
    name: str
    children: list[_Tree]


def test_a_recursive_model_stays_a_reference() -> None:
    flat = cheap_to_validate(_pydantic_schema(_Tree))
    leaf = {"name": "leaf", "children": []}
    assert _accepts(flat, {"name": "root", "children": [leaf]})
    assert not _accepts(flat, {"name": "root", "children": [{"name": 3, "children": []}]})


class _Choice(BaseModel):
    kind: Literal["a", "b"] | None


def test_a_nullable_choice_keeps_null_and_refuses_other_values() -> None:
    flat = cheap_to_validate(_pydantic_schema(_Choice))
    assert _accepts(flat, {"kind": None})
    assert _accepts(flat, {"kind": "a"})
    assert not _accepts(flat, {"kind": "c"})


@pytest.mark.anyio
async def test_no_published_output_schema_holds_a_reference_or_a_nullable_any_of() -> None:
    server = create_server(BridgeSettings(api_url="http://127.0.0.1:9"))
    async with Client(server) as client:
        tools = (await client.list_tools()).tools
    assert tools
    for tool in tools:
        for node in _nodes(tool.output_schema):
            assert "$ref" not in node, tool.name
            if _NULL in node.get("anyOf", []):
                # kept only where the other branch refuses a null by itself (an enum)
                assert any("enum" in b or "const" in b for b in node["anyOf"]), (tool.name, node)


def test_the_class_the_sdk_wraps_resolved_values_in_outlives_garbage_collection() -> None:
    # pydantic caches `AcceptedElicitation[Any]` weakly: unless the bridge holds it, every
    # collection drops it and the next tool call builds the class again.
    from mcp.server.mcpserver.resolve import _accepted  # noqa: PLC0415

    import mem0_bridge._server  # noqa: F401, PLC0415 - what holds the class

    made = weakref.ref(type(_accepted("value")))
    gc.collect()
    assert made() is not None

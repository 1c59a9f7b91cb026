"""Tool arguments taken as sent: unknown names refused, strings kept strings, no coercion.

The MCP SDK's argument handling is lenient in ways that change what a call does: an unknown
argument is dropped (a typo like `scope_key` then writes to the project scope), a string is
JSON-decoded before validation (`key="null"` becomes no key, `project='["x"]'` a list) and a
numeric string passes for a number. A memory service must refuse such calls instead, naming
the argument, so each tool is built here with a stricter argument model.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp_types import ToolAnnotations
from pydantic import ConfigDict


class _AsSent(FuncMetadata):
    """`FuncMetadata` without the SDK's JSON pre-parsing of string arguments."""

    def pre_parse_json(self, data: dict[str, Any]) -> dict[str, Any]:
        return dict(data)


def strict_tool(fn: Callable[..., Any], annotations: ToolAnnotations) -> Tool:
    """`fn` as a tool whose argument model forbids unknown names and coercion; its description
    is its docstring on one line."""
    tool = Tool.from_function(
        fn, description=" ".join((fn.__doc__ or "").split()), annotations=annotations
    )
    lenient = tool.fn_metadata.arg_model
    strict: type[ArgModelBase] = type(
        lenient.__name__,
        (lenient,),
        {
            "model_config": ConfigDict(
                **{**lenient.model_config, "extra": "forbid", "strict": True}
            ),
            "__module__": lenient.__module__,
        },
    )
    metadata = tool.fn_metadata
    as_sent = _AsSent(
        arg_model=strict,
        output_schema=metadata.output_schema,
        output_model=metadata.output_model,
        wrap_output=metadata.wrap_output,
    )
    return tool.model_copy(
        update={"fn_metadata": as_sent, "parameters": strict.model_json_schema(by_alias=True)}
    )

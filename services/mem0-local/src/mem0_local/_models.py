"""Request bodies of mem0's REST API, validated before anything reaches mem0.

Field names and defaults follow mem0's official server, so a client written for it works here.
Unknown fields are ignored, as there.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field

#: mem0 rejects empty ids and ids with whitespace; saying so here names the field in a 422.
EntityId = Annotated[str, Field(min_length=1, max_length=256, pattern=r"^\S+$")]
#: mem0 stores expiration dates as YYYY-MM-DD.
IsoDate = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]


class Message(BaseModel):
    role: str = Field(min_length=1, description="Role of the message (user or assistant).")
    content: str = Field(description="Message content.")


class Ids(BaseModel):
    user_id: EntityId | None = None
    agent_id: EntityId | None = None
    run_id: EntityId | None = None

    def given(self) -> dict[str, str]:
        """The ids that were set; mem0 needs at least one to scope every call."""
        return {
            key: value
            for key, value in (
                ("user_id", self.user_id),
                ("agent_id", self.agent_id),
                ("run_id", self.run_id),
            )
            if value is not None
        }


class MemoryCreate(Ids):
    messages: list[Message] = Field(min_length=1, description="Messages to remember.")
    metadata: dict[str, Any] | None = None
    infer: bool = Field(default=True, description="Extract facts with the LLM (if configured).")
    expiration_date: IsoDate | None = None


class SearchRequest(Ids):
    query: str = Field(min_length=1, description="Search query.")
    filters: dict[str, Any] | None = Field(
        default=None, description="Must hold user_id/agent_id/run_id; other keys match metadata."
    )
    top_k: int = Field(default=20, ge=1, le=1000)
    threshold: float | None = Field(default=None, ge=0, le=1)
    explain: bool | None = Field(
        default=None, description="Include each hit's score_details (semantic, BM25, entity)."
    )


class MemoryUpdate(BaseModel):
    text: str | None = Field(default=None, min_length=1, description="New text of the memory.")
    metadata: dict[str, Any] | None = Field(default=None, description="Merged into the metadata.")
    expiration_date: IsoDate | None = Field(
        default=None, description="YYYY-MM-DD, or null to clear."
    )

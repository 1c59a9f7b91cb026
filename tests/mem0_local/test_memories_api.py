"""The memory operations of mem0's REST API, over real HTTP, pgvector and MiniLM."""

from __future__ import annotations

import httpx
import pytest

from mem0_local import DEFAULT_CUSTOM_INSTRUCTIONS
from tests.fakes.llm import FakeLLM
from tests.mem0_local._server import add_memories, post_message


def test_add_with_infer_off_stores_the_message_verbatim(
    llm_client: httpx.Client, fake_llm: FakeLLM, user_id: str
) -> None:
    response = post_message(
        llm_client, user_id, "I use vim. The API runs on port 9000.", infer=False
    )

    assert response.status_code == 200
    [result] = response.json()["results"]
    assert result["memory"] == "I use vim. The API runs on port 9000."
    assert result["event"] == "ADD"
    assert fake_llm.chat_requests == []


def test_add_with_infer_on_stores_each_fact_the_llm_extracts(
    llm_client: httpx.Client, fake_llm: FakeLLM, user_id: str
) -> None:
    response = post_message(llm_client, user_id, "I use vim. The API runs on port 9000.")

    assert response.status_code == 200
    memories = sorted(r["memory"] for r in response.json()["results"])
    assert memories == ["I use vim.", "The API runs on port 9000."]
    assert len(fake_llm.chat_requests) == 1
    assert fake_llm.chat_requests[0]["model"] == "fake-model"


def test_extraction_prompt_carries_the_custom_instructions(
    llm_client: httpx.Client, fake_llm: FakeLLM, user_id: str
) -> None:
    post_message(llm_client, user_id, "The worker queue is named jobs-high.")
    prompt = "\n".join(
        str(m["content"]) for m in fake_llm.chat_requests[0]["messages"] if m["role"] == "user"
    )
    assert f"## Custom Instructions\n{DEFAULT_CUSTOM_INSTRUCTIONS}" in prompt
    assert llm_client.get("/config").json()["custom_instructions"] == DEFAULT_CUSTOM_INSTRUCTIONS


def test_search_ranks_the_paraphrased_memory_first(llm_client: httpx.Client, user_id: str) -> None:
    [_, hiking_id, _] = add_memories(
        llm_client,
        user_id,
        "My favourite programming language is Rust.",
        "I love hiking in the Swiss Alps every summer.",
        "The staging database is backed up every night at 2am.",
    )

    response = llm_client.post(
        "/search",
        json={
            "query": "mountain walks during holidays",
            "filters": {"user_id": user_id},
            "threshold": 0.0,
        },
    )

    assert response.status_code == 200
    results = response.json()["results"]
    assert len(results) == 3
    assert results[0]["id"] == hiking_id
    assert results[0]["score"] > results[1]["score"]


def test_an_explained_search_gives_each_hits_semantic_similarity(
    llm_client: httpx.Client, user_id: str
) -> None:
    # The bridge's verdict guard reads the cosine part: the blended score moves with BM25 hits.
    add_memories(llm_client, user_id, "Deploys happen on Fridays.")
    body = {"query": "Deploys happen on Fridays.", "filters": {"user_id": user_id}}

    [plain] = llm_client.post("/search", json=body).json()["results"]
    [explained] = llm_client.post("/search", json={**body, "explain": True}).json()["results"]

    assert "score_details" not in plain
    assert explained["score_details"]["semantic_score"] == pytest.approx(1.0, abs=1e-3)
    assert explained["score"] == plain["score"]


def test_search_results_carry_the_fields_the_bridge_reads(
    llm_client: httpx.Client, user_id: str
) -> None:
    [memory_id] = add_memories(llm_client, user_id, "Deploys happen on Fridays.", run_id="run-1")

    response = llm_client.post("/search", json={"query": "deploys", "user_id": user_id})

    [item] = response.json()["results"]
    assert item["id"] == memory_id
    assert item["memory"] == "Deploys happen on Fridays."
    assert item["user_id"] == user_id
    assert item["run_id"] == "run-1"
    assert item["agent_id"] is None
    assert isinstance(item["score"], float)
    assert item["hash"]
    assert item["created_at"] == item["updated_at"]
    assert "metadata" in item


def test_search_matches_other_filter_keys_against_metadata(
    llm_client: httpx.Client, user_id: str
) -> None:
    add_memories(llm_client, user_id, "Use tabs in Go code.", metadata={"topic": "style"})
    [wanted] = add_memories(
        llm_client, user_id, "Use spaces in Python code.", metadata={"topic": "python"}
    )

    response = llm_client.post(
        "/search",
        json={"query": "code indentation", "filters": {"user_id": user_id, "topic": "python"}},
    )

    assert [r["id"] for r in response.json()["results"]] == [wanted]


def test_search_honours_top_k(llm_client: httpx.Client, user_id: str) -> None:
    add_memories(llm_client, user_id, "Coffee at 9.", "Coffee at 10.", "Coffee at 11.")

    response = llm_client.post(
        "/search", json={"query": "coffee", "filters": {"user_id": user_id}, "top_k": 2}
    )

    assert len(response.json()["results"]) == 2


def test_list_returns_only_that_users_memories(llm_client: httpx.Client, user_id: str) -> None:
    mine = set(add_memories(llm_client, user_id, "First fact.", "Second fact."))
    add_memories(llm_client, f"{user_id}-other", "Someone else's fact.")

    response = llm_client.get("/memories", params={"user_id": user_id})

    assert response.status_code == 200
    items = response.json()["results"]
    assert {item["id"] for item in items} == mine
    assert all("score" not in item for item in items)


def test_get_returns_the_memory_with_a_null_score(llm_client: httpx.Client, user_id: str) -> None:
    [memory_id] = add_memories(llm_client, user_id, "The cat is called Tom.", metadata={"k": "v"})

    response = llm_client.get(f"/memories/{memory_id}")

    assert response.status_code == 200
    item = response.json()
    assert (item["id"], item["memory"], item["score"]) == (
        memory_id,
        "The cat is called Tom.",
        None,
    )
    assert item["metadata"] == {"k": "v"}


def test_update_replaces_the_text_and_merges_metadata(
    llm_client: httpx.Client, user_id: str
) -> None:
    [memory_id] = add_memories(llm_client, user_id, "Lunch is at noon.", metadata={"a": 1})

    response = llm_client.put(
        f"/memories/{memory_id}", json={"text": "Lunch is at one.", "metadata": {"b": 2}}
    )

    assert response.status_code == 200
    item = llm_client.get(f"/memories/{memory_id}").json()
    assert item["memory"] == "Lunch is at one."
    assert item["metadata"] == {"a": 1, "b": 2}
    assert item["updated_at"] > item["created_at"]


def test_update_without_any_field_is_400(llm_client: httpx.Client, user_id: str) -> None:
    [memory_id] = add_memories(llm_client, user_id, "Unchanged.")

    response = llm_client.put(f"/memories/{memory_id}", json={})

    assert response.status_code == 400
    assert llm_client.get(f"/memories/{memory_id}").json()["memory"] == "Unchanged."


def test_delete_removes_the_memory(llm_client: httpx.Client, user_id: str) -> None:
    [memory_id] = add_memories(llm_client, user_id, "Temporary note.")

    response = llm_client.delete(f"/memories/{memory_id}")

    assert response.status_code == 200
    assert llm_client.get(f"/memories/{memory_id}").status_code == 404


def test_history_records_add_update_and_delete(llm_client: httpx.Client, user_id: str) -> None:
    [memory_id] = add_memories(llm_client, user_id, "Version one.")
    llm_client.put(f"/memories/{memory_id}", json={"text": "Version two."})
    llm_client.delete(f"/memories/{memory_id}")

    response = llm_client.get(f"/memories/{memory_id}/history")

    assert response.status_code == 200
    changes = [(c["event"], c["old_memory"], c["new_memory"]) for c in response.json()]
    assert changes == [
        ("ADD", None, "Version one."),
        ("UPDATE", "Version one.", "Version two."),
        ("DELETE", "Version two.", None),
    ]


def test_delete_all_removes_only_that_users_memories(
    admin_client: httpx.Client, user_id: str
) -> None:
    add_memories(admin_client, user_id, "Mine one.", "Mine two.")
    [kept] = add_memories(admin_client, f"{user_id}-other", "Theirs.")

    response = admin_client.delete("/memories", params={"user_id": user_id})

    assert response.status_code == 200
    assert admin_client.get("/memories", params={"user_id": user_id}).json()["results"] == []
    assert admin_client.get(f"/memories/{kept}").status_code == 200

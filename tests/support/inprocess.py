"""The real stack behind the bridge, in this process: no PostgreSQL, no subprocess.

mem0-local is its real ASGI app (the real mem0ai library, the real MiniLM embedder) over its
embedded store (qdrant's local mode in a temporary directory); the bridge reaches it through
`httpx.ASGITransport`, handed to `create_server` as `mem0_transport` (see `Stack.server`). The
ranker (on SQLite) and the judge (on the FakeLLM) are their real servers, served by `grpc.aio`
on 127.0.0.1 ephemeral ports in this event loop. The only stand-in is the LLM, as on the full
stack (`tests.support.stack`).

What this does not exercise, and the full-stack tests keep covering: pgvector (its keyword
search blends into mem0's scores, which the embedded store without fastembed lacks), the
services' own processes and console scripts, and the bridge over stdio and streamable HTTP.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

from pydantic import SecretStr

from mem0_judge import JudgeSettings, build_server
from mem0_local import Mem0LocalSettings, create_app
from mem0_ranker import RankerSettings, open_store
from mem0_ranker import create_server as create_ranker_server
from tests.fakes.llm import FakeLLM
from tests.support import heap
from tests.support.stack import API_KEY, RESET_TOKEN, Stack

#: The host the bridge's mem0 URL names; nothing resolves it, the transport never asks.
MEM0_URL = "http://mem0-local.in-process"


@asynccontextmanager
async def inprocess_stack(llm: FakeLLM, work_dir: Path) -> AsyncIterator[Stack]:
    """mem0-local, the ranker and the judge, configured as `tests.support.stack` starts them
    as processes; stopped (and the embedded store closed) on exit."""
    collection = f"stack_{uuid.uuid4().hex[:8]}"
    mem0_settings = Mem0LocalSettings(
        data_dir=work_dir / "mem0",
        collection_name=collection,
        llm_base_url=llm.base_url,
        llm_model="fake-model",
        llm_max_retries=0,
        api_key=SecretStr(API_KEY),
        reset_token=SecretStr(RESET_TOKEN),
    )
    ranker_settings = RankerSettings(
        port=0,
        metrics_port=-1,
        db_path=work_dir / "ranker.sqlite3",
        reinforce_debounce_seconds=0,
    )
    judge_settings = JudgeSettings(
        port=0, metrics_port=-1, llm_base_url=llm.base_url, llm_model="fake-model"
    )
    app = create_app(mem0_settings)
    async with AsyncExitStack() as running:
        # ASGITransport sends no lifespan events: open the store (model load) as uvicorn would.
        with heap.quiet_imports():  # the model load imports torch and transformers
            await running.enter_async_context(app.router.lifespan_context(app))
        store = await open_store(ranker_settings)
        running.push_async_callback(store.close)
        ranker = create_ranker_server(ranker_settings, store)
        await ranker.start()
        running.push_async_callback(ranker.stop, 0)
        judge = build_server(judge_settings)
        await judge.start()
        running.push_async_callback(judge.close_llm)
        running.push_async_callback(judge.stop, 0)
        yield Stack(
            mem0_url=MEM0_URL,
            database_url="",
            collection=collection,
            ranker_address=ranker.address,
            judge_address=judge.address,
            llm=llm,
            mem0_app=app,
        )

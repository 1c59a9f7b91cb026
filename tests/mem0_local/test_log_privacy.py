"""Memory texts never reach the logs at the default level, mem0's own loggers included."""

from __future__ import annotations

import io
import logging
import signal
from pathlib import Path

import httpx
import pytest

from mem0_local._log_privacy import MemoryTextFilter, memory_text_filters
from tests.support.processes import ServiceProcess

SECRET = "The vault code is 4471-ALPHA"  # noqa: S105 - a memory text, not a credential
UPDATED = "The vault code is now 9902-OMEGA"


def _format(
    record_logger: str,
    level: int,
    exc: BaseException | None = None,
    message: str = f"Updating memory with data={SECRET!r}",
) -> str | None:
    """What a handler with the filter writes for one record (None: dropped)."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(MemoryTextFilter())
    logger = logging.getLogger(record_logger)
    exc_info = (type(exc), exc, exc.__traceback__) if exc is not None else None
    record = logger.makeRecord(record_logger, level, __file__, 1, message, (), exc_info)
    if not handler.filter(record):
        return None
    handler.emit(record)
    return stream.getvalue()


def test_mem0_info_lines_are_dropped() -> None:
    assert _format("mem0.memory.main", logging.INFO) is None


def test_mem0_warnings_still_show() -> None:
    assert _format("mem0.memory.main", logging.WARNING) is not None


def _fail_quoting_the_text() -> None:
    try:
        raise ValueError(f"row {SECRET}")  # noqa: TRY301 - a chained exception is the point
    except ValueError as inner:
        raise RuntimeError(f"insert failed: {SECRET}") from inner


def test_an_exception_keeps_its_traceback_and_type_but_not_its_message() -> None:
    try:
        _fail_quoting_the_text()
    except RuntimeError as exc:
        written = _format("mem0_local._store", logging.ERROR, exc, "mem0 call failed (unknown)")

    assert written is not None
    assert SECRET not in written
    assert "builtins.ValueError" in written
    assert "builtins.RuntimeError" in written
    assert "_fail_quoting_the_text" in written  # the frame is still named


def test_debug_level_installs_no_filter_so_texts_show_when_asked_for() -> None:
    assert memory_text_filters("DEBUG") == []
    assert len(memory_text_filters("info")) == 1


@pytest.mark.slow
@pytest.mark.subprocess
def test_adding_updating_and_searching_logs_no_memory_text_at_the_default_level(
    tmp_path: Path,
) -> None:
    env = {
        "MEM0_LOCAL_PORT": "0",
        "MEM0_LOCAL_DATA_DIR": str(tmp_path / "data"),
        "MEM0_LOCAL_DATABASE_URL": "",
        "MEM0_LOCAL_LLM_BASE_URL": "",
        "MEM0_LOCAL_LOG_LEVEL": "INFO",
    }
    with (
        ServiceProcess(["mem0-local"], env) as service,
        httpx.Client(base_url=service.url, timeout=60) as client,
    ):
        added = client.post(
            "/memories",
            json={"messages": [{"role": "user", "content": SECRET}], "user_id": "u"},
        )
        memory_id = added.json()["results"][0]["id"]
        updated = client.put(f"/memories/{memory_id}", json={"text": UPDATED})
        found = client.post("/search", json={"query": "what is the vault code", "user_id": "u"})
        history = client.get(f"/memories/{memory_id}/history")
        assert [r.status_code for r in (added, updated, found, history)] == [200] * 4
        assert service.stop(signal.SIGTERM) == 0

    log = service.log_text()
    assert f"PUT /memories/{memory_id} -> 200" in log  # requests are logged, texts are not
    assert "vault code" not in log

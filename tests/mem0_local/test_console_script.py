"""The `mem0-local` console script, as `make run` starts it: a real subprocess."""

from __future__ import annotations

import signal
from pathlib import Path

import httpx
import pytest

from tests.support.keepalive import PAST_PYTHON_CLIENTS_EXPIRY, answers_after_idling
from tests.support.processes import ServiceProcess

pytestmark = pytest.mark.subprocess


def embedded(tmp_path: Path, **extra: str) -> dict[str, str]:
    """mem0-local on an ephemeral port, the embedded store under `tmp_path`, no LLM."""
    return {
        "MEM0_LOCAL_PORT": "0",
        "MEM0_LOCAL_DATA_DIR": str(tmp_path / "data"),
        "MEM0_LOCAL_DATABASE_URL": "",
        "MEM0_LOCAL_LLM_BASE_URL": "",
        **extra,
    }


@pytest.mark.slow
def test_console_script_serves_with_auth_and_stops_cleanly_on_sigterm(tmp_path: Path) -> None:
    env = embedded(tmp_path, MEM0_LOCAL_API_KEY="script-key", OPENROUTER_API_KEY="must-be-removed")
    with ServiceProcess(["mem0-local"], env) as service:
        headers = {"X-API-Key": "script-key"}
        added = httpx.post(
            f"{service.url}/memories",
            json={"messages": [{"role": "user", "content": "Tea, no sugar."}], "user_id": "u"},
            headers=headers,
            timeout=60,
        )
        found = httpx.post(
            f"{service.url}/search",
            json={"query": "how do I take my tea", "user_id": "u"},
            headers=headers,
            timeout=60,
        )
        unauthorised = httpx.get(f"{service.url}/config", timeout=60)

        assert added.status_code == 200
        assert [r["memory"] for r in found.json()["results"]] == ["Tea, no sugar."]
        assert unauthorised.status_code == 401
        assert service.stop(signal.SIGTERM) == 0

    log = service.log_text()
    assert "embedded store" in log
    assert "infer is unavailable" in log
    assert "removed OPENROUTER_API_KEY" in log
    assert "script-key" not in log


@pytest.mark.slow
def test_an_idle_connection_outlives_the_bridges_pool(tmp_path: Path) -> None:
    # The bridge reuses a pooled connection for 3 s (mem0_common._keepalive) and other Python
    # clients for 5 s; dropping it at 5 s (uvicorn's default) would race the latter.
    with ServiceProcess(["mem0-local"], embedded(tmp_path)) as service:
        assert answers_after_idling(service.port, "/health", PAST_PYTHON_CLIENTS_EXPIRY)


@pytest.mark.slow
def test_unreachable_database_fails_at_start_naming_it_without_the_password(
    tmp_path: Path,
) -> None:
    env = {
        "MEM0_LOCAL_PORT": "0",
        "MEM0_LOCAL_DATA_DIR": str(tmp_path),
        "MEM0_LOCAL_DATABASE_URL": "postgresql://postgres:pw-secret@127.0.0.1:1/nodb",
    }
    with pytest.raises(RuntimeError) as failure:
        ServiceProcess(["mem0-local"], env, ready_timeout=60)

    assert "cannot reach PostgreSQL at 127.0.0.1:1/nodb" in str(failure.value)
    assert "pw-secret" not in str(failure.value)

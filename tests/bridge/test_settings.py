"""The bridge's settings: the first seed's names, the second seed's aliases, clear refusals."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from mem0_bridge import BridgeSettings


def test_defaults_match_the_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MEM0_API_URL", "MEM0_URL", "MEM0_DEFAULT_USER_ID", "MEM0_USER_ID"):
        monkeypatch.delenv(name, raising=False)
    settings = BridgeSettings()
    assert settings.api_url == "http://localhost:8000"
    assert settings.default_user_id == "default"
    assert (settings.infer, settings.query_rewrite) == (True, True)
    assert (settings.timeout_seconds, settings.add_timeout_seconds) == (10.0, 45.0)
    assert (settings.transport, settings.http_host, settings.http_port) == (
        "stdio",
        "127.0.0.1",
        8001,
    )


def test_second_seed_names_are_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEM0_URL", "http://mem0.internal:8000/")
    monkeypatch.setenv("MEM0_USER_ID", "alice")
    monkeypatch.setenv("MCP_TRANSPORT", "streamable-http")
    monkeypatch.setenv("REINFORCEMENT_PREFILTER_THRESHOLD", "0.8")
    settings = BridgeSettings()
    assert settings.api_url == "http://mem0.internal:8000"
    assert settings.default_user_id == "alice"
    assert settings.transport == "http"
    assert settings.reinforcement_prefilter_threshold == 0.8


def test_first_seed_names_win_over_aliases(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEM0_API_URL", "http://primary:8000")
    monkeypatch.setenv("MEM0_URL", "http://alias:8000")
    assert BridgeSettings().api_url == "http://primary:8000"


def test_flags_and_lists_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEM0_INFER", "0")
    monkeypatch.setenv("MEM0_QUERY_REWRITE", "0")
    monkeypatch.setenv("MEM0_ALLOWED_HOSTS", "mem.example.com, 10.0.0.5:8001")
    monkeypatch.setenv("MEM0_SCOPE_KEY", "")
    settings = BridgeSettings()
    assert (settings.infer, settings.query_rewrite) == (False, False)
    assert settings.allowed_host_list == ["mem.example.com", "10.0.0.5:8001"]
    assert settings.scope_key is None


def test_a_url_without_scheme_is_refused_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEM0_API_URL", "localhost:8000")
    with pytest.raises(ValidationError, match="MEM0_API_URL"):
        BridgeSettings()


def test_an_unknown_transport_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEM0_TRANSPORT", "carrier-pigeon")
    with pytest.raises(ValidationError, match="MEM0_TRANSPORT"):
        BridgeSettings()


def test_every_setting_is_described() -> None:
    for name, field in BridgeSettings.model_fields.items():
        assert field.description, name


def test_http_is_stateless_unless_sessions_are_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEM0_HTTP_STATELESS", raising=False)
    assert BridgeSettings().http_stateless is True
    monkeypatch.setenv("MEM0_HTTP_STATELESS", "0")
    assert BridgeSettings().http_stateless is False


def test_a_shared_request_state_secret_opens_across_processes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MEM0_REQUEST_STATE_SECRET", raising=False)
    assert BridgeSettings().request_state_security() is None
    old, new = "o" * 32, "n" * 40
    monkeypatch.setenv("MEM0_REQUEST_STATE_SECRET", old)
    sealed = BridgeSettings().request_state_security()
    monkeypatch.setenv("MEM0_REQUEST_STATE_SECRET", f"{new}, {old}")
    rotated = BridgeSettings().request_state_security()
    assert sealed is not None
    assert rotated is not None
    # What one replica sealed under the old key, another (already rotated) still opens.
    assert rotated.codec.unseal(sealed.codec.seal(b"roots asked")) == b"roots asked"


def test_a_short_request_state_key_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEM0_REQUEST_STATE_SECRET", "too-short")
    with pytest.raises(ValidationError, match="MEM0_REQUEST_STATE_SECRET"):
        BridgeSettings()

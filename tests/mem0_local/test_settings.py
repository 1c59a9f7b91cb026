"""Bad settings fail at start with a message naming the variable."""

from __future__ import annotations

import pytest
from pydantic import SecretStr, ValidationError

from mem0_local import Mem0LocalSettings, build_mem0_config


def test_a_non_postgres_database_url_is_rejected_naming_the_variable() -> None:
    with pytest.raises(ValidationError, match="MEM0_LOCAL_DATABASE_URL"):
        Mem0LocalSettings(database_url=SecretStr("mysql://localhost/db"))


def test_an_empty_database_url_means_the_embedded_store() -> None:
    assert Mem0LocalSettings(database_url=SecretStr("")).vector_store_kind == "embedded"


def test_settings_are_read_from_mem0_local_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEM0_LOCAL_PORT", "0")
    monkeypatch.setenv("MEM0_LOCAL_LLM_BASE_URL", "http://127.0.0.1:1234/v1/")

    settings = Mem0LocalSettings()

    assert settings.port == 0
    assert settings.llm_base_url == "http://127.0.0.1:1234/v1"
    assert settings.infer_available


def test_an_empty_api_key_turns_auth_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEM0_LOCAL_API_KEY", "")
    monkeypatch.setenv("MEM0_LOCAL_RESET_TOKEN", "")

    settings = Mem0LocalSettings()

    assert (settings.api_key, settings.reset_token) == (None, None)


def test_empty_custom_instructions_turn_them_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEM0_LOCAL_CUSTOM_INSTRUCTIONS", " ")

    assert Mem0LocalSettings().custom_instructions is None
    assert build_mem0_config(Mem0LocalSettings())["custom_instructions"] is None


def test_custom_instructions_reach_mem0s_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEM0_LOCAL_CUSTOM_INSTRUCTIONS", "Keep commands verbatim.")

    config = build_mem0_config(Mem0LocalSettings())

    assert config["custom_instructions"] == "Keep commands verbatim."

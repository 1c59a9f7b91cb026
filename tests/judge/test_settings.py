"""Settings read from JUDGE_* variables, each documented for the README's table."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from mem0_common.env_table import env_names
from mem0_judge import JudgeSettings


def test_every_field_is_described() -> None:
    undescribed = [n for n, f in JudgeSettings.model_fields.items() if not f.description]
    assert undescribed == []


def test_the_llm_variables_have_the_documented_names() -> None:
    names = env_names([JudgeSettings])
    for name in (
        "JUDGE_LLM_BASE_URL",
        "JUDGE_LLM_MODEL",
        "JUDGE_LLM_API_KEY",
        "JUDGE_LLM_CA_BUNDLE",
        "JUDGE_LLM_TIMEOUT_SECONDS",
        "JUDGE_LLM_MAX_RETRIES",
        "JUDGE_LLM_MAX_CONCURRENCY",
        "JUDGE_LLM_RESPONSE_FORMAT",
        "JUDGE_LLM_DEGRADED_AFTER_FAILURES",
        "JUDGE_PORT",
        "JUDGE_METRICS_PORT",
    ):
        assert name in names


def test_defaults_listen_on_the_judge_port_with_no_llm(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in env_names([JudgeSettings]):
        monkeypatch.delenv(name, raising=False)
    settings = JudgeSettings()
    assert (settings.port, settings.metrics_port) == (50052, 9152)
    assert not settings.llm_configured


def test_a_missing_ca_bundle_is_rejected_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGE_LLM_CA_BUNDLE", "/nonexistent/ca.pem")
    with pytest.raises(ValidationError, match="llm_ca_bundle"):
        JudgeSettings()


def test_a_base_url_without_a_scheme_is_rejected_naming_it() -> None:
    with pytest.raises(ValidationError, match=r"llm_base_url\n.*http:// or https://"):
        JudgeSettings(llm_base_url="llm.internal:8000/v1")


def test_blank_llm_variables_mean_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGE_LLM_BASE_URL", " ")
    monkeypatch.setenv("JUDGE_LLM_MODEL", "")
    settings = JudgeSettings()
    assert settings.llm_base_url is None
    assert not settings.llm_configured


def test_the_first_seeds_rewrite_variables_configure_the_llm(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in env_names([JudgeSettings]):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MEM0_REWRITE_BASE_URL", "http://llm.internal/v1")
    monkeypatch.setenv("MEM0_REWRITE_MODEL", "small-model")
    monkeypatch.setenv("MEM0_REWRITE_API_KEY", "k")
    settings = JudgeSettings()
    assert (settings.llm_base_url, settings.llm_model, settings.llm_api_key) == (
        "http://llm.internal/v1",
        "small-model",
        "k",
    )
    assert settings.llm_configured


def test_the_default_llm_timeout_outlasts_a_cpu_model_verdict(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Seen with llama.cpp on 2 CPU cores: 8-11 s per verdict; the old 10 s default cut them off.
    monkeypatch.delenv("JUDGE_LLM_TIMEOUT_SECONDS", raising=False)
    assert JudgeSettings().llm_timeout_seconds > 11


def test_an_unknown_response_format_is_rejected_naming_it() -> None:
    with pytest.raises(ValidationError, match="llm_response_format"):
        JudgeSettings(llm_response_format="grammar")  # type: ignore[arg-type]

"""ServiceSettings: what every service's settings object does the same way."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic_settings import SettingsConfigDict

from mem0_common import ServiceSettings


class _Example(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="EXAMPLE_")

    data_dir: Path = Path("~/.local/share/example")
    name: str = "~not-a-path"


def test_a_tilde_in_a_path_setting_is_the_home_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("EXAMPLE_DATA_DIR", "~/data")
    assert _Example().data_dir == tmp_path / "data"


def test_a_path_default_is_expanded_too(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("EXAMPLE_DATA_DIR", raising=False)
    assert _Example().data_dir == tmp_path / ".local/share/example"


def test_text_settings_are_left_as_they_are() -> None:
    assert _Example().name == "~not-a-path"

"""Memories on disk are the owner's alone: every data file 0600, every folder 0700."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from mem0_local import Mem0LocalSettings
from tests.mem0_local._server import InProcessServer, add_memories


@pytest.fixture
def permissive_umask() -> Iterator[None]:
    """The usual login default (022), under which files are world-readable unless made private."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def _modes(root: Path) -> dict[str, int]:
    return {
        str(path.relative_to(root.parent)): stat.S_IMODE(path.stat().st_mode)
        for path in [root, *root.rglob("*")]
    }


@pytest.mark.usefixtures("permissive_umask")
def test_the_embedded_store_and_history_are_0600_files_in_0700_folders(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    with (
        InProcessServer(Mem0LocalSettings(data_dir=data_dir)) as server,
        httpx.Client(base_url=server.url, timeout=60) as client,
    ):
        add_memories(client, "u1", "My bank PIN is not something to share.")
        modes = _modes(data_dir)

    assert "data/history.db" in modes
    assert any(name.startswith("data/qdrant/") for name in modes)
    wrong = {
        name: oct(mode)
        for name, mode in modes.items()
        if mode != (0o700 if (tmp_path / name).is_dir() else 0o600)
    }
    assert wrong == {}

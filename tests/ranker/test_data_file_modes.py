"""The SQLite records are the owner's alone: the file 0600 (its WAL too) in a 0700 folder."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from mem0_ranker._sqlite import SqliteStore

pytestmark = pytest.mark.anyio


@pytest.fixture
def permissive_umask() -> Iterator[None]:
    """The usual login default (022), under which files are world-readable unless made private."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.usefixtures("permissive_umask")
async def test_the_sqlite_file_and_its_wal_are_0600_in_a_new_0700_folder(tmp_path: Path) -> None:
    path = tmp_path / "records" / "ranker.sqlite3"

    store = await SqliteStore.open(path)
    try:
        await store.reinforce("m1", "u", 1.0, 0.0)
        files = sorted(path.parent.iterdir())
        modes = {p.name: _mode(p) for p in files}
    finally:
        await store.close()

    assert _mode(path.parent) == 0o700
    assert {"ranker.sqlite3", "ranker.sqlite3-wal"} <= modes.keys()
    assert modes == dict.fromkeys(modes, 0o600)

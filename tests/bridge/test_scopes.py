"""Project names from real git repositories, roots and explicit names."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from mem0_bridge import BridgeError, derive_project
from mem0_bridge._scopes import check_name, project_from_roots


def _git(directory: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(directory), *args], check=True, capture_output=True)


def _repo(path: Path, remote: str | None = None) -> Path:
    path.mkdir(parents=True)
    _git(path, "init", "-q")
    if remote is not None:
        _git(path, "remote", "add", "origin", remote)
    return path


@pytest.mark.parametrize(
    "remote",
    [
        "https://github.com/org/mem0-mcp.git",
        "git@github.com:org/mem0-mcp.git",
        "ssh://git@host:2222/org/mem0-mcp",
        "/srv/git/mem0-mcp.git",
    ],
)
def test_project_is_the_remote_repository_basename(tmp_path: Path, remote: str) -> None:
    clone = _repo(tmp_path / "some-local-clone-name", remote)
    assert derive_project(clone) == "mem0-mcp"


def test_project_is_the_same_from_a_subdirectory(tmp_path: Path) -> None:
    clone = _repo(tmp_path / "clone", "https://example.test/org/api.git")
    (clone / "src" / "deep").mkdir(parents=True)
    assert derive_project(clone / "src" / "deep") == "api"


def test_without_a_remote_the_project_is_the_top_level_name(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "toplevel-name")
    (repo / "sub").mkdir()
    assert derive_project(repo / "sub") == "toplevel-name"


def test_outside_git_the_project_is_the_directory_name(tmp_path: Path) -> None:
    plain = tmp_path / "just-a-dir"
    plain.mkdir()
    assert derive_project(plain) == "just-a-dir"


def test_a_root_is_named_from_its_uri_alone_never_from_this_machines_disk(
    tmp_path: Path,
) -> None:
    # A folder of that path on the server is a different folder than the client's: its git
    # remote must not name the client's project.
    clone = _repo(tmp_path / "api-2", "https://example.test/org/api.git")
    assert project_from_roots([clone.as_uri()]) == "api-2"


def test_roots_elsewhere_are_named_by_their_basename() -> None:
    assert project_from_roots(["file:///home/someone/src/billing"]) == "billing"


def test_non_file_roots_name_no_project() -> None:
    assert project_from_roots(["https://example.test/repo"]) is None


@pytest.mark.parametrize("name", ["global", "pins:alpha", "", "   ", "a\x00b", "x" * 201])
def test_reserved_empty_or_odd_names_are_refused(name: str) -> None:
    with pytest.raises(BridgeError, match="project"):
        check_name(name, "project")


def test_a_plain_name_is_kept_trimmed() -> None:
    assert check_name("  api  ", "project") == "api"

"""Which mem0 namespace (`run_id`) an operation touches.

Memories live under one `user_id`, split by `run_id`: `<project>` for the current project,
`global` for cross-project facts, `pins:<project>` and `pins:global` for pins. A scope key
replaces all of that with one namespace (one per chat room, say).

The project is the git remote's repository basename (portable across clones), else the git
top-level's name, else the directory's name. In stdio mode that directory is the server's own
working directory; over HTTP it means nothing, so the client's MCP roots or an explicit
`project` argument name it instead.
"""

from __future__ import annotations

import functools
import logging
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Literal
from urllib.parse import unquote, urlparse

from mem0_bridge._errors import BridgeError

GLOBAL = "global"
PIN_PREFIX = "pins:"
PINS_GLOBAL = f"{PIN_PREFIX}{GLOBAL}"
MAX_NAME_LENGTH = 200

Scope = Literal["project", "global", "all"]
PinScope = Literal["local", "global"]

logger = logging.getLogger(__name__)

NEEDS_PROJECT = (
    "This call needs a project scope and none is known (this server cannot see your working "
    'directory). Pass project="<repository name>", use scope="global", or connect with a '
    "client that shares its MCP roots."
)


def _git(directory: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(  # noqa: S603 - fixed argv, no shell
            ["git", "-C", str(directory), *args],  # noqa: S607 - git from PATH, as a user's shell would
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    out = done.stdout.strip()
    return out if done.returncode == 0 and out else None


def _repo_basename(remote_url: str) -> str | None:
    # Works for https://host/owner/repo(.git), git@host:owner/repo.git and local paths alike.
    tail = re.split(r"[/:\\]", remote_url.rstrip("/"))[-1]
    tail = tail.removesuffix(".git")
    return tail or None


@functools.lru_cache(maxsize=256)
def derive_project(directory: Path) -> str:
    """The project name of `directory`: its git remote's repository name, else its git
    top-level's name, else its own name."""
    remotes = (_git(directory, "remote") or "").split()
    if remotes:
        remote = "origin" if "origin" in remotes else remotes[0]
        url = _git(directory, "remote", "get-url", remote)
        name = _repo_basename(url) if url else None
        if name:
            return name
    top_level = _git(directory, "rev-parse", "--show-toplevel")
    if top_level:
        return Path(top_level).name
    return directory.resolve().name


def project_from_roots(root_uris: Sequence[str]) -> str | None:
    """The project of the client's first `file://` root: its folder's name; None when the
    client shares no such root.

    A root names a folder on the client's machine, so it is read from the URI alone: the same
    path on the server (if there is one) is another folder, and running git in it or reading it
    would name the wrong project, or leak the server's disk layout.
    """
    for uri in root_uris:
        parsed = urlparse(uri)
        if parsed.scheme != "file":
            logger.info("ignoring a client root that is not a file:// URI: %.80s", uri)
            continue
        name = PurePosixPath(unquote(parsed.path)).name
        if name:
            return name
    return None


def check_name(value: str, what: str) -> str:
    """The namespace (run_id) a project or scope key names, or a BridgeError naming `what`.

    mem0 refuses whitespace in ids, and folders and repositories are often named with spaces
    ("My Project", a root URI with `%20`): so surrounding whitespace is dropped and each run of
    whitespace inside becomes one `-` ("My Project" is the namespace `My-Project`). The same
    rule applies to every tool and every source of the name, so they all meet in one namespace.
    """
    name = "-".join(value.split())
    if not name:
        raise BridgeError(f"{what} must not be empty.")
    if len(name) > MAX_NAME_LENGTH:
        raise BridgeError(f"{what} is longer than {MAX_NAME_LENGTH} characters.")
    if name == GLOBAL or name.startswith(PIN_PREFIX):
        raise BridgeError(
            f"{what} {name!r} is reserved (`global` and `pins:*` are the bridge's own "
            "namespaces); choose another name."
        )
    if any(ord(ch) < 32 or ord(ch) == 127 or 0xD800 <= ord(ch) <= 0xDFFF for ch in name):
        raise BridgeError(f"{what} must not contain control characters or lone surrogates.")
    return name


def is_pin_namespace(run_id: str | None) -> bool:
    return bool(run_id) and str(run_id).startswith(PIN_PREFIX)


def write_namespace(scope: Scope, key: str | None, project: str | None) -> str:
    """The one run_id an add writes to."""
    if key is not None:
        return key
    if scope == "all":
        raise BridgeError(
            'scope="all" is for reading; store into scope="project" (default) or "global".'
        )
    if scope == GLOBAL:
        return GLOBAL
    if project is None:
        raise BridgeError(NEEDS_PROJECT)
    return project


def read_namespaces(
    scope: Scope, key: str | None, project: str | None, *, merge_global: bool
) -> tuple[str, ...] | None:
    """The run_ids a read covers; None means every namespace of the user except pins."""
    if key is not None:
        return (key,)
    if scope == "all":
        return None
    if scope == GLOBAL:
        return (GLOBAL,)
    if project is None:
        raise BridgeError(NEEDS_PROJECT)
    return (project, GLOBAL) if merge_global else (project,)


def pin_namespace(scope: PinScope, key: str | None, project: str | None) -> str:
    """Where a pin goes; under a scope key always that key's pins (a key is a hard boundary,
    so a key-confined caller cannot plant a global pin every other project would load)."""
    if key is not None:
        return f"{PIN_PREFIX}{key}"
    if scope == GLOBAL:
        return PINS_GLOBAL
    local = project
    if local is None:
        raise BridgeError(NEEDS_PROJECT)
    return f"{PIN_PREFIX}{local}"

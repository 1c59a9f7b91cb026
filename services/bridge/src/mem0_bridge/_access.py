"""Who may use which namespaces over HTTP: the bearer tokens and their grants.

One bridge can serve many teams. Each bearer token is listed (by its SHA-256, never in clear)
in a TOML file named by MEM0_HTTP_TOKENS_FILE, with the projects it may use (names or globs),
its access to the global namespace, and whether it may reset:

    [[tokens]]
    name = "team-a"                  # shown in logs, never the token
    sha256 = "<hex SHA-256 of the bearer token>"
    projects = ["alpha", "alpha-*"]  # names or globs this token may use
    global = "read"                  # "none" | "read" | "write"
    reset = false                    # may it call memory_reset (the reset token is still required)

A scope key is a namespace like a project and is matched against `projects`; pins follow the
namespace they pin to. The single MEM0_HTTP_BEARER_TOKEN keeps meaning "everything". The file
is read at start and again on SIGHUP; a file that does not parse keeps the previous table.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Literal, cast

from mem0_bridge._errors import BridgeError
from mem0_bridge._scopes import GLOBAL, PIN_PREFIX

logger = logging.getLogger(__name__)

GlobalAccess = Literal["none", "read", "write"]
_LEVELS = {"none": 0, "read": 1, "write": 2}
_HEX64 = re.compile(r"[0-9a-f]{64}")
#: The key under which the auth middleware leaves the caller's grant in the ASGI scope's state.
GRANT_STATE_KEY = "mem0_grant"


class TokensFileError(ValueError):
    """The tokens file cannot be used; the message names the entry and what is wrong."""


@dataclass(frozen=True)
class Grant:
    """What one bearer token may do."""

    name: str
    projects: tuple[str, ...] = ()
    global_access: GlobalAccess = "none"
    reset: bool = False
    #: The single MEM0_HTTP_BEARER_TOKEN (or stdio): every namespace, reset included.
    everything: bool = False

    def _refuse(self, missing: str) -> BridgeError:
        listed = ", ".join(self.projects) or "none"
        return BridgeError(
            f"the token {self.name!r} has no grant for {missing} (its projects: {listed}; "
            f"global: {self.global_access}). Ask the operator to extend it in "
            "MEM0_HTTP_TOKENS_FILE, or use a namespace it covers."
        )

    def allows(self, namespace: str, *, write: bool) -> bool:
        """May this token read (or write) `namespace` (pins follow what they pin to)?"""
        if self.everything:
            return True
        name = namespace.removeprefix(PIN_PREFIX)
        if name == GLOBAL:
            return _LEVELS[self.global_access] >= (2 if write else 1)
        return any(fnmatchcase(name, pattern) for pattern in self.projects)

    def check(self, namespace: str, *, write: bool) -> None:
        """Refuse, naming the missing grant, unless `allows`."""
        if self.allows(namespace, write=write):
            return
        name = namespace.removeprefix(PIN_PREFIX)
        if name == GLOBAL:
            raise self._refuse(f"{'writing' if write else 'reading'} global")
        raise self._refuse(f"project {name!r}")

    def check_all_namespaces(self) -> None:
        if not self.everything:
            raise self._refuse('scope="all" (every namespace)')

    def check_reset(self) -> None:
        if not (self.everything or self.reset):
            raise self._refuse("memory_reset (reset = false)")


EVERYTHING = Grant(name="bearer", everything=True)


def _grant(entry: Mapping[str, object], index: int) -> tuple[str, Grant]:
    where = f"tokens[{index}]"
    name, digest = entry.get("name"), entry.get("sha256")
    projects, level, reset = (
        entry.get("projects", []),
        entry.get("global", "none"),
        entry.get("reset", False),
    )
    unknown = set(entry) - {"name", "sha256", "projects", "global", "reset"}
    if unknown:
        raise TokensFileError(f"{where}: unknown keys {sorted(unknown)}")
    if not isinstance(name, str) or not name.strip():
        raise TokensFileError(f"{where}.name: a non-empty string is required")
    if not isinstance(digest, str) or not _HEX64.fullmatch(digest.lower()):
        raise TokensFileError(f"{where}.sha256: 64 hex digits (the SHA-256 of the token) required")
    if not isinstance(projects, list) or not all(isinstance(p, str) and p for p in projects):
        raise TokensFileError(f"{where}.projects: a list of project names or globs is required")
    if level not in _LEVELS:
        raise TokensFileError(f'{where}.global: one of "none", "read", "write"')
    if not isinstance(reset, bool):
        raise TokensFileError(f"{where}.reset: true or false")
    grant = Grant(
        name=name,
        projects=tuple(projects),
        global_access=cast(GlobalAccess, level),
        reset=reset,
    )
    return digest.lower(), grant


def load_tokens(path: Path) -> dict[str, Grant]:
    """The grants of a tokens file by token SHA-256; ValueError naming what is wrong."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise TokensFileError(f"{path}: {exc}") from exc
    entries = data.get("tokens")
    if not isinstance(entries, list) or not entries:
        raise TokensFileError(f"{path}: needs at least one [[tokens]] table")
    table: dict[str, Grant] = {}
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise TokensFileError(f"{path}: tokens[{index}] is not a table")
        digest, grant = _grant(entry, index)
        if digest in table:
            raise TokensFileError(
                f"{path}: tokens[{index}] repeats the sha256 of {table[digest].name}"
            )
        table[digest] = grant
    return table


class Tokens:
    """Bearer token → grant, for the HTTP transport; `reload()` re-reads the file (SIGHUP)."""

    def __init__(self, bearer_token: str | None, tokens_file: Path | None) -> None:
        self._bearer = bearer_token
        self._file = tokens_file
        self._table: dict[str, Grant] = load_tokens(tokens_file) if tokens_file else {}

    @property
    def required(self) -> bool:
        return self._bearer is not None or self._file is not None

    def reload(self) -> None:
        if self._file is None:
            return
        try:
            self._table = load_tokens(self._file)
        except ValueError as exc:
            logger.warning("tokens file not reloaded, the previous grants stay: %s", exc)
            return
        logger.info("tokens file reloaded: %d token(s)", len(self._table))

    def grant_for(self, token: str) -> Grant | None:
        if self._bearer is not None and hmac.compare_digest(token.encode(), self._bearer.encode()):
            return EVERYTHING
        digest = hashlib.sha256(token.encode()).hexdigest()
        for known, grant in self._table.items():
            if hmac.compare_digest(known, digest):
                return grant
        return None


def bearer_token(header: bytes) -> str | None:
    """The token of an `Authorization: Bearer <token>` header (scheme in any case, RFC 7235)."""
    scheme, _, token = header.decode("latin-1").strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()

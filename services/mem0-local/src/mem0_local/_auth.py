"""X-API-Key auth, the admin routes, and the human-held reset token.

Every comparison is constant-time (`hmac.compare_digest`), and no key or token is ever logged or
echoed: error messages name the header and the variable to set, never the value.
"""

from __future__ import annotations

import hmac

from fastapi import HTTPException, Request
from pydantic import SecretStr

from mem0_local._settings import Mem0LocalSettings

API_KEY_HEADER = "X-API-Key"
RESET_TOKEN_HEADER = "X-Reset-Token"  # noqa: S105 - a header name, not a secret


def _matches(given: str | None, expected: SecretStr | None) -> bool:
    if given is None or expected is None:
        return False
    return hmac.compare_digest(given.encode(), expected.get_secret_value().encode())


class Authorizer:
    """Decides who may call what, from the settings read at start."""

    def __init__(self, settings: Mem0LocalSettings) -> None:
        self._api_key = settings.api_key
        self._admin_key = settings.admin_api_key
        self._reset_token = settings.reset_token

    @property
    def api_key_required(self) -> bool:
        return self._api_key is not None

    async def require_api_key(self, request: Request) -> None:
        """FastAPI dependency on every route: 401 unless auth is off or the key matches."""
        if self._api_key is None:
            return
        given = request.headers.get(API_KEY_HEADER)
        if given is None:
            raise HTTPException(
                status_code=401,
                detail=f"Authentication required. Send the API key in the {API_KEY_HEADER} header.",
            )
        if not (_matches(given, self._api_key) or _matches(given, self._admin_key)):
            raise HTTPException(status_code=401, detail=f"Invalid API key in {API_KEY_HEADER}.")

    def require_admin(self, request: Request, *, reset_token_accepted: bool) -> None:
        """403 unless the admin key (or, for POST /reset, the reset token) is presented."""
        token_usable = reset_token_accepted and self._reset_token is not None
        if self._admin_key is None and not token_usable:
            needed = "MEM0_LOCAL_ADMIN_API_KEY"
            if reset_token_accepted:
                needed += " (admin key) or MEM0_LOCAL_RESET_TOKEN (reset token)"
            raise HTTPException(
                status_code=403, detail=f"Admin routes are disabled on this server: set {needed}."
            )
        given_token = request.headers.get(RESET_TOKEN_HEADER) if reset_token_accepted else None
        if given_token is not None:
            # A presented token decides alone: a wrong one refuses even next to the admin key,
            # so a caller holding the admin key cannot turn a bad token into a reset.
            if token_usable and _matches(given_token, self._reset_token):
                return
            if not token_usable:
                raise HTTPException(
                    status_code=403,
                    detail=f"This server accepts no {RESET_TOKEN_HEADER}: set "
                    "MEM0_LOCAL_RESET_TOKEN to enable it; nothing was changed.",
                )
            raise HTTPException(
                status_code=403,
                detail=f"The {RESET_TOKEN_HEADER} does not match the server's reset token; "
                "nothing was changed.",
            )
        if _matches(request.headers.get(API_KEY_HEADER), self._admin_key):
            return
        how = f"the admin API key in {API_KEY_HEADER}"
        if token_usable:
            how += f" or the reset token in {RESET_TOKEN_HEADER}"
        raise HTTPException(status_code=403, detail=f"This route needs {how}.")

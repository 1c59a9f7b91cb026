"""Why a judgement could not be made, one class per gRPC status the caller sees.

The caller (the bridge) treats any of these as "no judgement" and carries on; the distinct kinds
exist for operators (logs, `mem0mcp_judge_llm_errors_total{kind}`) and for tests.
"""

from __future__ import annotations

from typing import Any, ClassVar

import grpc


class JudgeError(Exception):
    """Base class; `kind` labels the metric, `code` is the status the caller gets. Each subclass
    names both: `class LLMTimeoutError(JudgeError, kind=..., code=...)`."""

    kind: ClassVar[str] = "error"
    code: ClassVar[grpc.StatusCode]

    def __init_subclass__(cls, *, kind: str, code: grpc.StatusCode, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.kind = kind
        cls.code = code


class LLMNotConfiguredError(JudgeError, kind="not_configured", code=grpc.StatusCode.UNAVAILABLE):
    """No LLM is configured (JUDGE_LLM_BASE_URL or JUDGE_LLM_MODEL unset)."""


class LLMTimeoutError(JudgeError, kind="timeout", code=grpc.StatusCode.DEADLINE_EXCEEDED):
    """The LLM did not answer within the per-attempt timeout or the caller's deadline."""


class LLMUnavailableError(JudgeError, kind="unavailable", code=grpc.StatusCode.UNAVAILABLE):
    """Unreachable, or still 429/5xx after the allowed retries."""


class LLMRejectedError(JudgeError, kind="rejected", code=grpc.StatusCode.FAILED_PRECONDITION):
    """A 4xx other than 429: the request or its credentials are wrong; retrying cannot help."""


class LLMBadAnswerError(JudgeError, kind="bad_answer", code=grpc.StatusCode.INTERNAL):
    """The answer was not JSON, or not JSON of the required shape."""

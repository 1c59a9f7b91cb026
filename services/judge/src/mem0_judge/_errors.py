"""Why a judgement could not be made, one class per gRPC status the caller sees.

The caller (the bridge) treats any of these as "no judgement" and carries on; the distinct kinds
exist for operators (logs, `mem0mcp_judge_llm_errors_total{kind}`) and for tests.
"""

from __future__ import annotations


class JudgeError(Exception):
    """Base class; `kind` labels the metric."""

    kind = "error"


class LLMNotConfiguredError(JudgeError):
    kind = "not_configured"


class LLMTimeoutError(JudgeError):
    """The LLM did not answer within the per-attempt timeout or the caller's deadline."""

    kind = "timeout"


class LLMUnavailableError(JudgeError):
    """Unreachable, or still 429/5xx after the allowed retries."""

    kind = "unavailable"


class LLMRejectedError(JudgeError):
    """A 4xx other than 429: the request or its credentials are wrong; retrying cannot help."""

    kind = "rejected"


class LLMBadAnswerError(JudgeError):
    """The answer was not JSON, or not JSON of the required shape."""

    kind = "bad_answer"

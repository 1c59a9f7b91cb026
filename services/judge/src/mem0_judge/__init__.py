"""mem0-judge: an OpenAI-compatible LLM behind gRPC that judges restated/superseded facts and
rewrites question queries into statements (HyDE-lite). See `_servicer` for the status codes."""

from mem0_common import is_question
from mem0_judge._answers import REWRITE_SCHEMA, JudgementAnswer, compare_schema
from mem0_judge._cache import TTLCache
from mem0_judge._errors import (
    JudgeError,
    LLMBadAnswerError,
    LLMNotConfiguredError,
    LLMRejectedError,
    LLMTimeoutError,
    LLMUnavailableError,
)
from mem0_judge._health import LLMHealth
from mem0_judge._llm import (
    ChatMessage,
    LLMClient,
    ResponseFormat,
    extract_json_object,
    retry_after_seconds,
)
from mem0_judge._prompts import compare_messages, load_prompt, rewrite_messages
from mem0_judge._server import JudgeServer, build_server
from mem0_judge._servicer import LLM_HEALTH_SERVICE, NOT_CONFIGURED_MESSAGE, SERVICE_FULL_NAME
from mem0_judge._settings import JudgeSettings

__all__ = [
    "LLM_HEALTH_SERVICE",
    "NOT_CONFIGURED_MESSAGE",
    "REWRITE_SCHEMA",
    "SERVICE_FULL_NAME",
    "ChatMessage",
    "JudgeError",
    "JudgeServer",
    "JudgeSettings",
    "JudgementAnswer",
    "LLMBadAnswerError",
    "LLMClient",
    "LLMHealth",
    "LLMNotConfiguredError",
    "LLMRejectedError",
    "LLMTimeoutError",
    "LLMUnavailableError",
    "ResponseFormat",
    "TTLCache",
    "build_server",
    "compare_messages",
    "compare_schema",
    "extract_json_object",
    "is_question",
    "load_prompt",
    "retry_after_seconds",
    "rewrite_messages",
]

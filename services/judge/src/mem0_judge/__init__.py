"""mem0-judge: an OpenAI-compatible LLM behind gRPC that judges restated/superseded facts and
rewrites question queries into statements (HyDE-lite). See `_servicer` for the status codes."""

from mem0_judge._answers import JudgementAnswer
from mem0_judge._cache import TTLCache
from mem0_judge._errors import (
    JudgeError,
    LLMBadAnswerError,
    LLMNotConfiguredError,
    LLMRejectedError,
    LLMTimeoutError,
    LLMUnavailableError,
)
from mem0_judge._llm import ChatMessage, LLMClient, extract_json_object, retry_after_seconds
from mem0_judge._prompts import compare_messages, load_prompt, rewrite_messages
from mem0_judge._questions import is_question
from mem0_judge._server import JudgeServer, build_server
from mem0_judge._servicer import NOT_CONFIGURED_MESSAGE, SERVICE_FULL_NAME
from mem0_judge._settings import JudgeSettings

__all__ = [
    "NOT_CONFIGURED_MESSAGE",
    "SERVICE_FULL_NAME",
    "ChatMessage",
    "JudgeError",
    "JudgeServer",
    "JudgeSettings",
    "JudgementAnswer",
    "LLMBadAnswerError",
    "LLMClient",
    "LLMNotConfiguredError",
    "LLMRejectedError",
    "LLMTimeoutError",
    "LLMUnavailableError",
    "TTLCache",
    "build_server",
    "compare_messages",
    "extract_json_object",
    "is_question",
    "load_prompt",
    "retry_after_seconds",
    "rewrite_messages",
]

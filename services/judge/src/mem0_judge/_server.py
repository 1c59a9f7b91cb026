"""Assemble the judge: settings -> LLM client, cache, servicer, and the shared gRPC server."""

from __future__ import annotations

from mem0_common import GrpcServer, ServiceRegistration
from mem0_judge._cache import TTLCache
from mem0_judge._judge import Judge
from mem0_judge._llm import LLMClient
from mem0_judge._servicer import SERVICE_FULL_NAME, JudgeServicer
from mem0_judge._settings import JudgeSettings
from mem0mcp.judge.v1 import judge_pb2_grpc


def llm_client(settings: JudgeSettings) -> LLMClient | None:
    """The configured client, or None when `JUDGE_LLM_BASE_URL`/`JUDGE_LLM_MODEL` are unset."""
    if not settings.llm_base_url or not settings.llm_model:
        return None
    return LLMClient(
        settings.llm_base_url,
        settings.llm_model,
        api_key=settings.llm_api_key,
        ca_bundle=settings.llm_ca_bundle,
        timeout_seconds=settings.llm_timeout_seconds,
        max_retries=settings.llm_max_retries,
        max_concurrency=settings.llm_max_concurrency,
        json_mode=settings.llm_json_mode,
    )


class JudgeServer(GrpcServer):
    """The shared gRPC server, plus the LLM client it owns and the judge's health rule.

    `start()` reports the judge service NOT_SERVING when no LLM is configured (the process itself
    is healthy), so `serve_until_signalled` can run it like any other service.
    """

    def __init__(self, settings: JudgeSettings, llm: LLMClient | None) -> None:
        judge = (
            None
            if llm is None
            else Judge(llm, TTLCache[str](settings.cache_size, settings.cache_ttl_seconds))
        )
        registration = ServiceRegistration(
            SERVICE_FULL_NAME,
            JudgeServicer(judge, settings),
            judge_pb2_grpc.add_JudgeServiceServicer_to_server,
        )
        super().__init__(settings.service_name, [registration], settings)
        self.settings = settings
        self.llm = llm

    async def start(self) -> None:
        await super().start()
        await self.set_serving(SERVICE_FULL_NAME, self.llm is not None)

    async def close_llm(self) -> None:
        if self.llm is not None:
            await self.llm.close()


def build_server(settings: JudgeSettings, llm: LLMClient | None = None) -> JudgeServer:
    """`llm` overrides the client built from settings (tests pass one with a fake transport)."""
    return JudgeServer(settings, llm if llm is not None else llm_client(settings))

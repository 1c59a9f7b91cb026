"""Assemble the judge: settings -> LLM client, cache, servicer, and the shared gRPC server."""

from __future__ import annotations

import logging

from mem0_common import GrpcServer, ServiceRegistration
from mem0_judge._cache import TTLCache
from mem0_judge._health import LLMHealth
from mem0_judge._judge import Judge
from mem0_judge._llm import LLMClient
from mem0_judge._servicer import LLM_HEALTH_SERVICE, SERVICE_FULL_NAME, JudgeServicer
from mem0_judge._settings import JudgeSettings
from mem0mcp.judge.v1 import judge_pb2_grpc

_log = logging.getLogger("mem0_judge")


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
        response_format=settings.llm_response_format,
    )


class JudgeServer(GrpcServer):
    """The shared gRPC server, plus the LLM client it owns and the judge's health rules.

    `start()` reports the judge service NOT_SERVING when no LLM is configured (the process itself
    is healthy), so `serve_until_signalled` can run it like any other service. The second name,
    `LLM_HEALTH_SERVICE`, follows the LLM's recent calls (see `mem0_judge._health`).
    """

    def __init__(self, settings: JudgeSettings, llm: LLMClient | None) -> None:
        self.llm_health = LLMHealth(settings.llm_degraded_after_failures)
        judge = (
            None
            if llm is None
            else Judge(
                llm,
                TTLCache[str](settings.cache_size, settings.cache_ttl_seconds),
                self.llm_health,
            )
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
        await self.set_serving(LLM_HEALTH_SERVICE, self.llm is not None and self.llm_health.healthy)
        self.llm_health.listen(self._llm_health_changed)

    async def _llm_health_changed(self, healthy: bool) -> None:
        _log.log(
            logging.INFO if healthy else logging.WARNING,
            "LLM %s: health reports %s %s",
            "answering again"
            if healthy
            else f"failed its last {self.settings.llm_degraded_after_failures} calls",
            LLM_HEALTH_SERVICE,
            "SERVING" if healthy else "NOT_SERVING (degraded)",
        )
        await self.set_serving(LLM_HEALTH_SERVICE, healthy)

    async def close_llm(self) -> None:
        if self.llm is not None:
            await self.llm.close()


def build_server(settings: JudgeSettings, llm: LLMClient | None = None) -> JudgeServer:
    """`llm` overrides the client built from settings (tests pass one with a fake transport)."""
    return JudgeServer(settings, llm if llm is not None else llm_client(settings))

"""FakeLLM in a process of its own, as a provider would be.

A benchmark that runs the bridge in its own interpreter must not run the LLM there too: the
fake's HTTP server would share that interpreter's GIL with the bridge, and every judge call
(a question's rewrite after each search, say) would slow the code being measured. The child
answers the judge's prompts and mem0's extraction, like the stacks' in-process fake; its latency
can be changed while it runs (a benchmark's slow round).
"""

from __future__ import annotations

import multiprocessing
from multiprocessing.connection import Connection
from types import TracebackType

from tests.fakes.judge_responder import judge_responder
from tests.fakes.llm import FakeLLM, extraction_responder

#: How long the child may take to start, and to answer a latency change.
START_SECONDS = 30
ANSWER_SECONDS = 10
_STOP = "stop"


def _serve(latency_seconds: float, conn: Connection) -> None:
    """Child process: run FakeLLM, report its base URL, take latency changes until stopped."""
    responders = [judge_responder, extraction_responder]
    with FakeLLM(responders=responders, latency_seconds=latency_seconds) as llm:
        conn.send(llm.base_url)
        while (message := conn.recv()) != _STOP:
            llm.latency_seconds = float(message)
            conn.send(llm.latency_seconds)


class FakeLLMProcess:
    """A running FakeLLM child (a context manager): `base_url`, and `latency_seconds` that a
    benchmark sets between rounds."""

    def __init__(self, latency_seconds: float = 0.0) -> None:
        self._latency_seconds = latency_seconds
        context = multiprocessing.get_context("spawn")
        self._conn, theirs = context.Pipe()
        self._theirs = theirs
        self._process = context.Process(
            target=_serve, args=(latency_seconds, theirs), name="fake-llm", daemon=True
        )
        self.base_url = ""

    @property
    def latency_seconds(self) -> float:
        return self._latency_seconds

    @latency_seconds.setter
    def latency_seconds(self, seconds: float) -> None:
        self._conn.send(seconds)
        if not self._conn.poll(ANSWER_SECONDS):
            raise RuntimeError("the FakeLLM process did not take the new latency")
        self._latency_seconds = float(self._conn.recv())

    def __enter__(self) -> FakeLLMProcess:
        self._process.start()
        if not self._conn.poll(START_SECONDS):
            self._process.kill()
            raise RuntimeError(f"the FakeLLM process did not start within {START_SECONDS} s")
        self.base_url = str(self._conn.recv())
        return self

    def __exit__(
        self,
        _type: type[BaseException] | None,
        _value: BaseException | None,
        _traceback: TracebackType | None,
    ) -> None:
        try:
            self._conn.send(_STOP)
        finally:
            self._process.join(ANSWER_SECONDS)
            if self._process.is_alive():
                self._process.kill()
            self._conn.close()
            self._theirs.close()

"""`python -m tests.docker.fake_llm_server`: the FakeLLM served on every address of a container.

The docker suite runs it in its own container on the stack's network, so that mem0-local and
the judges reach it by name (`http://llm:8080/v1`) the way they would reach a real provider.
It answers mem0's extraction prompt and the judge's compare and rewrite prompts, as the
in-process stack's FakeLLM does.
"""

from __future__ import annotations

import argparse
import socket
import sys

import uvicorn

from tests.fakes.judge_responder import judge_responder
from tests.fakes.llm import FakeLLM, extraction_responder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=8080)
    port = parser.parse_args().port
    fake = FakeLLM(responders=[judge_responder, extraction_responder])
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("0.0.0.0", port))
    config = uvicorn.Config(fake.app(), log_level="warning", lifespan="off")
    # Bound before serving: connections made from now on wait in the backlog, so the line below
    # is a true readiness signal.
    sys.stdout.write(f"fake LLM listening on 0.0.0.0:{port}\n")
    sys.stdout.flush()
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()

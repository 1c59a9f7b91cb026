"""Who may read `/metrics`: loopback by default; another address only behind a bearer token."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from pydantic import SecretStr, ValidationError

from mem0_common import GrpcServiceSettings, MetricsEndpoint


def _get(port: int, token: str | None = None) -> tuple[int, str]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/metrics")
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:  # noqa: S310 - loopback
            return int(response.status), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


@pytest.fixture
def guarded() -> Iterator[MetricsEndpoint]:
    endpoint = MetricsEndpoint("127.0.0.1", 0, token=SecretStr("metrics-secret"))
    yield endpoint
    endpoint.close()


def test_metrics_bind_loopback_by_default_whatever_the_grpc_address() -> None:
    settings = GrpcServiceSettings(host="0.0.0.0", metrics_port=0)

    assert settings.metrics_host == "127.0.0.1"


def test_metrics_on_a_non_loopback_address_without_a_token_are_refused_at_start() -> None:
    with pytest.raises(ValidationError, match="METRICS_TOKEN"):
        GrpcServiceSettings(metrics_host="0.0.0.0", metrics_port=9151)


def test_metrics_on_a_non_loopback_address_are_accepted_with_a_token() -> None:
    settings = GrpcServiceSettings(
        metrics_host="0.0.0.0", metrics_port=9151, metrics_token=SecretStr("t")
    )

    assert settings.metrics_token is not None


def test_an_empty_metrics_token_means_none() -> None:
    assert GrpcServiceSettings(metrics_token=SecretStr("")).metrics_token is None


def test_metrics_with_a_token_refuse_a_request_without_it(guarded: MetricsEndpoint) -> None:
    status, body = _get(guarded.port)

    assert status == 401
    assert "metrics-secret" not in body


def test_metrics_with_a_token_refuse_a_wrong_token(guarded: MetricsEndpoint) -> None:
    assert _get(guarded.port, "wrong")[0] == 401


def test_metrics_with_a_token_answer_the_right_one(guarded: MetricsEndpoint) -> None:
    status, body = _get(guarded.port, "metrics-secret")

    assert status == 200
    assert "mem0mcp_grpc_calls_total" in body

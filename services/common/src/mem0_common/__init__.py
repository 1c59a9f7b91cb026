"""What every mem0-mcp service shares, so that no service carries its own copy."""

from mem0_common._clock import clock_for, read_clock
from mem0_common._files import private_files
from mem0_common._grouping import linked_groups
from mem0_common._interceptors import REQUEST_ID_HEADER, CallInterceptor
from mem0_common._keepalive import CLIENT_KEEPALIVE_EXPIRY_SECONDS, SERVER_KEEP_ALIVE_SECONDS
from mem0_common._logging import announce_listening, configure_logging, request_id_var
from mem0_common._metrics import MetricsEndpoint
from mem0_common._process import ServiceProcess
from mem0_common._questions import is_question
from mem0_common._quoting import QUOTE_LIMIT, bare_or_quoted, quote_input
from mem0_common._server import GrpcServer, ServiceRegistration, serve_until_signalled
from mem0_common._settings import (
    RARELY_SET,
    GrpcServiceSettings,
    ServiceSettings,
    TuningSettings,
    grpc_port_field,
    listen_host_field,
    metrics_port_field,
    port_field,
    rarely_set_field,
    test_clock_field,
)
from mem0_common.env_table import render_env_table, render_tuning_table

__all__ = [
    "CLIENT_KEEPALIVE_EXPIRY_SECONDS",
    "QUOTE_LIMIT",
    "RARELY_SET",
    "REQUEST_ID_HEADER",
    "SERVER_KEEP_ALIVE_SECONDS",
    "CallInterceptor",
    "GrpcServer",
    "GrpcServiceSettings",
    "MetricsEndpoint",
    "ServiceProcess",
    "ServiceRegistration",
    "ServiceSettings",
    "TuningSettings",
    "announce_listening",
    "bare_or_quoted",
    "clock_for",
    "configure_logging",
    "grpc_port_field",
    "is_question",
    "linked_groups",
    "listen_host_field",
    "metrics_port_field",
    "port_field",
    "private_files",
    "quote_input",
    "rarely_set_field",
    "read_clock",
    "render_env_table",
    "render_tuning_table",
    "request_id_var",
    "serve_until_signalled",
    "test_clock_field",
]

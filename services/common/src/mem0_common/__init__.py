"""What every mem0-mcp gRPC service shares, so that no service carries its own copy."""

from mem0_common._interceptors import REQUEST_ID_HEADER, CallInterceptor
from mem0_common._logging import announce_listening, configure_logging, request_id_var
from mem0_common._metrics import MetricsEndpoint
from mem0_common._process import ServiceProcess
from mem0_common._server import GrpcServer, ServiceRegistration, serve_until_signalled
from mem0_common._settings import GrpcServiceSettings, ServiceSettings
from mem0_common.env_table import render_env_table

__all__ = [
    "REQUEST_ID_HEADER",
    "CallInterceptor",
    "GrpcServer",
    "GrpcServiceSettings",
    "MetricsEndpoint",
    "ServiceProcess",
    "ServiceRegistration",
    "ServiceSettings",
    "announce_listening",
    "configure_logging",
    "render_env_table",
    "request_id_var",
    "serve_until_signalled",
]

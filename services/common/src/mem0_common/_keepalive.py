"""Keep-alive timeouts chosen so that a pooled HTTP connection is never reused as it closes.

A client that sends on a pooled connection just as the server drops it for idling gets a
`ReadError` for a request the server never read; for a write, that reads as "outcome unknown".
uvicorn drops idle connections after 5 s and httpx (so the official MCP Python client) keeps
them 5 s: equal timeouts make exactly that race. So our HTTP servers keep idle connections far
longer than clients keep theirs, and our clients drop theirs before a server with uvicorn's
default (mem0's official one) drops its side.
"""

#: How long the bridge's and mem0-local's HTTP servers keep an idle connection open: past
#: httpx's 5 s, undici's 4 s, and the 60 s idle timeout of common reverse proxies and load
#: balancers, which reuse their upstream connections until then.
SERVER_KEEP_ALIVE_SECONDS = 65

#: How long our HTTP clients keep an idle pooled connection: under uvicorn's default 5 s.
CLIENT_KEEPALIVE_EXPIRY_SECONDS = 3.0

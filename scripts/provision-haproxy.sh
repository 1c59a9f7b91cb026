#!/usr/bin/env bash
# Make sure HAProxy (Debian's package) is on this machine: `make bench-scale` balances its bridge
# replicas with it. Idempotent; installing needs root.
set -euo pipefail

if command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ]; then
    echo "provision-haproxy: $(/usr/sbin/haproxy -v 2>/dev/null | head -n 1 || echo haproxy) present" >&2
    exit 0
fi
[ "$(id -u)" = "0" ] || { echo "provision-haproxy: installing haproxy needs root" >&2; exit 1; }
echo "provision-haproxy: installing Debian's haproxy" >&2
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -q --no-install-recommends haproxy >/dev/null 2>&1; then
    apt-get update -q >/dev/null
    apt-get install -y -q --no-install-recommends haproxy >/dev/null
fi
# The package's own service is not wanted: bench-scale starts HAProxy with its own file.
if command -v systemctl >/dev/null 2>&1; then systemctl disable --now haproxy >/dev/null 2>&1 || true; fi
service haproxy stop >/dev/null 2>&1 || true
echo "provision-haproxy: $(/usr/sbin/haproxy -v | head -n 1)" >&2

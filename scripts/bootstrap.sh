#!/usr/bin/env bash
# Create .venv (if needed) and install every service, editable, plus the dev tools, all pinned by
# constraints.txt so that the services' dependencies are resolved together.
set -euo pipefail
cd "$(dirname "$0")/.."

# pip warns once per package about index locations this machine's pip.conf lists but lacks;
# they are noise here, every other line of pip's output is kept.
quiet_pip() { "$@" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2); }

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    echo "bootstrap: creating .venv with $($PYTHON --version)" >&2
    "$PYTHON" -m venv .venv
fi
quiet_pip .venv/bin/python -m pip install --quiet --disable-pip-version-check "pip==26.3"
echo "bootstrap: installing services and dev tools (pinned by constraints.txt)" >&2
quiet_pip .venv/bin/python -m pip install --quiet --disable-pip-version-check --progress-bar off \
    -c constraints.txt \
    -e protos \
    -e services/common \
    -e services/ranker \
    -e services/judge \
    -e services/mem0-local \
    -e services/bridge \
    --group dev
echo "bootstrap: done" >&2

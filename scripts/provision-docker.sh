#!/usr/bin/env bash
# Make sure a Docker engine, a Compose v2 plugin and the base images the project's containers
# need are here, then print the environment to use them (`eval "$(scripts/provision-docker.sh)"`).
#
# On a machine with a working engine that can pull from a registry this only checks the engine
# and the compose plugin and prints the engine's address: the Dockerfiles' defaults
# (python:3.11-slim, pgvector/pgvector, PyTorch's CPU index) apply. On a machine that reaches only
# Debian and PyPI (this project's CI) it
#   1. installs Debian's docker.io when no engine answers and starts `dockerd` on a socket of its
#      own ($MEM0MCP_DOCKER_SOCKET),
#   2. builds the base images nobody can pull: Python 3.11 (Debian 12 via mmdebstrap, with this
#      host's CA bundle so that pip inside a build reaches the index), PostgreSQL 15 + pgvector
#      (the extension built by scripts/provision-postgres.sh, as on the host) and an image that
#      carries the local CPU torch wheel for mem0-local's build,
#   3. installs a Compose v2 plugin from Debian trixie's docker-compose package (bookworm's is v1),
#      through a private apt configuration that leaves the machine's sources untouched.
# Idempotent: every step is skipped when its result is already there. Logs go to stderr and
# $MEM0MCP_DOCKER_STATE; stdout carries only `export NAME=value` lines.
set -euo pipefail
cd "$(dirname "$0")/.."

SOCKET=${MEM0MCP_DOCKER_SOCKET:-/run/mem0mcp-docker.sock}
STATE=${MEM0MCP_DOCKER_STATE:-/var/tmp/mem0mcp-docker}
PYTHON_IMAGE=mem0mcp-python:3.11-bookworm
POSTGRES_IMAGE=mem0mcp-pgvector:15
TORCH_VERSION=2.13.0
TORCH_WHEELS_IMAGE=mem0mcp-torch-wheels:$TORCH_VERSION
# Where the CPU torch wheel lies on this machine (pip's find-links here).
TORCH_WHEELS_DIR=${MEM0MCP_TORCH_WHEELS_DIR:-/opt/wheels}
# auto: build local base images only when the registry cannot be reached; always / never.
LOCAL_IMAGES=${MEM0MCP_LOCAL_IMAGES:-auto}

say() { printf 'provision-docker: %s\n' "$*" >&2; }
die() { say "ERROR: $*"; exit 1; }
# Seconds since the script started, for the phase timings CI's log shows.
elapsed() { echo "$((SECONDS))s"; }

mkdir -p "$STATE"

apt_install() {
    local log=$STATE/apt-install.log
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >"$log" 2>&1; then
        apt-get update -q >"$STATE/apt-update.log" 2>&1 || die "apt-get update failed; see $STATE/apt-update.log"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >"$log" 2>&1 \
            || die "cannot install $*; see $log"
    fi
}

engine_answers() { timeout 20 docker info --format '{{.ServerVersion}}' >/dev/null 2>&1; }

# ---------------------------------------------------------------------------------------- engine

if [ -z "${DOCKER_HOST:-}" ] && engine_answers; then
    say "the default Docker engine answers"
elif [ -n "${DOCKER_HOST:-}" ] && engine_answers; then
    say "the Docker engine at DOCKER_HOST=$DOCKER_HOST answers"
else
    export DOCKER_HOST=unix://$SOCKET
    if ! engine_answers; then
        [ "$(id -u)" = "0" ] || die "no Docker engine answers and starting one needs root"
        if ! command -v dockerd >/dev/null 2>&1; then
            say "installing Debian's docker.io (engine $(elapsed))"
            apt_install docker.io
        fi
        pidfile=/run/mem0mcp-dockerd.pid
        if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
            say "dockerd (pid $(cat "$pidfile")) is running but does not answer yet"
        else
            say "starting dockerd on $SOCKET (log: $STATE/dockerd.log)"
            rm -f "$SOCKET"
            # setsid: the engine must outlive this script and the make that ran it.
            setsid dockerd --host "unix://$SOCKET" --pidfile "$pidfile" \
                >>"$STATE/dockerd.log" 2>&1 </dev/null &
        fi
        for _ in $(seq 1 60); do engine_answers && break; sleep 1; done
        engine_answers || die "dockerd did not answer on $SOCKET within 60 s; see $STATE/dockerd.log"
    fi
    say "Docker engine $(docker info --format '{{.ServerVersion}}') answers at $DOCKER_HOST ($(elapsed))"
fi

# -------------------------------------------------------------------------------- compose plugin

if docker compose version >/dev/null 2>&1; then
    say "compose plugin: $(docker compose version --short)"
else
    [ "$(id -u)" = "0" ] || die "the compose v2 plugin is missing and installing it needs root"
    mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
    [ -n "$mirror" ] || mirror=$(awk '/^deb / {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
    [ -n "$mirror" ] || die "cannot find the Debian mirror in /etc/apt/sources.list.d/debian.sources"
    work=$STATE/compose
    mkdir -p "$work/lists/partial" "$work/archives/partial"
    echo "deb $mirror trixie main" >"$work/sources.list"
    apt_private=(-o "Dir::Etc::SourceList=$work/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
                 -o "Dir::State::Lists=$work/lists" -o "Dir::Cache::Archives=$work/archives"
                 -o "Dir::State::Status=/dev/null")
    say "fetching Debian trixie's docker-compose (v2) package"
    apt-get "${apt_private[@]}" update -q >"$work/apt-update.log" 2>&1 \
        || die "cannot read the trixie index from $mirror; see $work/apt-update.log"
    (cd "$work" && apt-get "${apt_private[@]}" download -q docker-compose >"$work/apt-download.log" 2>&1) \
        || die "cannot download docker-compose; see $work/apt-download.log"
    rm -rf "$work/root" && mkdir "$work/root"
    dpkg-deb -x "$(ls "$work"/docker-compose_*.deb | head -n 1)" "$work/root"
    plugin=$(find "$work/root" -type f -name docker-compose -path '*cli-plugins*' | head -n 1)
    [ -n "$plugin" ] || plugin=$(find "$work/root" -type f -name docker-compose | head -n 1)
    [ -n "$plugin" ] || die "the docker-compose package holds no docker-compose binary"
    install -D -m 0755 "$plugin" /usr/local/lib/docker/cli-plugins/docker-compose
    docker compose version >/dev/null 2>&1 || die "the installed compose plugin does not run"
    say "compose plugin: $(docker compose version --short) ($(elapsed))"
fi

# ----------------------------------------------------------------------------------- base images

registry_reachable() { timeout 60 docker pull -q python:3.11-slim >/dev/null 2>&1; }

case "$LOCAL_IMAGES" in
    always) local_images=1 ;;
    never) local_images=0 ;;
    auto)
        if docker image inspect python:3.11-slim >/dev/null 2>&1 || registry_reachable; then
            local_images=0
        else
            local_images=1
        fi ;;
    *) die "MEM0MCP_LOCAL_IMAGES must be auto, always or never (is $LOCAL_IMAGES)" ;;
esac

printf 'export DOCKER_HOST=%q\n' "${DOCKER_HOST:-unix:///var/run/docker.sock}"
if [ "$local_images" = 0 ]; then
    say "the registry answers: the Dockerfiles' default base images apply"
    exit 0
fi

[ "$(id -u)" = "0" ] || die "building the local base images needs root (mmdebstrap, apt-get)"
have_image() { docker image inspect "$1" >/dev/null 2>&1; }

if ! have_image "$PYTHON_IMAGE"; then
    command -v mmdebstrap >/dev/null 2>&1 || apt_install mmdebstrap
    say "building $PYTHON_IMAGE with mmdebstrap (about a minute)"
    # The host's CA bundle goes in so that HTTPS from a build (pip) is trusted where this host's
    # is; it is never committed. python-is-python3: the Dockerfiles call `python`.
    mmdebstrap --quiet --variant=minbase \
        --include=python3,python3-venv,python-is-python3,ca-certificates \
        --customize-hook='upload /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt' \
        --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
        bookworm - 2>"$STATE/mmdebstrap.log" \
        | docker import --change 'CMD ["python3"]' --change 'ENV LANG=C.UTF-8' - "$PYTHON_IMAGE" >/dev/null \
        || die "building $PYTHON_IMAGE failed; see $STATE/mmdebstrap.log"
    say "built $PYTHON_IMAGE ($(elapsed))"
fi

if ! have_image "$TORCH_WHEELS_IMAGE"; then
    wheel=$(find "$TORCH_WHEELS_DIR" -maxdepth 1 -name "torch-$TORCH_VERSION+cpu-*.whl" 2>/dev/null | head -n 1)
    [ -n "$wheel" ] || die "no torch-$TORCH_VERSION+cpu wheel in $TORCH_WHEELS_DIR (set MEM0MCP_TORCH_WHEELS_DIR)"
    context=$STATE/torch-wheels
    rm -rf "$context" && mkdir -p "$context"
    ln "$wheel" "$context/" 2>/dev/null || cp "$wheel" "$context/"
    printf 'FROM %s\nCOPY *.whl /wheels/\n' "$PYTHON_IMAGE" >"$context/Dockerfile"
    say "building $TORCH_WHEELS_IMAGE from $(basename "$wheel")"
    DOCKER_BUILDKIT=0 docker build -q -t "$TORCH_WHEELS_IMAGE" "$context" >"$STATE/torch-wheels.log" 2>&1 \
        || die "building $TORCH_WHEELS_IMAGE failed; see $STATE/torch-wheels.log"
    rm -rf "$context"
    say "built $TORCH_WHEELS_IMAGE ($(elapsed))"
fi

if ! have_image "$POSTGRES_IMAGE"; then
    # The extension built for the host's PostgreSQL 15 (same Debian release, same major version).
    pg_lib=/usr/lib/postgresql/15/lib
    pg_share=/usr/share/postgresql/15/extension
    if [ ! -f "$pg_lib/vector.so" ]; then
        say "pgvector is not built on this host yet: running scripts/provision-postgres.sh"
        scripts/provision-postgres.sh
    fi
    [ -f "$pg_lib/vector.so" ] || die "no $pg_lib/vector.so after provisioning PostgreSQL"
    context=$STATE/pgvector
    rm -rf "$context" && mkdir -p "$context/extension"
    cp "$pg_lib/vector.so" "$context/"
    cp "$pg_share"/vector.control "$pg_share"/vector--*.sql "$context/extension/"
    cp scripts/docker/postgres-entrypoint.sh "$context/entrypoint.sh"
    cat >"$context/Dockerfile" <<EOF
FROM $PYTHON_IMAGE
# No cluster from the package: the entrypoint creates one in the data volume, as the official
# postgres image does.
RUN mkdir -p /etc/postgresql-common/createcluster.d \\
 && echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.d/no-main.conf \\
 && apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends postgresql-15 \\
 && rm -rf /var/lib/apt/lists/* \\
 && mkdir -p /var/lib/postgresql/data /docker-entrypoint-initdb.d /var/run/postgresql \\
 && chown -R postgres:postgres /var/lib/postgresql /var/run/postgresql && chmod 700 /var/lib/postgresql/data
COPY vector.so /usr/lib/postgresql/15/lib/
COPY extension/ /usr/share/postgresql/15/extension/
COPY entrypoint.sh /usr/local/bin/docker-entrypoint.sh
ENV PATH=/usr/lib/postgresql/15/bin:\$PATH PGDATA=/var/lib/postgresql/data
USER postgres
VOLUME /var/lib/postgresql/data
EXPOSE 5432
STOPSIGNAL SIGINT
ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]
CMD ["postgres"]
EOF
    say "building $POSTGRES_IMAGE (PostgreSQL 15 from Debian + pgvector)"
    DOCKER_BUILDKIT=0 docker build -t "$POSTGRES_IMAGE" "$context" >"$STATE/pgvector.log" 2>&1 \
        || die "building $POSTGRES_IMAGE failed; see $STATE/pgvector.log"
    say "built $POSTGRES_IMAGE ($(elapsed))"
fi

# What the Dockerfiles, compose.yaml and tests/docker read to use the images built here.
printf 'export MEM0_MCP_PYTHON_IMAGE=%q\n' "$PYTHON_IMAGE"
printf 'export MEM0_MCP_POSTGRES_IMAGE=%q\n' "$POSTGRES_IMAGE"
printf 'export MEM0_MCP_TORCH_WHEELS_IMAGE=%q\n' "$TORCH_WHEELS_IMAGE"
printf 'export MEM0_MCP_TORCH_INDEX_URL=\n'
say "done ($(elapsed))"

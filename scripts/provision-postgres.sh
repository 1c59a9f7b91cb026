#!/usr/bin/env bash
# Make sure PostgreSQL on 127.0.0.1:5432 is up and can create the `vector` extension.
#
# Debian 12 packages no pgvector for PostgreSQL 15, so it is built from Debian's own source
# package (trixie) with a private apt configuration that leaves the machine's sources untouched.
# Idempotent: every step is skipped when its result is already there.
set -euo pipefail

PGHOST=${PGHOST:-127.0.0.1}
PGPORT=${PGPORT:-5432}
PGUSER=${PGUSER:-postgres}
export PGHOST PGPORT PGUSER

say() { printf 'provision-postgres: %s\n' "$*" >&2; }
die() { say "ERROR: $*"; exit 1; }

server_up() { pg_isready -q -h "$PGHOST" -p "$PGPORT" 2>/dev/null; }

if ! server_up; then
    if command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
        version=$(ls /etc/postgresql | sort -V | tail -n 1)
        say "PostgreSQL is not answering on $PGHOST:$PGPORT; starting cluster $version/main"
        pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
        for _ in $(seq 1 30); do server_up && break; sleep 1; done
    fi
    server_up || die "no PostgreSQL answers on $PGHOST:$PGPORT (set PGHOST/PGPORT, or install and start PostgreSQL 15)"
fi

vector_available() {
    [ "$(psql -XAtq -d postgres -c "select count(*) from pg_available_extensions where name = 'vector'")" = "1" ]
}

if vector_available; then
    say "pgvector already available"
    exit 0
fi

[ "$(id -u)" = "0" ] || die "pgvector is missing and building it needs root (apt-get, make install)"

server_version=$(psql -XAtq -d postgres -c "show server_version_num")
major=$((server_version / 10000))
pg_config=/usr/lib/postgresql/$major/bin/pg_config
work=${PGVECTOR_BUILD_DIR:-/var/tmp/mem0mcp-pgvector}
mkdir -p "$work/lists/partial"

mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
[ -n "$mirror" ] || mirror=$(awk '/^deb / {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
[ -n "$mirror" ] || die "cannot find the Debian mirror in /etc/apt/sources.list.d/debian.sources"
echo "deb-src $mirror trixie main" > "$work/sources.list"
apt_private=(-o "Dir::Etc::SourceList=$work/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
             -o "Dir::State::Lists=$work/lists")

if [ ! -f "/usr/include/postgresql/$major/server/postgres.h" ]; then
    installed=$(dpkg-query -W -f='${Version}' "postgresql-$major")
    say "installing postgresql-server-dev-$major=$installed (headers matching the running server)"
    if ! apt-get install -y -q "postgresql-server-dev-$major=$installed" >"$work/apt-install.log" 2>&1; then
        apt-get update -q >"$work/apt-update.log" 2>&1 || die "apt-get update failed; see $work/apt-update.log"
        apt-get install -y -q "postgresql-server-dev-$major=$installed" >"$work/apt-install.log" 2>&1 \
            || die "cannot install postgresql-server-dev-$major=$installed; see $work/apt-install.log"
    fi
fi

src=$(find "$work" -maxdepth 1 -type d -name 'pgvector-*' | head -n 1)
if [ -z "$src" ]; then
    say "fetching Debian's pgvector source package"
    apt-get "${apt_private[@]}" update -q >"$work/apt-src-update.log" 2>&1 \
        || die "cannot read the trixie source index from $mirror; see $work/apt-src-update.log"
    (cd "$work" && apt-get "${apt_private[@]}" source --download-only -q pgvector >"$work/apt-source.log" 2>&1) \
        || die "cannot download pgvector's source package; see $work/apt-source.log"
    dsc=$(ls "$work"/pgvector_*.dsc | head -n 1)
    tarball=$(ls "$work"/pgvector_*.orig.tar.* | head -n 1)
    tar -xf "$tarball" -C "$work"
    src=$(find "$work" -maxdepth 1 -type d -name 'pgvector-*' | head -n 1)
    [ -n "$src" ] || die "unpacking $tarball (from $dsc) gave no pgvector-* directory"
fi

say "building pgvector in $src"
make -C "$src" PG_CONFIG="$pg_config" OPTFLAGS="" >"$work/build.log" 2>&1 || die "build failed; see $work/build.log"
make -C "$src" PG_CONFIG="$pg_config" OPTFLAGS="" install >>"$work/build.log" 2>&1 || die "install failed; see $work/build.log"
vector_available || die "pgvector installed but PostgreSQL does not list it"
say "pgvector ready"

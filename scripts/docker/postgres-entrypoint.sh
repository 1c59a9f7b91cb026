#!/bin/sh
# Entrypoint of the locally built PostgreSQL + pgvector image (scripts/provision-docker.sh), for
# machines that cannot pull the official one. It keeps the official image's contract that
# compose.yaml and the tests rely on: POSTGRES_USER / POSTGRES_PASSWORD / POSTGRES_DB, a cluster
# created on an empty $PGDATA, /docker-entrypoint-initdb.d/*.sql and *.sh run once against
# POSTGRES_DB, then `postgres` in the foreground listening on every address.
set -eu

: "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set}"
POSTGRES_USER=${POSTGRES_USER:-postgres}
POSTGRES_DB=${POSTGRES_DB:-$POSTGRES_USER}
export PGDATA=${PGDATA:-/var/lib/postgresql/data}

if [ "${1:-postgres}" != "postgres" ]; then
    exec "$@"
fi
[ "$#" -gt 0 ] && shift

if [ ! -s "$PGDATA/PG_VERSION" ]; then
    password_file=$(mktemp)
    printf '%s\n' "$POSTGRES_PASSWORD" >"$password_file"
    initdb --username="$POSTGRES_USER" --pwfile="$password_file" --encoding=UTF8 --locale=C.UTF-8 \
        --auth-local=trust --auth-host=scram-sha-256 >/dev/null
    rm -f "$password_file"
    echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
    # Local socket only while initialising: nobody may connect before the init scripts ran.
    pg_ctl --wait --silent -o "-c listen_addresses=''" start
    if [ "$POSTGRES_DB" != "postgres" ]; then
        # psql interpolates :"db" (quoted as an identifier) only in what it reads, not in -c.
        echo 'CREATE DATABASE :"db";' | psql -v ON_ERROR_STOP=1 --no-psqlrc -q \
            --username="$POSTGRES_USER" --dbname=postgres --set=db="$POSTGRES_DB"
    fi
    for script in /docker-entrypoint-initdb.d/*; do
        case "$script" in
            *.sql) echo "running $script"
                   psql -v ON_ERROR_STOP=1 --no-psqlrc -q --username="$POSTGRES_USER" \
                       --dbname="$POSTGRES_DB" -f "$script" ;;
            *.sh) echo "running $script"; . "$script" ;;
            *) ;;
        esac
    done
    pg_ctl --wait --silent -m fast stop
    echo "PostgreSQL init process complete; ready for start up."
fi

exec postgres -c listen_addresses='*' "$@"

#!/usr/bin/env bash
# A throwaway PostgreSQL 15 (+ pgvector) cluster on 127.0.0.1, for the test suite, CI and benchmarks (as root).
#   pg-cluster.sh install          apt: postgresql-15 (+ server headers); builds pgvector from Debian trixie's
#                                  source package (bookworm has none); no-op when both are present
#   pg-cluster.sh start DIR [PORT] initdb (trust auth, user postgres, UTF8, C locale) + start on 127.0.0.1 on
#                                  PORT or a free port; prints the URL. DIR must be reachable by user postgres.
#   pg-cluster.sh stop DIR         fast shutdown of that cluster, by the PID in its own postmaster.pid
# The Debian mirror is read from this machine's own apt sources at run time: no host name is written here.
# Postgres refuses to run as root, so the cluster runs as user postgres (runuser).
set -euo pipefail
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
EXT=/usr/share/postgresql/15/extension

debian_uri() { # the first Debian archive URI configured on this machine
  { grep -h '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}'
    grep -h '^deb ' /etc/apt/sources.list 2>/dev/null | awk '{print $2}'; } | grep -E '/debian/?$' | head -1 || true
}

free_port() { # a port nothing listens on (bash's /dev/tcp connect fails on a closed port)
  local port
  for _ in $(seq 1 50); do
    port=$((20000 + RANDOM % 20000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "$port"; return 0; fi
  done
  echo "no free port found" >&2; return 1
}

case "${1:-}" in
install)
  export DEBIAN_FRONTEND=noninteractive
  if [ ! -x "$PGBIN/postgres" ] || [ ! -f /usr/include/postgresql/15/server/postgres.h ]; then
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends postgresql-15 postgresql-server-dev-15 make gcc >/dev/null
  fi
  if [ ! -f "$EXT/vector.control" ]; then
    uri=$(debian_uri)
    [ -n "$uri" ] || { echo "no Debian archive in this machine's apt sources" >&2; exit 1; }
    A=$(mktemp -d)
    trap 'rm -rf "$A"' EXIT
    mkdir -p "$A/lists/partial" "$A/cache/archives/partial" "$A/src"
    echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri trixie main" >"$A/sources.list"
    O=(-o Dir::Etc::sourcelist="$A/sources.list" -o Dir::Etc::sourceparts=/nonexistent
      -o Dir::State::Lists="$A/lists" -o Dir::Cache="$A/cache")
    apt-get "${O[@]}" update -qq
    (cd "$A/src" && apt-get "${O[@]}" source --download-only pgvector >/dev/null 2>&1 && tar xzf pgvector_*.orig.tar.gz)
    make -C "$A"/src/pgvector-*/ -j2 PG_CONFIG="$PGBIN/pg_config" OPTFLAGS="" >/dev/null
    make -C "$A"/src/pgvector-*/ install PG_CONFIG="$PGBIN/pg_config" >/dev/null
  fi
  echo "postgres: $("$PGBIN/postgres" --version); pgvector $(sed -n "s/^default_version = '\(.*\)'/\1/p" "$EXT/vector.control")"
  ;;
start)
  D=${2:?usage: pg-cluster.sh start DIR [PORT]}
  P=${3:-$(free_port)}
  mkdir -p "$D"
  chown postgres:postgres "$D"
  chmod 700 "$D"
  runuser -u postgres -- test -x "$(dirname "$D")" || chmod o+x "$(dirname "$D")" # e.g. a mktemp -d parent
  [ -f "$D/data/PG_VERSION" ] ||
    runuser -u postgres -- "$PGBIN/initdb" -D "$D/data" -U postgres --auth=trust -E UTF8 --no-locale >/dev/null
  # Throwaway: no fsync (a crash loses the cluster, which is never reused).
  runuser -u postgres -- "$PGBIN/pg_ctl" -D "$D/data" -l "$D/pg.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $P -k $D -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
    start >/dev/null
  echo "postgres://postgres@127.0.0.1:$P/postgres"
  ;;
stop)
  D=${2:?usage: pg-cluster.sh stop DIR}
  [ -f "$D/data/postmaster.pid" ] || exit 0
  pid=$(head -1 "$D/data/postmaster.pid")
  # SIGINT = fast shutdown; this cluster's own postmaster only (never by process name).
  kill -INT "$pid" 2>/dev/null || exit 0
  for _ in $(seq 1 120); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 0.25; done
  echo "postgres (pid $pid) did not stop in 30 s" >&2
  exit 1
  ;;
*)
  echo "usage: $0 install | start DIR [PORT] | stop DIR" >&2
  exit 2
  ;;
esac

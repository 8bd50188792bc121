# shellcheck shell=bash
# Infrastructure Gantry needs on one machine: PostgreSQL and NATS JetStream on loopback.
# Sourced by bin/gantry and .ci/run so both bring the machine up the same way.
# Every function is idempotent: it starts what is stopped and installs what is missing.

GANTRY_DATABASES=(gantry_admission gantry_quota gantry_inventory gantry_placement)
# tests use *_test (each service's own tests) and gantry_e2e_* (e2e-tests)
GANTRY_NATS_STORE=${GANTRY_NATS_STORE:-/var/lib/nats-server}

infra_log() { printf '[gantry] %s\n' "$*" >&2; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    infra_log "need root for: $*"; return 1; fi
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_port() { # port seconds
  local i
  for ((i = 0; i < $2 * 10; i++)); do port_open "$1" && return 0; sleep 0.1; done
  return 1
}

apt_install() {
  infra_log "installing $* from Debian packages"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null 2>&1 ||
    { as_root apt-get update -q >/dev/null 2>&1 && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null; }
}

ensure_java() {
  if [ -z "${JAVA_HOME:-}" ] || ! "$JAVA_HOME/bin/java" -version 2>&1 | grep -qE 'version "(2[1-9]|[3-9][0-9])'; then
    local candidate
    for candidate in /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/temurin-21-jdk-amd64 /usr/lib/jvm/java-25-openjdk-amd64 /usr/lib/jvm/java-21-openjdk-amd64; do
      if [ -x "$candidate/bin/java" ]; then export JAVA_HOME=$candidate; break; fi
    done
  fi
  if [ -z "${JAVA_HOME:-}" ] || [ ! -x "$JAVA_HOME/bin/java" ]; then
    infra_log "Java 21+ is needed (Timefold Solver 2.x); set JAVA_HOME"; return 1
  fi
  export PATH="$JAVA_HOME/bin:$PATH"
  command -v mvn >/dev/null || apt_install maven
}

ensure_postgres() {
  if ! port_open 5432; then
    if ! ls /etc/postgresql/*/main >/dev/null 2>&1; then apt_install postgresql; fi
    local version
    version=$(ls /etc/postgresql | sort -V | tail -n 1)
    infra_log "starting PostgreSQL $version"
    as_root pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
    wait_port 5432 30 || { infra_log "PostgreSQL did not open 127.0.0.1:5432"; return 1; }
  fi
  ensure_databases
}

psql_admin() { # run SQL as the postgres superuser (local socket, then loopback)
  if [ "$(id -u)" = 0 ] && id postgres >/dev/null 2>&1; then
    su postgres -c "psql -v ON_ERROR_STOP=1 -qAt -c \"$1\"" 2>/dev/null && return 0
  fi
  psql -h 127.0.0.1 -U postgres -v ON_ERROR_STOP=1 -qAt -c "$1"
}

ensure_databases() {
  psql_admin "select 1 from pg_roles where rolname='gantry'" | grep -q 1 ||
    psql_admin "create role gantry login password 'gantry'"
  local db
  for db in "${GANTRY_DATABASES[@]}" "${GANTRY_DATABASES[@]/%/_test}" "${GANTRY_DATABASES[@]/gantry_/gantry_e2e_}"; do
    psql_admin "select 1 from pg_database where datname='$db'" | grep -q 1 ||
      psql_admin "create database $db owner gantry"
  done
}

ensure_nats() {
  if ! port_open 4222; then
    command -v nats-server >/dev/null || [ -x /usr/sbin/nats-server ] || apt_install nats-server
    local bin
    bin=$(command -v nats-server || echo /usr/sbin/nats-server)
    mkdir -p "$GANTRY_NATS_STORE" 2>/dev/null || as_root mkdir -p "$GANTRY_NATS_STORE"
    infra_log "starting NATS with JetStream (store $GANTRY_NATS_STORE)"
    as_root start-stop-daemon --start --oknodo --background --exec "$bin" -- \
      -a 127.0.0.1 -p 4222 -js -sd "$GANTRY_NATS_STORE" -l /var/log/nats-server.log
    wait_port 4222 20 || { infra_log "NATS did not open 127.0.0.1:4222"; return 1; }
  fi
}

# The broker of bin/gantry up's services: a nats-server of their own on loopback, port
# GANTRY_DEV_NATS_PORT (4223), its configuration and JetStream store under STATE/nats. The test
# suite uses the machine's broker (4222, ensure_nats), so a developer's Gantry and the tests never
# consume each other's events. Prints the URL. Not used when GANTRY_NATS_URL names a broker.
ensure_dev_broker() { # state-dir
  local dir="$1/nats" port="${GANTRY_DEV_NATS_PORT:-4223}" bin
  if ! port_open "$port"; then
    command -v nats-server >/dev/null || [ -x /usr/sbin/nats-server ] || apt_install nats-server
    bin=$(command -v nats-server || echo /usr/sbin/nats-server)
    mkdir -p "$dir/store"
    cat >"$dir/nats.conf" <<CONF
# written by bin/gantry up (bin/lib/infra.sh ensure_dev_broker); rewritten on each start
listen: 127.0.0.1:$port
jetstream { store_dir: "$dir/store" }
CONF
    infra_log "starting Gantry's own NATS broker on 127.0.0.1:$port (store $dir/store)"
    nohup "$bin" -c "$dir/nats.conf" -l "$dir/nats.log" >/dev/null 2>&1 &
    echo $! >"$dir/nats.pid"
    wait_port "$port" 20 || { infra_log "NATS did not open 127.0.0.1:$port (see $dir/nats.log)"; return 1; }
  fi
  echo "nats://127.0.0.1:$port"
}

stop_dev_broker() { # state-dir
  local pidfile="$1/nats/nats.pid" pid
  [ -f "$pidfile" ] && pid=$(cat "$pidfile") && kill "$pid" 2>/dev/null && echo "stopped Gantry's NATS broker"
  rm -f "$pidfile"
}

# headless Chromium and its WebDriver, for the console's browser tests (e2e-tests ConsoleIT)
ensure_chromium() {
  [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ] || apt_install chromium chromium-driver
}

# kubectl, for deploy-tests' `kubectl kustomize` (renders manifests; no cluster needed)
ensure_kubectl() {
  [ -x /usr/bin/kubectl ] || apt_install kubernetes-client
}

# promtool, for deploy-tests' checks of the alerts and dashboard queries: taken out of Debian's
# prometheus package into .gantry/tools (installing the package would also start a Prometheus server)
ensure_promtool() {
  local tools
  tools="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/.gantry/tools"
  [ -x /usr/bin/promtool ] || [ -x "$tools/promtool" ] && return 0
  infra_log "extracting promtool from Debian's prometheus package into $tools"
  mkdir -p "$tools" && (cd "$tools" && { apt-get download prometheus >/dev/null 2>&1 ||
    { as_root apt-get update -q >/dev/null 2>&1 && apt-get download prometheus >/dev/null; }; }) &&
    dpkg-deb --fsys-tarfile "$tools"/prometheus_*.deb | tar -x -O ./usr/bin/promtool >"$tools/promtool" &&
    chmod +x "$tools/promtool" && rm -f "$tools"/prometheus_*.deb
}

ensure_infra() {
  ensure_java && ensure_postgres && ensure_nats && ensure_chromium && ensure_kubectl && ensure_promtool
}

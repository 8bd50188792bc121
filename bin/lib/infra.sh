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
    ensure_database "$db"
  done
}

ensure_database() { # name (owned by gantry)
  psql_admin "select 1 from pg_database where datname='$1'" | grep -q 1 || psql_admin "create database $1 owner gantry"
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

# Who may do what on Gantry's broker (docs/security.md has the table). One NATS account per
# deployment (GANTRY_DEPLOYMENT, default gantry) holds the four streams; each service has a user of
# its own that may publish only the subjects it owns (contracts' Subjects) and read only the streams
# it consumes; admin may do anything in the account (operators, the nats CLI).
GANTRY_NATS_USERS=(admission quota inventory placement admin)
declare -A GANTRY_NATS_PUBLISHES=(
  [admission]="jobs.queued jobs.cancelled jobs.refused"
  [quota]="quota.shares"
  [inventory]="nodes.upserted nodes.removed"
  [placement]="placements.bound placements.preempted placements.migrated placements.failed placements.requeued placements.completed placements.pending placements.gang-formed placements.gang-dissolved"
)
declare -A GANTRY_NATS_CONSUMES=([admission]="PLACEMENTS" [quota]="JOBS PLACEMENTS NODES" [inventory]="" [placement]="JOBS NODES QUOTA")
# the user bin/gantry up connects a service as
declare -A GANTRY_NATS_USER_OF=([admission-service]=admission [quota-service]=quota
  [node-inventory-service]=inventory [placement-service]=placement)

# A quoted, comma-separated list for nats.conf: nats_list a b -> "a", "b"
nats_list() { local first=1 item; for item in "$@"; do ((first)) || printf ', '; printf '"%s"' "$item"; first=0; done; }

# The JetStream API subjects a service's connection needs (what the NATS extension calls; traced
# with nats-server -DV): account and stream info, declaring the four streams at start (every
# service declares them alike), and on the streams it consumes: creating and reading its durable
# pull consumers, fetching and acknowledging. Never stream delete, purge or message delete.
nats_service_api() { # user
  local stream subjects=('$JS.API.INFO' '$JS.API.STREAM.NAMES' '$JS.API.STREAM.LIST')
  for stream in JOBS NODES QUOTA PLACEMENTS; do
    subjects+=("\$JS.API.STREAM.INFO.$stream" "\$JS.API.STREAM.CREATE.$stream" "\$JS.API.STREAM.UPDATE.$stream")
  done
  for stream in ${GANTRY_NATS_CONSUMES[$1]}; do
    subjects+=("\$JS.API.CONSUMER.CREATE.$stream" "\$JS.API.CONSUMER.CREATE.$stream.>"
      "\$JS.API.CONSUMER.DURABLE.CREATE.$stream.>" "\$JS.API.CONSUMER.INFO.$stream.>"
      "\$JS.API.CONSUMER.NAMES.$stream" "\$JS.API.CONSUMER.LIST.$stream" "\$JS.API.CONSUMER.MSG.NEXT.$stream.>" "\$JS.ACK.$stream.>")
  done
  nats_list "${subjects[@]}"
}

# The accounts block of a nats-server configuration: one account holding the streams, a user per service
# with the permissions above, and admin. PASSWORD-FUNCTION prints a user's password as the configuration
# should hold it: the quoted password itself (write_broker_config), or a $VARIABLE the server reads from
# its environment (deploy/k8s/generate.sh, where the passwords are Kubernetes Secrets). One function for
# both, so bin/gantry up's broker and the Kubernetes one always grant the same.
nats_accounts_block() { # password-function account...
  local password_of=$1 account
  shift
  printf 'accounts {\n'
  for account in "$@"; do nats_account "$account" "$password_of"; done
  printf '}\n'
}

# The broker user of USER (a service's, or admin) in DEPLOYMENT: its own name in the default deployment
# gantry, <deployment>-<user> in any other, so that several deployments' accounts can live in one
# broker (user names are the broker's, not an account's).
nats_user_name() { # user [deployment]
  local deployment=${2:-${GANTRY_DEPLOYMENT:-gantry}}
  if [ "$deployment" = gantry ]; then printf '%s' "$1"; else printf '%s-%s' "$deployment" "$1"; fi
}

# One account of the accounts block: the deployment's streams and its users.
nats_account() { # account password-function
  local account=$1 password_of=$2 user name subjects
  printf '  %s {\n    jetstream: enabled\n    users: [\n' "$account"
  for user in "${GANTRY_NATS_USERS[@]}"; do
    name=$(nats_user_name "$user" "$account")
    printf '      { user: "%s", password: %s' "$name" "$("$password_of" "$name")"
    if [ "$user" = admin ]; then printf ' }\n'; continue; fi
    # shellcheck disable=SC2086
    subjects=$(nats_list ${GANTRY_NATS_PUBLISHES[$user]})
    printf ',\n        permissions: {\n'
    printf '          publish: { allow: [%s, %s] }\n' "$subjects" "$(nats_service_api "$user")"
    # replies (JetStream acks, API answers, fetched messages) come to the connection's inbox
    printf '          subscribe: { allow: ["_INBOX.>"] }\n        } }\n'
  done
  printf '    ]\n  }\n'
}

# A user's password from write_broker_config's credentials folder ($dir of the caller), quoted.
nats_password_from_file() { printf '"%s"' "$(cat "$dir/credentials/$1")"; }

# A user's password as an environment variable of the server: GANTRY_NATS_PASSWORD_<USER>.
nats_password_from_env() { printf '$GANTRY_NATS_PASSWORD_%s' "$(echo "$1" | tr 'a-z-' 'A-Z_')"; }

# Writes DIR/nats.conf (listen 127.0.0.1:PORT, JetStream store DIR/store, authentication and the
# permissions above) and the users' passwords, one file each in DIR/credentials/<user> (0600,
# 128 random bits, created once and kept, so restarts and running services keep working; delete a
# file and restart to rotate it). Rewritten on every start, so an older configuration is replaced.
# The tests (e2e-tests BrokerAuthIT) run a nats-server on this very file.
write_broker_config() { # dir port
  local dir="$1" port="$2" user name account accounts
  # the deployments this broker serves, each an account of its own: this one's, and any others that share it
  read -ra accounts <<<"${GANTRY_BROKER_DEPLOYMENTS:-${GANTRY_DEPLOYMENT:-gantry}}"
  mkdir -p "$dir/store" "$dir/credentials" && chmod 700 "$dir/credentials"
  for account in "${accounts[@]}"; do
    [[ "$account" =~ ^[A-Za-z0-9_-]+$ ]] || { infra_log "a deployment's name must be letters, digits, - or _: $account"; return 1; }
    for user in "${GANTRY_NATS_USERS[@]}"; do
      name=$(nats_user_name "$user" "$account")
      [ -s "$dir/credentials/$name" ] || (umask 077 && openssl rand -hex 16 >"$dir/credentials/$name") || return 1
      chmod 600 "$dir/credentials/$name"
    done
  done
  local conf
  conf=$(
    cat <<CONF
# written by bin/lib/infra.sh write_broker_config; rewritten on each start of the broker
listen: 127.0.0.1:$port
jetstream { store_dir: "$dir/store" }
# no user, no connection: every client names one of the users below
CONF
    nats_accounts_block nats_password_from_file "${accounts[@]}"
  )
  (umask 077 && printf '%s\n' "$conf" >"$dir/nats.conf.new") && mv "$dir/nats.conf.new" "$dir/nats.conf"
}

# Whether the broker on PORT asks for credentials (the auth_required of the INFO it greets with).
broker_requires_auth() { # port
  local info=""
  { exec 3<>"/dev/tcp/127.0.0.1/$1" && IFS= read -r -t 3 info <&3; exec 3<&-; } 2>/dev/null
  [[ "$info" == *'"auth_required":true'* ]]
}

# The broker of bin/gantry up's services: a nats-server of their own on loopback, port
# GANTRY_DEV_NATS_PORT (4223), its configuration, credentials and JetStream store under STATE/nats,
# authenticated (write_broker_config). The test suite uses the machine's broker (4222, ensure_nats),
# so a developer's Gantry and the tests never consume each other's events. Prints the URL. Not used
# when GANTRY_NATS_URL names a broker. One started by an older checkout without authentication is
# restarted on the new configuration; one already authenticated reloads it (SIGHUP).
ensure_dev_broker() { # state-dir
  local dir="$1/nats" port="${GANTRY_DEV_NATS_PORT:-4223}" bin pid=""
  write_broker_config "$dir" "$port" || return 1
  [ -f "$dir/nats.pid" ] && pid=$(cat "$dir/nats.pid") && kill -0 "$pid" 2>/dev/null || pid=""
  if port_open "$port"; then
    if broker_requires_auth "$port"; then
      [ -z "$pid" ] || kill -HUP "$pid"
    elif [ -n "$pid" ]; then
      infra_log "Gantry's NATS broker on 127.0.0.1:$port runs without authentication; restarting it"
      stop_dev_broker "$1" >/dev/null
      local i; for ((i = 0; i < 100; i++)); do port_open "$port" || break; sleep 0.1; done
    else
      infra_log "127.0.0.1:$port is taken by a broker without authentication that this checkout did not start; stop it or set GANTRY_DEV_NATS_PORT"
      return 1
    fi
  fi
  if ! port_open "$port"; then
    command -v nats-server >/dev/null || [ -x /usr/sbin/nats-server ] || apt_install nats-server
    bin=$(command -v nats-server || echo /usr/sbin/nats-server)
    infra_log "starting Gantry's own NATS broker on 127.0.0.1:$port (store $dir/store, credentials $dir/credentials)"
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

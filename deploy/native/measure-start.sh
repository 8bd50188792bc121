#!/usr/bin/env bash
# JVM-mode start time and memory of the four packaged services (docs/benchmarks.md, "Start time
# and memory"): each starts alone against its own database gantry_bench_<service> on port 2908x,
# with durable consumers of its own (<name>-bench, new messages only) so a running Gantry keeps its
# events. Reported per run: Quarkus's "started in", VmRSS 3 s after /q/health/ready, and the CPU
# time the JVM had used when it became ready (the figure that holds on a busy machine).
# With --aot, each service first runs once with -XX:AOTCacheOutput (JDK 25, JEP 514/515) and is
# then measured with -XX:AOTCache.
#   deploy/native/measure-start.sh [--aot] [--runs N]     (GANTRY_BENCH_SERVICES="quota-service ..." for some)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
java=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java
aot=false runs=3
while [ $# -gt 0 ]; do
  case "$1" in
    --aot) aot=true; shift ;;
    --runs) [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || { echo "measure-start: --runs needs a positive number" >&2; exit 2; }; runs=$2; shift 2 ;;
    *) echo "measure-start: unknown argument $1 (usage: measure-start.sh [--aot] [--runs N])" >&2; exit 2 ;;
  esac
done
work=${GANTRY_BENCH_DIR:-/tmp/gantry-bench}
mkdir -p "$work"
declare -A module=([admission-service]=admission-service [quota-service]=quota-service
  [node-inventory-service]=node-inventory-service [placement-service]=placement-service/app)
declare -A port=([admission-service]=29081 [quota-service]=29082 [node-inventory-service]=29083 [placement-service]=29084)

# gantry_bench_admission, _quota, _node_inventory, _placement: never the services' own or test databases
db_of() { local s=${1%-service}; echo "gantry_bench_${s//-/_}"; }

psql_admin() { if [ "$(id -u)" = 0 ]; then su postgres -c "psql -qAt -c \"$1\""; else psql -h 127.0.0.1 -U postgres -qAt -c "$1"; fi; }

# -D options that move every durable consumer of the service to <name>-bench, new messages only
consumer_options() {
  local props=$1 line key value
  while IFS= read -r line; do
    key=${line%%=*}; value=${line#*=}
    if [[ $key =~ ^%dev,prod\.mp\.messaging\.incoming\.([a-z-]+)\.consumer$ ]]; then
      echo "-Dmp.messaging.incoming.${BASH_REMATCH[1]}.consumer=$value-bench"
    elif [[ $key =~ ^%dev,prod\.(quarkus\.messaging\.nats\.streams\.[A-Z]+\.pull-consumers\.)([a-z-]+)(\.consumer-configuration\..*)$ ]]; then
      echo "-D${BASH_REMATCH[1]}${BASH_REMATCH[2]}-bench${BASH_REMATCH[3]}=$value"
      [[ ${BASH_REMATCH[3]} == .consumer-configuration.durable ]] &&
        echo "-D${BASH_REMATCH[1]}${BASH_REMATCH[2]}-bench.consumer-configuration.deliver-policy=new"
    fi
  done <"$props"
}

# start one service, wait until ready, report, stop it
measure() { # service extra-jvm-option...
  local service=$1; shift
  local dir="$root/${module[$service]}" log="$work/$service.log" pid started rss cpu i ready=false
  local -a options
  mapfile -t options < <(consumer_options "$dir/src/main/resources/application.properties")
  options+=("-Dgantry.jwt.public-key=$root/test-support/src/main/resources/jwt/public.pem" -Dquarkus.http.host=127.0.0.1)
  [ "$service" = admission-service ] && options+=("-Dgantry.jwt.private-key=$root/test-support/src/main/resources/jwt/private.pem")
  # the packaged services have no default database credentials: the local development role (or GANTRY_DB_USER/_PASSWORD)
  (cd "$work" && export GANTRY_DB_USER="${GANTRY_DB_USER:-gantry}" GANTRY_DB_PASSWORD="${GANTRY_DB_PASSWORD:-gantry}" &&
    exec "$java" "$@" -Dquarkus.http.port="${port[$service]}" -Dgantry.db.name="$(db_of "$service")" \
    -Dquarkus.log.console.json.enabled=false "${options[@]}" -jar "$dir/target/quarkus-app/quarkus-run.jar" >"$log" 2>&1) &
  pid=$!
  for ((i = 0; i < 3000; i++)); do
    curl -fsS -o /dev/null "http://127.0.0.1:${port[$service]}/q/health/ready" 2>/dev/null && { ready=true; break; }
    kill -0 "$pid" 2>/dev/null || { echo "$service exited; see $log" >&2; return 1; }
    sleep 0.1
  done
  $ready || { kill -TERM "$pid"; echo "$service not ready after 5 minutes; see $log" >&2; return 1; }
  # CPU seconds the JVM used until ready (user + system): unlike wall time, barely affected by other load
  cpu=$(awk -v hz="$(getconf CLK_TCK)" '{printf "%.1f", ($14 + $15) / hz}' "/proc/$pid/stat")
  # under load the HTTP server can answer before Quarkus logs its start line
  for ((i = 0; i < 600; i++)); do grep -q 'started in' "$log" && break; sleep 0.1; done
  sleep 3
  # the JVM is the subshell's exec'd process: same pid
  rss=$(awk '/^VmRSS/ {printf "%d", $2 / 1024}' "/proc/$pid/status")
  started=$(grep -o 'started in [0-9.]*s' "$log" | head -n 1 | grep -o '[0-9.]*')
  kill -TERM "$pid"; wait "$pid" 2>/dev/null || true
  echo "started=${started}s rss=${rss}MiB cpu=${cpu}s"
}

for service in ${GANTRY_BENCH_SERVICES:-admission-service quota-service node-inventory-service placement-service}; do
  db=$(db_of "$service")
  psql_admin "select 1 from pg_database where datname='$db'" | grep -q 1 || psql_admin "create database $db owner gantry"
  jvm=()
  if $aot; then
    cache="$work/$service.aot"
    rm -f "$cache"
    # training run: start until ready, stop; the JVM writes the cache as it exits
    measure "$service" -XX:AOTCacheOutput="$cache" >/dev/null
    [ -f "$cache" ] || { echo "$service: no AOT cache written; see $work/$service.log" >&2; exit 1; }
    jvm=(-XX:AOTCache="$cache")
  fi
  results=()
  for ((r = 0; r < runs; r++)); do results+=("$(measure "$service" "${jvm[@]}")"); done
  printf '%s %s\n' "$service" "${results[*]}"
done

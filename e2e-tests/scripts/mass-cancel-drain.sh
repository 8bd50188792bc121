#!/usr/bin/env bash
# The pipeline burst (PipelineBenchmark: 2,000 one-GPU jobs, 40 users), then how long placement takes to
# release all 2,000 after the benchmark's mass cancel (2,000 concurrent DELETEs as an admin): it polls
# placement's running_job every 0.5 s and prints the time from the first drop to zero.
# Against a running instance (GANTRY_UP_AGENTS=0 bin/gantry up, with GANTRY_DB_SUFFIX if it has one),
# from the repository root after `mvn -B -o -q -pl e2e-tests test-compile`. docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
suffix=${GANTRY_DB_SUFFIX:-}
placement_db=gantry_placement$suffix
pg_jar=$(ls "$HOME"/.m2/repository/org/postgresql/postgresql/*/postgresql-*.jar | sort -V | tail -1)
samples=$(mktemp)
since=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)
# this run's jobs only: a job left running by anything else (the seed's example job) would hold the drain open
running() { psql -h 127.0.0.1 -U postgres -d "$placement_db" -tAc "select count(*) from running_job where submitted_at >= '$since'"; }
( while true; do echo "$(date +%s.%N) $(running)"; sleep 0.5; done ) > "$samples" &
poller=$!
trap 'kill $poller 2>/dev/null || true; rm -f "$samples"' EXIT
"$JAVA_HOME/bin/java" -cp "e2e-tests/target/test-classes:$pg_jar" -Dgantry.root="$PWD" \
    -Dadmission-db="gantry_admission$suffix" -Dplacement-db="$placement_db" dev.gantry.e2e.PipelineBenchmark
for _ in $(seq 1 1200); do [ "$(running)" = 0 ] && break; sleep 0.5; done
echo "$(date +%s.%N) 0" >> "$samples"
kill $poller 2>/dev/null || true
python3 - "$samples" <<'PY'
import sys
rows = [(float(t), int(n)) for t, n in (l.split() for l in open(sys.argv[1]) if len(l.split()) == 2)]
peak = max(rows, key=lambda r: r[1])
start = next((t for t, n in rows if t > peak[0] and n < peak[1]), None)
end = next((t for t, n in rows if start is not None and t > start and n == 0), None)
if start is None or end is None:
    print("the cancellations did not drain within 10 minutes")
else:
    print(f"cancel drained {peak[1]} running jobs in {end - start:.1f} s ({peak[1] / (end - start):.0f} jobs/s)")
PY

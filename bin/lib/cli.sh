# shellcheck shell=bash
# bin/gantry submit | jobs | cancel | queues | nodes: thin clients of the services' REST APIs.
# Sourced by bin/gantry (needs its port_of and cmd_token). This part resolves service URLs and the
# bearer tokens; bin/lib/cli.py (python3, standard library only) does the HTTP and the tables.
# Why python: tables, JSON and problem+json parsing are a few lines there and start in ~50 ms,
# where a JVM client would take half a second per command; bash alone cannot read JSON safely.

# GANTRY_<SERVICE>_URL, else the loopback port bin/gantry up uses (GANTRY_<SERVICE>_PORT or the default).
cli_url() {
  local var
  var="GANTRY_$(echo "${1%-service}" | tr 'a-z-' 'A-Z_')_URL"
  echo "${!var:-http://127.0.0.1:$(port_of "$1")}"
}

# GANTRY_TOKEN if set; else one minted for $USER with the development key, as `bin/gantry token`
# does: teams from GANTRY_TEAMS (comma-separated), or an admin of team default when GANTRY_TEAMS is
# unset (whoever holds the development key can mint an admin token anyway; the team lets it submit).
cli_token() {
  if [ -n "${GANTRY_TOKEN:-}" ]; then
    printf '%s\n' "$GANTRY_TOKEN"
    return
  fi
  local args=() team teams=()
  if [ -n "${GANTRY_TEAMS:-}" ]; then
    IFS=',' read -ra teams <<<"$GANTRY_TEAMS"
    for team in "${teams[@]}"; do [ -z "$team" ] || args+=(--team "$team"); done
  fi
  [ ${#args[@]} -gt 0 ] || args=(--admin --team default)
  cmd_token "${USER:-$(id -un)}" "${args[@]}" --hours 1
}

# GANTRY_ADMIN_TOKEN if set; else an admin token minted for $USER with the development key (when
# there is one): what the commands that change quota, inventory or placement send.
cli_admin_token() {
  if [ -n "${GANTRY_ADMIN_TOKEN:-}" ]; then
    printf '%s\n' "$GANTRY_ADMIN_TOKEN"
    return
  fi
  local dir="${GANTRY_JWT_DIR:-$STATE/jwt}"
  [ -f "$dir/private.pem" ] || return 0
  cmd_token "${USER:-$(id -un)}" --admin --hours 1
}

# cli_run COMMAND [ARGS]: COMMAND is submit, jobs, cancel, queues or nodes.
cli_run() {
  command -v python3 >/dev/null || { printf 'gantry: %s needs python3 (apt-get install python3)\n' "$1" >&2; exit 1; }
  local token="" admin_token=""
  # every service wants a token (reads: the caller's); a --help needs none
  if [[ " $* " != *" --help "* && " $* " != *" -h "* ]]; then
    token=$(cli_token) || exit $?
    admin_token=$(cli_admin_token) || exit $?
  fi
  GANTRY_CLI_TOKEN="$token" \
    GANTRY_CLI_ADMIN_TOKEN="$admin_token" \
    GANTRY_ADMISSION_URL="$(cli_url admission-service)" \
    GANTRY_QUOTA_URL="$(cli_url quota-service)" \
    GANTRY_NODE_INVENTORY_URL="$(cli_url node-inventory-service)" \
    GANTRY_PLACEMENT_URL="$(cli_url placement-service)" \
    exec python3 "$ROOT/bin/lib/cli.py" "$@"
}

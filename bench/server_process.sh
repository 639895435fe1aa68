# shellcheck shell=bash
# Sourced by the benchmark scripts that run one deberta-server at a time
# ($SERVER, set before): its start on port 0, its port, its clean stop,
# and its stop when the script exits early.
#   start_server LOG ARGS...  starts $SERVER ARGS in the background, logging
#                             to LOG; waits (up to 3 minutes: loading and
#                             warm-up) until it serves; sets SERVER_PID and
#                             SERVER_PORT (gRPC). Fails, printing the log,
#                             if the server exits first.
#   stop_server               SIGTERM; fails unless it exits cleanly.
SERVER_PID=
# shellcheck disable=SC2034  # Read by the scripts that source this.
SERVER_PORT=

start_server() {
  local log=$1
  shift
  "$SERVER" "$@" --listen_address=127.0.0.1 --port=0 --metrics_port=0 >"$log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 1800); do
    grep -q "metrics on" "$log" && break
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$log" >&2; return 1; }
    sleep 0.1
  done
  # shellcheck disable=SC2034
  SERVER_PORT=$(sed -n 's/.*:\([0-9]*\), metrics on :.*/\1/p' "$log")
}

stop_server() {
  local rc=0
  kill -TERM "$SERVER_PID"
  wait "$SERVER_PID" || rc=$?
  SERVER_PID=
  [ "$rc" -eq 0 ] || { echo "deberta-server did not exit cleanly (status $rc)" >&2; return 1; }
}

stop_server_on_exit() {
  if [ -n "$SERVER_PID" ]; then kill -TERM "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" || true; fi
}
trap stop_server_on_exit EXIT

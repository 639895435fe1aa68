# Sourced by the benchmark scripts that start a deberta-server on port 0:
#   port=$(server_port LOG PID)
# waits (up to 3 minutes: loading and warm-up) until the server at PID has
# written its ports to LOG and prints the gRPC port; prints the log and
# fails if the server exits first.
server_port() {
  local log=$1 pid=$2
  for _ in $(seq 1800); do
    grep -q "metrics on" "$log" && break
    kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; return 1; }
    sleep 0.1
  done
  sed -n 's/.*:\([0-9]*\), metrics on :.*/\1/p' "$log"
}

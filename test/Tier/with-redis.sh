#!/usr/bin/env bash
# Start a redis-server on a free loopback port with a password, run the
# command with POOLC_TEST_REDIS=redis://:PASSWORD@127.0.0.1:PORT, stop the
# server. Fails (never skips) when redis-server is missing or does not start.
#   with-redis.sh COMMAND [ARGS...]
set -euo pipefail
command -v redis-server >/dev/null || { echo "with-redis: redis-server is not installed (tools/install-deps.sh installs it)"; exit 1; }
dir=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
pass="poolc-$RANDOM$RANDOM"
redis-server --port "$port" --bind 127.0.0.1 --requirepass "$pass" --save "" --appendonly no \
  --dir "$dir" --daemonize no --logfile "$dir/redis.log" &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 1 100); do
  if redis-cli -p "$port" -a "$pass" --no-auth-warning ping 2>/dev/null | grep -q PONG; then break; fi
  kill -0 $pid 2>/dev/null || { echo "with-redis: redis-server exited:"; cat "$dir/redis.log"; exit 1; }
  sleep 0.05
done
redis-cli -p "$port" -a "$pass" --no-auth-warning ping | grep -q PONG || { echo "with-redis: no PONG"; exit 1; }
# The server's pid, for tests that kill it mid-run.
POOLC_TEST_REDIS="redis://:$pass@127.0.0.1:$port" POOLC_TEST_REDIS_PID=$pid "$@"

#!/usr/bin/env bash
# Several replicas of the app behind HAProxy with sticky sessions and one Redis for the class poll:
# see scripts/replicas.py.
#   bash scripts/serve.sh --replicas 2 --port 8501
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v haproxy >/dev/null 2>&1; then
  echo "haproxy is not installed: apt-get install haproxy" >&2
  exit 1
fi
if ! command -v redis-server >/dev/null 2>&1 && [[ " $* " != *" --redis "* ]]; then
  echo "redis-server is not installed (the replicas' shared class poll): apt-get install redis-server," >&2
  echo "or name an existing one with --redis redis://host:port/db" >&2
  exit 1
fi
exec python3 scripts/replicas.py "$@"

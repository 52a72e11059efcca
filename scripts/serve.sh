#!/usr/bin/env bash
# Several replicas of the app behind HAProxy with sticky sessions: see scripts/replicas.py.
#   bash scripts/serve.sh --replicas 2 --port 8501
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v haproxy >/dev/null 2>&1; then
  echo "haproxy is not installed: apt-get install haproxy" >&2
  exit 1
fi
exec python3 scripts/replicas.py "$@"

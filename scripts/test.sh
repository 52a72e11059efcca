#!/usr/bin/env bash
# Set up everything the tests need (Debian's Chromium, CJK fonts, HAProxy and redis-server, npm and axe-core, the fortunes the shipped
# decoder's held-out perplexity is measured on, the pinned Python packages)
# and run the whole suite: lint and format checks, engine, app (AppTest) and real-browser tests.
#   bash scripts/test.sh            the whole suite (CI runs this)
#   bash scripts/test.sh --quick    a change's first check: lint and the engine's fast test files (tests/quick.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
QUICK=0
if [ "${1:-}" = "--quick" ]; then QUICK=1; shift; fi
if ! command -v chromium >/dev/null 2>&1 || ! command -v haproxy >/dev/null 2>&1 \
   || ! command -v redis-server >/dev/null 2>&1 || ! command -v g++ >/dev/null 2>&1 \
   || ! command -v npm >/dev/null 2>&1 \
   || ! fc-list 2>/dev/null | grep -qi "noto.*cjk" \
   || [ ! -f /usr/share/games/fortunes/fortunes ] || [ ! -f /usr/share/games/fortunes/tang300 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium fonts-noto-cjk haproxy redis-server g++ \
    fortunes fortunes-zh npm >/dev/null
fi
# axe-core, the accessibility engine the browser tests run in Chromium (package.json pins it)
[ -f node_modules/axe-core/axe.min.js ] || npm install --no-audit --no-fund --no-package-lock >/dev/null
python3 -m pip install -q -r requirements-dev.txt
python3 -m ruff check .
python3 -m ruff format --check .
# g++ is installed above, so FlexAttention must run: without a compiler its tests fail here instead of skipping
export ATTN_REQUIRE_FLEX=1
# ... and the compiled band kernel must build (attn_core/kernels/native): without it the sparse kernels fall back silently.
export ATTN_REQUIRE_NATIVE=1
if [ "$QUICK" = 1 ]; then
  # shellcheck disable=SC2046
  exec python3 -m pytest -q -p no:cacheprovider $(grep -v '^#' tests/quick.txt) "$@"
fi
python3 -m pytest -q -p no:cacheprovider tests "$@"

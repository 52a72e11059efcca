#!/usr/bin/env bash
# Set up everything the tests need (Debian's Chromium, CJK fonts, HAProxy and redis-server, the fortunes the shipped
# decoder's held-out perplexity is measured on, the pinned Python packages)
# and run the whole suite: lint and format checks, engine, app (AppTest) and real-browser tests.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1 || ! command -v haproxy >/dev/null 2>&1 \
   || ! command -v redis-server >/dev/null 2>&1 || ! command -v g++ >/dev/null 2>&1 \
   || ! fc-list 2>/dev/null | grep -qi "noto.*cjk" \
   || [ ! -f /usr/share/games/fortunes/fortunes ] || [ ! -f /usr/share/games/fortunes/tang300 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium fonts-noto-cjk haproxy redis-server g++ \
    fortunes fortunes-zh >/dev/null
fi
python3 -m pip install -q -r requirements-dev.txt
python3 -m ruff check .
python3 -m ruff format --check .
# g++ is installed above, so FlexAttention must run: without a compiler its tests fail here instead of skipping
export ATTN_REQUIRE_FLEX=1
# ... and the compiled band kernel must build (attn_core/kernels/native): without it the sparse kernels fall back silently.
export ATTN_REQUIRE_NATIVE=1
python3 -m pytest -q -p no:cacheprovider tests "$@"

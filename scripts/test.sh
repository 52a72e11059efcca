#!/usr/bin/env bash
# Set up everything the tests need (Debian's Chromium and its headless shell, CJK fonts, HAProxy and redis-server,
# npm and axe-core, the fortunes the shipped decoder's held-out perplexity is measured on, the pinned Python packages)
# and run the whole suite: lint and format checks, engine, app (AppTest) and real-browser tests.
#   bash scripts/test.sh            the whole suite (CI runs this)
#   bash scripts/test.sh --quick    a change's first check: lint and the engine's fast test files (tests/quick.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
QUICK=0
if [ "${1:-}" = "--quick" ]; then QUICK=1; shift; fi
# The pinned Python packages install in the background while Debian's do, without byte-compiling every module of
# every package (torch's thousands): a new environment took 35 s against 78 s. One first import of the suite's packages
# then compiles the modules they use, still beside apt-get, and keeps them: PYTHONDONTWRITEBYTECODE is unset, or every
# process the suite starts (its servers, their job workers, the command-line runs) would compile them again. The whole
# install: 59-69 s against 112-126 s one after the other (benchmarks/results/suite_time.txt).
# pip itself first: a recent pip picks the pinned packages' files from the package indexes in less than half the
# CPU of an old one (the resolution alone 7.9 s against 18.0 s with pip 23.2), and the install waits for pip.
unset PYTHONDONTWRITEBYTECODE
PIP_VERSION=26.3
{ python3 -m pip install -q --no-compile "pip==$PIP_VERSION" &&
  python3 -m pip install -q --no-compile -r requirements-dev.txt &&
  python3 -c "import torch, transformers, streamlit, plotly, pandas, playwright.sync_api"; } &
PIP=$!
trap '{ pkill -P "$PIP" || true; kill "$PIP" || true; } 2>/dev/null' EXIT  # an install that fails first leaves no pip running
# Debian packages only where a command or file is missing. npm is asked for only when the machine has none: a machine
# whose Node.js comes from elsewhere (NodeSource's nodejs bundles npm) cannot take Debian's npm beside it.
APT=()
command -v chromium >/dev/null 2>&1 || APT+=(chromium)
command -v chromium-headless-shell >/dev/null 2>&1 || APT+=(chromium-headless-shell)  # the browser tests' engine
fc-list 2>/dev/null | grep -i "noto.*cjk" >/dev/null || APT+=(fonts-noto-cjk)  # not -q: an early exit is a SIGPIPE, a failure under pipefail
command -v haproxy >/dev/null 2>&1 || APT+=(haproxy)
command -v redis-server >/dev/null 2>&1 || APT+=(redis-server)
command -v g++ >/dev/null 2>&1 || APT+=(g++)
[ -f /usr/share/games/fortunes/fortunes ] || APT+=(fortunes)
[ -f /usr/share/games/fortunes/tang300 ] || APT+=(fortunes-zh)
command -v npm >/dev/null 2>&1 || APT+=(npm)
# Without the packages they only recommend (88 of 122 on a fresh machine: a printer setup, avahi, samba's libraries):
# the install's apt-get took 19-20 s against 28-29 s and 7 s less CPU beside pip (suite_time.txt).
if [ "${#APT[@]}" -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${APT[@]}" >/dev/null
fi
# axe-core, the accessibility engine the browser tests run in Chromium (package.json pins it)
[ -f node_modules/axe-core/axe.min.js ] || npm install --no-audit --no-fund --no-package-lock >/dev/null
wait "$PIP"  # the Python packages, installed beside the system's (a failed install fails here)
trap - EXIT
python3 -m ruff check .
python3 -m ruff format --check .
# g++ is installed above, so FlexAttention must run: without a compiler its tests fail here instead of skipping
export ATTN_REQUIRE_FLEX=1
# ... and the compiled band kernel must build (attn_core/kernels/native): without it the sparse kernels fall back silently.
export ATTN_REQUIRE_NATIVE=1
# Two worker processes (pytest-xdist), each test file whole on one of them (its shared server and model loaded once):
# on two cores the suite takes half the time of one process, and four workers are no faster (suite_time.txt).
WORKERS=(-n "${ATTN_TEST_WORKERS:-2}" --dist loadfile)
if [ "$QUICK" = 1 ]; then
  # shellcheck disable=SC2046
  exec python3 -m pytest -q -p no:cacheprovider "${WORKERS[@]}" $(grep -v '^#' tests/quick.txt) "$@"
fi
python3 -m pytest -q -p no:cacheprovider "${WORKERS[@]}" tests "$@"

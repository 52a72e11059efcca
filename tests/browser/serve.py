"""Start ``streamlit run app.py`` on 127.0.0.1 and a free port; used by the browser tests and by
benchmarks/browser_latency.py."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

# Headless Debian Chromium on a machine with a closed network (no background connections).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
# Run in every document of the browser tests' contexts: CSS animations and transitions off (Streamlit's fades of a
# stale element, its spinners and skeletons, a toast's slide), so a page is drawn in its final state at once. A load
# cost the machine 9-15 % less CPU this way (benchmarks/results/page_open_cpu.txt); what the tests read (text, boxes,
# colours, the elements there) is what a learner sees once the page is still.
NO_ANIMATION = """document.addEventListener('DOMContentLoaded', () => {
  const style = document.createElement('style');
  style.textContent = '*, *::before, *::after { animation: none !important; transition: none !important; }';
  document.head.appendChild(style);
});"""
# How often the browser tests' waits in a page (Playwright's wait_for_function) look again, in ms. Playwright's
# default, "raf", looks at every animation frame: it asks the page for a frame 60 times a second for as long as the
# wait lasts, which cost a page at rest 0.24-0.29 s of CPU in 5 s against 0.01-0.14 s for a look every 100 ms, and
# slowed the runs the tests wait on (benchmarks/results/suite_time.txt). A look every 20 ms is as prompt as a frame.
POLL = 20
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(
    log=subprocess.DEVNULL, timeout: float = 60, extra: list[str] = (), warm: bool | str = True, root: str = ROOT
) -> tuple[subprocess.Popen, str]:
    """The server process and its URL, once /_stcore/health answers ok; ``extra``: more ``streamlit run`` options;
    ``warm=False``: without the start's warm-up of every model (``ATTN_EXPLORER_WARM=0``, about 3.7 s of CPU), for a
    short-lived server whose test opens no model page. A test's server never computes the lessons ahead (minutes of
    CPU the suite does not need; ``ATTN_EXPLORER_WARM=models``). A string is that variable's value (a benchmark's
    class server: "1"). ``root``: the checkout to serve (another worktree, for a benchmark's before and after)."""
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "app.py",
            "--server.address",
            "127.0.0.1",
            "--server.port",
            str(port),
            "--server.headless",
            "true",
            "--browser.gatherUsageStats",
            "false",
            *extra,
        ],
        cwd=root,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: ``stop_server`` ends it with everything it started
        env=dict(os.environ, ATTN_EXPLORER_WARM=warm if isinstance(warm, str) else "models" if warm else "0"),
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read().strip() == b"ok":
                return proc, url
        except OSError:
            time.sleep(0.3)
    stop_server(proc)
    raise RuntimeError(f"streamlit did not become healthy in {timeout:.0f} s")


def stop_server(proc: subprocess.Popen, timeout: float = 10) -> None:
    """End a server from ``start_server`` and every process it started (its process group: the Lab's
    workers, a sweep's child): asked to end (the server ends its children itself), then the whole
    group killed, a stopped process included."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # whatever is left of the group
    except ProcessLookupError:
        pass
    proc.wait(timeout)

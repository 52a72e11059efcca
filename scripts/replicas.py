"""Serve the app from several Streamlit processes behind HAProxy, with sticky sessions.

One Streamlit process runs every script on one core (its GIL). A school that needs more starts
replicas and puts a real load balancer in front. Streamlit needs session affinity: a session's
websocket and its ``/media`` downloads live in the process that made them. HAProxy gives each
browser a cookie naming its replica, passes websockets through, checks ``/_stcore/health`` every
2 s and sends a browser whose replica died to a live one (its settings are in the URL, so the page
comes back as it was).

    python scripts/replicas.py --replicas 2 --port 8501            # this machine: 2 replicas + HAProxy
    python scripts/replicas.py --backends 10.0.0.5:8501,10.0.0.6:8501 --port 80   # replicas elsewhere
    bash scripts/serve.sh --replicas 2                          # the same, from the shell

Ctrl-C (or SIGTERM) stops HAProxy and every replica it started. Needs Debian's ``haproxy``
(``apt-get install haproxy``).
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COOKIE = "AE_REPLICA"


def haproxy_config(bind: str, port: int, backends: list[str], *, stats_port: int | None = None) -> str:
    """A plain HAProxy configuration: sticky cookie, websockets, health checks, redispatch."""
    servers = "\n".join(
        f"    server r{i} {b} check inter 2s fall 2 rise 1 cookie r{i}" for i, b in enumerate(backends, 1)
    )
    stats = (
        f"\nfrontend stats\n    bind 127.0.0.1:{stats_port}\n    stats enable\n    stats uri /\n" if stats_port else ""
    )
    return f"""global
    maxconn 4096

defaults
    mode http
    option redispatch
    retries 2
    timeout connect 5s
    timeout client 1h
    timeout server 1h
    timeout tunnel 1h
    timeout http-request 30s

frontend attention_explorer
    bind {bind}:{port}
    default_backend replicas

backend replicas
    balance leastconn
    cookie {COOKIE} insert indirect nocache httponly
    option httpchk GET /_stcore/health
    http-check expect string ok
{servers}
{stats}"""


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def healthy(url: str, timeout: float) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read().strip() == b"ok":
                return True
        except OSError:
            time.sleep(0.3)
    return False


def warm(url: str) -> None:
    """Open one session so that the replica's first script run happens now: it imports the engine
    and starts loading the trained model in the background, before the first student arrives."""
    import asyncio

    import websockets
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    async def once() -> None:
        ws_url = url.replace("http", "ws", 1) + "/_stcore/stream"
        async with websockets.connect(ws_url, subprotocols=["streamlit"], max_size=2**27, open_timeout=60) as ws:
            msg = BackMsg()
            msg.rerun_script.page_name = ""
            await ws.send(msg.SerializeToString())
            while True:
                fm = ForwardMsg()
                fm.ParseFromString(await asyncio.wait_for(ws.recv(), 120))
                if fm.WhichOneof("type") == "script_finished":
                    return

    def in_own_loop() -> None:  # a thread of its own: the caller may already run an event loop
        try:
            asyncio.run(once())
        except Exception as err:  # noqa: BLE001 - a replica that cannot be warmed still serves
            print(f"warning: could not warm {url}: {err}", file=sys.stderr)

    thread = threading.Thread(target=in_own_loop)
    thread.start()
    thread.join()


@dataclass
class Cluster:
    """Replicas on this machine (or given backends) and HAProxy in front of them."""

    bind: str = "127.0.0.1"
    port: int = 8501
    replicas: int = 2
    backends: list[str] = field(default_factory=list)  # host:port of replicas started elsewhere
    streamlit_args: list[str] = field(default_factory=list)
    log_dir: str | None = None
    procs: list[subprocess.Popen] = field(default_factory=list)
    replica_urls: list[str] = field(default_factory=list)
    haproxy: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://{self.bind}:{self.port}"

    def _replica(self, port: int, secret: str, log_path: str) -> subprocess.Popen:
        cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.address", "127.0.0.1"]
        cmd += ["--server.port", str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false"]
        with open(log_path, "w") as log:  # the child keeps its own copy of the file
            return subprocess.Popen(
                [*cmd, *self.streamlit_args],
                cwd=ROOT,
                env=dict(os.environ, STREAMLIT_SERVER_COOKIE_SECRET=secret),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def start(self, *, timeout: float = 120) -> Cluster:
        exe = shutil.which("haproxy") or "/usr/sbin/haproxy"
        if not os.path.exists(exe):
            raise SystemExit("haproxy is not installed: apt-get install haproxy")
        self.log_dir = self.log_dir or tempfile.mkdtemp(prefix="attention-explorer-")
        backends = list(self.backends)
        if not backends:
            secret = secrets.token_hex(16)  # one cookie secret for all replicas: a browser that moves stays valid
            for i in range(self.replicas):
                port = free_port()
                self.procs.append(self._replica(port, secret, os.path.join(self.log_dir, f"replica{i + 1}.log")))
                backends.append(f"127.0.0.1:{port}")
            self.replica_urls = [f"http://{b}" for b in backends]
            for url in self.replica_urls:
                if not healthy(url, timeout) or any(p.poll() is not None for p in self.procs):
                    self.stop()
                    raise SystemExit(f"a replica at {url} did not become healthy; see {self.log_dir}")
                warm(url)
        cfg = os.path.join(self.log_dir, "haproxy.cfg")
        with open(cfg, "w") as f:
            f.write(haproxy_config(self.bind, self.port, backends))
        check = subprocess.run([exe, "-c", "-q", "-f", cfg], capture_output=True, text=True, check=False)
        if check.returncode != 0:
            self.stop()
            raise SystemExit(f"haproxy rejected its configuration: {check.stderr.strip()}")
        with open(os.path.join(self.log_dir, "haproxy.log"), "w") as log:
            self.haproxy = subprocess.Popen(
                [exe, "-db", "-f", cfg], stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        if not healthy(self.url, timeout):
            self.stop()
            raise SystemExit(f"HAProxy at {self.url} did not answer; see {self.log_dir}")
        return self

    def stop(self) -> None:
        for p in ([self.haproxy] if self.haproxy else []) + self.procs:
            if p.poll() is None:
                p.terminate()
        for p in ([self.haproxy] if self.haproxy else []) + self.procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--replicas", type=int, default=2, help="Streamlit processes to start here (default 2)")
    ap.add_argument("--backends", default="", help="host:port,... of replicas started elsewhere (no local ones)")
    ap.add_argument("--port", type=int, default=8501, help="HAProxy's port (default 8501)")
    ap.add_argument("--bind", default="127.0.0.1", help="HAProxy's address (0.0.0.0 to serve a room)")
    ap.add_argument("streamlit_args", nargs="*", help="after --: more `streamlit run` options for each replica")
    args = ap.parse_args()
    if args.replicas < 1:
        ap.error("--replicas must be at least 1")
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    cluster = Cluster(
        bind=args.bind, port=args.port, replicas=args.replicas, backends=backends, streamlit_args=args.streamlit_args
    )

    def stop(*_):
        cluster.stop()
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    cluster.start()
    print(
        f"Attention Explorer at {cluster.url} ({len(cluster.procs) or len(backends)} replicas behind HAProxy; "
        f"logs in {cluster.log_dir}). Ctrl-C stops everything.",
        flush=True,
    )
    reported: set[int] = set()
    while cluster.haproxy.poll() is None:
        for i, p in enumerate(cluster.procs):
            if p.poll() is not None and i not in reported:
                reported.add(i)
                print(
                    f"replica {i + 1} exited (code {p.returncode}); HAProxy sends its users to the others.",
                    file=sys.stderr,
                )
        time.sleep(2)
    print("HAProxy exited; stopping.", file=sys.stderr)
    stop()


if __name__ == "__main__":
    main()

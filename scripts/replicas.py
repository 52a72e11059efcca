"""Serve the app from several Streamlit processes behind HAProxy, with sticky sessions.

One Streamlit process runs every script on one core (its GIL). A school that needs more starts
replicas and puts a real load balancer in front. Streamlit needs session affinity: a session's
websocket and its ``/media`` downloads live in the process that made them. HAProxy gives each
browser a cookie naming its replica, passes websockets through, checks ``/_stcore/health`` every
2 s and sends a browser whose replica died to a live one (its settings are in the URL, so the page
comes back as it was).

The class poll (predict-then-reveal's answers under ``?lesson=``) must be one for the whole class,
whichever replica a browser is on: the replicas share one Redis (``ATTN_EXPLORER_REDIS``). With
local replicas a ``redis-server`` is started on 127.0.0.1 (a free port, no persistence: the lessons
live only as long as that server; it is started again if it exits, with every lesson's count
empty; a replica's restart loses nothing), unless ``--redis URL`` names an existing one. Replicas
on other machines (``--backends``) need ``--redis URL``, the one their ``ATTN_EXPLORER_REDIS`` names.

    python scripts/replicas.py --replicas 2 --port 8501            # this machine: 2 replicas + HAProxy + Redis
    python scripts/replicas.py --replicas 2 --redis redis://10.0.0.7:6379/0   # an existing Redis
    python scripts/replicas.py --backends 10.0.0.5:8501,10.0.0.6:8501 --redis redis://10.0.0.7:6379/0 --port 80
    bash scripts/serve.sh --replicas 2                          # the same, from the shell

Ctrl-C (or SIGTERM) stops HAProxy, every replica and the Redis it started. Needs Debian's ``haproxy``
and ``redis-server`` (``apt-get install haproxy redis-server``).
"""

from __future__ import annotations

import argparse
import errno
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
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


def check_listen(bind: str, port: int) -> None:
    """Fail at once, naming the address or the port, when HAProxy could not listen on them."""
    if not 1 <= port <= 65535:
        raise SystemExit(f"--port {port} is not a port: use 1-65535")
    try:
        infos = socket.getaddrinfo(bind, port, type=socket.SOCK_STREAM)
    except socket.gaierror as err:
        raise SystemExit(f"--bind {bind}: not an address of this machine ({err.strerror})") from None
    family, _, _, _, address = infos[0]
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as a server would; a LISTEN socket still blocks it
        try:
            s.bind(address)
        except OSError as err:
            if err.errno == errno.EADDRINUSE:
                raise SystemExit(
                    f"port {port} on {bind} is already in use: stop what uses it or choose another --port"
                )
            if err.errno == errno.EADDRNOTAVAIL:
                raise SystemExit(f"--bind {bind} is not an address of this machine: use 127.0.0.1 or 0.0.0.0")
            if err.errno == errno.EACCES:
                raise SystemExit(f"port {port} needs more privileges on this machine: choose a port above 1023")
            raise SystemExit(f"cannot listen on {bind}:{port}: {err.strerror}") from None


@dataclass
class RedisServer:
    """A local ``redis-server`` for the class poll: 127.0.0.1, no persistence, bounded memory."""

    port: int = 0
    log_path: str = os.devnull
    proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 20) -> RedisServer:
        exe = shutil.which("redis-server") or "/usr/bin/redis-server"
        if not os.path.exists(exe):
            raise SystemExit("redis-server is not installed: apt-get install redis-server")
        self.port = self.port or free_port()
        cmd = [exe, "--bind", "127.0.0.1", "--port", str(self.port), "--save", "", "--appendonly", "no"]
        cmd += ["--maxmemory", "256mb", "--maxmemory-policy", "noeviction", "--daemonize", "no"]
        with open(self.log_path, "a") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"redis-server exited at start (code {self.proc.returncode}); see {self.log_path}")
            if redis_ping(self.url):
                return self
            time.sleep(0.1)
        self.stop()
        raise SystemExit(f"redis-server on port {self.port} did not answer; see {self.log_path}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def redis_ping(url: str, timeout: float = 1.0) -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout).ping())
    except (redis.RedisError, OSError, ValueError):
        return False


def healthy(url: str, timeout: float, proc: subprocess.Popen | None = None) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc is not None and proc.poll() is not None:
            return False
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read().strip() == b"ok":
                return True
        except OSError:
            time.sleep(0.3)
    return False


def warm(url: str) -> None:
    """Open one session so that the replica's first script run happens now: it imports the engine, warms every
    model and computes what the lessons ask for in the background (``explorer.classroom.ahead``), before the first
    student
    arrives. The tab is the one the server visits its lessons with (``explorer.classroom.ahead.visit``)."""
    if ROOT not in sys.path:  # run as a script: its own folder is on the path, not the app's
        sys.path.insert(0, ROOT)
    from explorer.classroom.ahead.visit import visit

    done = visit(url, "", limit_s=120)
    if done.error is not None:  # a replica that cannot be warmed still serves
        print(f"warning: could not warm {url}: {done.error}", file=sys.stderr)


@dataclass
class Cluster:
    """Replicas on this machine (or given backends) and HAProxy in front of them."""

    bind: str = "127.0.0.1"
    port: int = 8501
    replicas: int = 2
    backends: list[str] = field(default_factory=list)  # host:port of replicas started elsewhere
    redis_url: str | None = None  # the class poll's store; None: start a local redis-server
    streamlit_args: list[str] = field(default_factory=list)
    log_dir: str | None = None
    procs: list[subprocess.Popen] = field(default_factory=list)
    replica_urls: list[str] = field(default_factory=list)
    haproxy: subprocess.Popen | None = None
    redis: RedisServer | None = None
    secret: str = ""

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
                env=dict(os.environ, STREAMLIT_SERVER_COOKIE_SECRET=secret, ATTN_EXPLORER_REDIS=self.redis_url),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def start(self, *, timeout: float = 120) -> Cluster:
        exe = shutil.which("haproxy") or "/usr/sbin/haproxy"
        if not os.path.exists(exe):
            raise SystemExit("haproxy is not installed: apt-get install haproxy")
        check_listen(self.bind, self.port)  # before anything starts: a port in use is said at once
        self.log_dir = self.log_dir or tempfile.mkdtemp(prefix="attention-explorer-")
        backends = list(self.backends)
        if backends and not self.redis_url:
            raise SystemExit(
                "--backends needs --redis URL: the replicas elsewhere must share one Redis for the class poll "
                "(start each with ATTN_EXPLORER_REDIS=URL)"
            )
        if self.redis_url:
            if not redis_ping(self.redis_url):
                raise SystemExit(f"cannot reach Redis at {self.redis_url}: check --redis (redis://host:port/db)")
        elif not backends:
            self.redis = RedisServer(log_path=os.path.join(self.log_dir, "redis.log")).start()
            self.redis_url = self.redis.url
        if not backends:
            self.secret = secrets.token_hex(16)  # one cookie secret for all replicas: a browser that moves stays valid
            for i in range(self.replicas):
                port = free_port()
                self.procs.append(self._replica(port, self.secret, os.path.join(self.log_dir, f"replica{i + 1}.log")))
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
        if not healthy(self.url, timeout, self.haproxy):
            self.stop()
            with open(os.path.join(self.log_dir, "haproxy.log")) as f:
                said = f.read().strip().splitlines()[-1:] or ["no output"]
            raise SystemExit(f"HAProxy at {self.url} did not answer ({said[0]}); see {self.log_dir}")
        return self

    def restart(self, i: int, *, timeout: float = 120) -> None:
        """Start replica ``i`` (0-based) again on its port, after it died or was stopped."""
        old = self.procs[i]
        if old.poll() is None:
            old.terminate()
            old.wait(10)
        url = self.replica_urls[i]
        port = int(url.rsplit(":", 1)[1])
        self.procs[i] = self._replica(port, self.secret, os.path.join(self.log_dir, f"replica{i + 1}-restarted.log"))
        if not healthy(url, timeout, self.procs[i]):
            raise SystemExit(f"replica {i + 1} did not come back at {url}; see {self.log_dir}")
        warm(url)

    def stop(self) -> None:
        for p in ([self.haproxy] if self.haproxy else []) + self.procs:
            if p.poll() is None:
                p.terminate()
        for p in ([self.haproxy] if self.haproxy else []) + self.procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        if self.redis is not None:
            self.redis.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--replicas", type=int, default=2, help="Streamlit processes to start here (default 2)")
    ap.add_argument("--backends", default="", help="host:port,... of replicas started elsewhere (no local ones)")
    ap.add_argument(
        "--redis", default="", help="redis://host:port/db for the class poll (default: start a local redis-server)"
    )
    ap.add_argument("--port", type=int, default=8501, help="HAProxy's port (default 8501)")
    ap.add_argument("--bind", default="127.0.0.1", help="HAProxy's address (0.0.0.0 to serve a room)")
    ap.add_argument("streamlit_args", nargs="*", help="after --: more `streamlit run` options for each replica")
    args = ap.parse_args()
    if args.replicas < 1:
        ap.error("--replicas must be at least 1")
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    if args.redis and not args.redis.startswith(("redis://", "rediss://", "unix://")):
        ap.error(f"--redis {args.redis}: not a redis:// URL (e.g. redis://127.0.0.1:6379/0)")
    if backends and not args.redis:
        ap.error("--backends needs --redis URL: replicas on other machines must share one Redis for the class poll")
    cluster = Cluster(
        bind=args.bind,
        port=args.port,
        replicas=args.replicas,
        backends=backends,
        redis_url=args.redis or None,
        streamlit_args=args.streamlit_args,
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
    where = "a local redis-server, no persistence" if cluster.redis else "an existing Redis"
    print(
        f"Class poll: {cluster.redis_url} ({where}); a replica's restart loses no answer"
        + ("; if this Redis exits it is started again, with every lesson's count empty." if cluster.redis else "."),
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
        if cluster.redis is not None and cluster.redis.proc.poll() is not None:
            print(
                "the class poll's redis-server exited; starting it again (lesson counts start empty)", file=sys.stderr
            )
            cluster.redis.start()
        time.sleep(2)
    print("HAProxy exited; stopping.", file=sys.stderr)
    stop()


if __name__ == "__main__":
    main()

"""Workers forked from a fork server (``explorer.jobs.forkserver``) instead of started afresh: a heavy
worker's start cost 4.3-4.7 s of CPU in imports (torch, transformers' model classes), a Lab worker's
1.6 s; a fork costs a few milliseconds, and the workers share the imported code's memory.

``Forks.start`` gives a ``Forked``, which a job uses as it uses a ``subprocess.Popen`` (``pid``,
``stdin``, ``stdout``, ``poll``, ``wait``, ``returncode``, ``send_signal``, ``terminate``, ``kill``).
The fork server is started with the first worker and serves the environment of that moment: its
imports may have read any variable. A worker asked for under another environment gets a new fork
server once none of the old one's workers lives (before that, it is started afresh), as does one
asked for after the fork server has ended; a command that is not ``python -m`` with this interpreter
is always started afresh (the caller's part: ``start`` answers None).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

START_S = 120.0  # the longest wait for the fork server's imports (seconds on a loaded machine) and a fork
# Variables not compared (a child sees every variable, as it is at its start): set for each child (the first two);
# naming the moment (pytest's running test); set by a library's import in the asking process, to the value that
# library's import in the fork server takes too (torch's compiler cache, Streamlit's plotting backend, scikit-learn's
# and joblib's OpenMP settings); and the app's own settings (``ATTN_EXPLORER_*``: the server reads them; of the engine
# a worker runs, only the model lookup reads one, ATTN_EXPLORER_MODELS, when it looks, never at import). Any other
# that differs makes a new fork server, once the old one's workers have ended.
OWN = (
    "ATTN_PARENT_PID",
    "PYTHONUNBUFFERED",
    "PYTEST_CURRENT_TEST",
    "TORCHINDUCTOR_CACHE_DIR",
    "MPLBACKEND",
    "KMP_DUPLICATE_LIB_OK",
    "KMP_INIT_AT_FORK",
)
APP = "ATTN_EXPLORER_"


class Forked:
    """A forked worker, seen as a ``subprocess.Popen``; its end is told by the fork server, its parent."""

    def __init__(self, server: Server, pid: int, argv: list[str], stdin, stdout) -> None:
        self.server, self.pid, self.args = server, pid, argv
        self.stdin, self.stdout, self.stderr = stdin, stdout, None
        self.returncode: int | None = None
        self.ended = threading.Event()

    def end(self, code: int) -> None:
        self.returncode = code
        self.ended.set()

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self.ended.wait(timeout):
            raise subprocess.TimeoutExpired(self.args, timeout)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            self.server.signal(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def forkable(cmd: list[str]) -> bool:
    """``python -m module ...`` with this interpreter: what a fork server can run."""
    return len(cmd) >= 3 and cmd[0] == sys.executable and cmd[1] == "-m"


def plain_env(env: dict) -> dict:
    return {k: v for k, v in env.items() if k not in OWN and not k.startswith(APP)}


@dataclass
class _Start:
    """A start asked of the fork server: the worker's argv and this side's pipe ends, until it is answered."""

    argv: list[str]
    stdin: object
    stdout: object
    answered: threading.Event = field(default_factory=threading.Event)
    forked: Forked | None = None  # once started


class Server:
    """One fork server: its process, its socket, the starts waiting for an answer and the workers alive."""

    def __init__(self, launch: Callable[[list[str], int], subprocess.Popen], env: dict) -> None:
        self.env, self.lock, self.ready = env, threading.Lock(), threading.Event()
        self.ids = 0
        self.waiting: dict[int, _Start] = {}  # the starts asked for and not yet answered, by id
        self.procs: dict[int, Forked] = {}  # the live workers by pid
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            command = [sys.executable, "-m", "explorer.jobs.forkserver", str(theirs.fileno())]
            self.process = launch(command, theirs.fileno())
        except OSError:
            ours.close()
            raise
        finally:
            theirs.close()
        self.sock: socket.socket | None = ours
        threading.Thread(target=self._read, name="fork-server", daemon=True).start()

    @property
    def live(self) -> bool:
        return self.sock is not None

    def start(self, cmd: list[str], env: dict, own_group: bool, stdin: bool = True) -> Forked | None:
        """``cmd`` forked; its input a pipe, or nothing (``/dev/null``) without ``stdin``."""
        if not self.ready.wait(START_S):
            self.close()  # it never came up: none waits for it again
        if self.sock is None:
            return None
        in_r, in_w = os.pipe() if stdin else (os.open(os.devnull, os.O_RDONLY), None)
        out_r, out_w = os.pipe()
        writer = open(in_w, "w", encoding="utf-8") if stdin else None  # noqa: SIM115
        box = _Start(cmd, writer, open(out_r, encoding="utf-8"))  # noqa: SIM115
        with self.lock:
            self.ids += 1
            key = self.ids
            self.waiting[key] = box
            request = {"op": "start", "id": key, "argv": cmd[2:], "env": env, "own_group": own_group}
            try:
                socket.send_fds(self.sock, [json.dumps(request).encode()], [in_r, out_w])
            except (OSError, AttributeError):  # it has ended (no socket any more)
                self.waiting.pop(key, None)
                box.answered.set()
        os.close(in_r)
        os.close(out_w)
        if not box.answered.wait(START_S) or box.forked is None:
            if box.stdin is not None:
                box.stdin.close()
            box.stdout.close()
            return None
        return box.forked

    def signal(self, pid: int, sig: int) -> None:
        with self.lock:
            if self.sock is not None and pid in self.procs:
                try:
                    self.sock.send(json.dumps({"op": "signal", "pid": pid, "sig": int(sig)}).encode())
                except OSError:
                    pass

    def close(self) -> None:
        """End the fork server (its workers with it): the reader sees the socket's end and lets every start go."""
        with self.lock:
            sock = self.sock
        try:
            if sock is not None:
                sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        if self.process.poll() is None:
            self.process.kill()

    def _read(self) -> None:
        """The fork server's answers: ready, a worker started, a worker ended; at its end, every worker ended."""
        sock = self.sock
        while True:
            try:
                message = sock.recv(1 << 16)
            except OSError:
                message = b""
            if not message:
                break
            self._answer(json.loads(message))
        with self.lock:
            self.sock = None
            waiting, procs = list(self.waiting.values()), list(self.procs.values())
            self.waiting.clear()
            self.procs.clear()
        self.ready.set()
        for box in waiting:
            box.answered.set()
        for proc in procs:  # its children die with it (their parent-death signal)
            proc.end(-signal.SIGKILL)
        sock.close()

    def _answer(self, item: dict) -> None:
        op = item.get("op")
        if op == "ready":
            self.ready.set()
        elif op == "started":
            with self.lock:
                box = self.waiting.pop(item["id"], None)
                if box is not None:
                    box.forked = Forked(self, item["pid"], box.argv, box.stdin, box.stdout)
                    self.procs[item["pid"]] = box.forked
            if box is not None:
                box.answered.set()
        elif op == "exit":
            with self.lock:
                proc = self.procs.pop(item["pid"], None)
            if proc is not None:
                proc.end(int(item["code"]))


class Forks:
    """This process's fork server, started when first needed, and again for another environment once the
    last one's workers have all ended (see the module's docstring)."""

    def __init__(self, launch: Callable[[list[str], int], subprocess.Popen]) -> None:
        self.launch = launch  # starts the fork server's command, passing it the socket's fd
        self.lock = threading.Lock()
        self.server: Server | None = None

    def start(self, cmd: list[str], env: dict, own_group: bool, stdin: bool = True) -> Forked | None:
        """``cmd`` forked with ``env``, or None where it cannot be (the caller starts it afresh)."""
        if not forkable(cmd):
            return None
        server = self._serving(plain_env(env))
        return server.start(cmd, env, own_group, stdin) if server is not None else None

    def _serving(self, env: dict) -> Server | None:
        """The fork server for ``env``: the running one, or a new one where none runs or none of the
        running one's workers lives (None: another environment's workers still live)."""
        with self.lock:
            old = self.server
            if old is not None and old.live and old.env == env:
                return old
            if old is not None and old.live and old.procs:
                return None
            if old is not None:
                old.close()
            try:
                self.server = Server(self.launch, env)
            except OSError:
                self.server = None
            return self.server

"""Workers forked from a fork server (``explorer.jobs.forkserver``) instead of started afresh: a heavy
worker's start cost 4.3-4.7 s of CPU in imports (torch, transformers' model classes), a Lab worker's
1.6 s; a fork costs a few milliseconds, and the workers share the imported code's memory.

``Forks.start`` gives a ``Forked``, which a job uses as it uses a ``subprocess.Popen`` (``pid``,
``stdin``, ``stdout``, ``poll``, ``wait``, ``returncode``, ``send_signal``, ``terminate``, ``kill``).
The fork server is started with the first worker and serves this process's environment as it was
then: a command asked for under another environment (a variable the engine reads at import time may
differ) or another interpreter is not forked, and neither is one when the fork server cannot be
reached; the caller then starts the process afresh.
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

START_S = 120.0  # the longest wait for the fork server's imports (seconds on a loaded machine) and a fork
# Variables not compared: set for each child (the first two), or naming the moment, not configuring anything
# (pytest names the test that runs; the child sees it, as every variable, in its own environment).
OWN = ("ATTN_PARENT_PID", "PYTHONUNBUFFERED", "PYTEST_CURRENT_TEST")


class Forked:
    """A forked worker, seen as a ``subprocess.Popen``; its end is told by the fork server, its parent."""

    def __init__(self, forks: Forks, pid: int, argv: list[str], stdin, stdout) -> None:
        self.forks, self.pid, self.args = forks, pid, argv
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
            self.forks.signal(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def forkable(cmd: list[str]) -> bool:
    """``python -m module ...`` with this interpreter: what a fork server can run."""
    return len(cmd) >= 3 and cmd[0] == sys.executable and cmd[1] == "-m"


def plain_env(env: dict) -> dict:
    return {k: v for k, v in env.items() if k not in OWN}


class Forks:
    """This process's fork server (started when first needed) and the workers forked from it."""

    def __init__(self, launch: Callable[[list[str], int], subprocess.Popen]) -> None:
        self.launch = launch  # starts the fork server's command, passing it the socket's fd
        self.lock = threading.Lock()
        self.sock: socket.socket | None = None
        self.server: subprocess.Popen | None = None
        self.env: dict = {}
        self.ids = 0
        self.waiting: dict[int, tuple] = {}  # a start's id: its argv, pipes, event and the Forked (once started)
        self.procs: dict[int, Forked] = {}  # the live workers by pid
        self.ready = threading.Event()

    def start(self, cmd: list[str], env: dict, own_group: bool) -> Forked | None:
        """``cmd`` forked with ``env``, or None where it cannot be (the caller starts it afresh)."""
        if not forkable(cmd) or not self._serving(plain_env(env)):
            return None
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        stdin = open(in_w, "w", encoding="utf-8", closefd=True)  # noqa: SIM115 (the worker's, closed with it)
        stdout = open(out_r, encoding="utf-8", closefd=True)  # noqa: SIM115
        done = threading.Event()
        with self.lock:
            self.ids += 1
            key = self.ids
            box = [cmd, stdin, stdout, done, None]
            self.waiting[key] = box
            request = {"op": "start", "id": key, "argv": cmd[2:], "env": env, "own_group": own_group}
            try:
                socket.send_fds(self.sock, [json.dumps(request).encode()], [in_r, out_w])
            except (OSError, AttributeError):  # the fork server has ended (no socket any more)
                self.waiting.pop(key, None)
                done.set()
        os.close(in_r)
        os.close(out_w)
        if not done.wait(START_S) or box[4] is None:
            stdin.close()
            stdout.close()
            return None
        return box[4]

    def signal(self, pid: int, sig: int) -> None:
        with self.lock:
            if self.sock is not None and pid in self.procs:
                try:
                    self.sock.send(json.dumps({"op": "signal", "pid": pid, "sig": int(sig)}).encode())
                except OSError:
                    pass

    def _serving(self, env: dict) -> bool:
        """The fork server is up for ``env`` (started now if none was)."""
        with self.lock:
            if self.sock is None and self.server is None:
                ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                try:
                    command = [sys.executable, "-m", "explorer.jobs.forkserver", str(theirs.fileno())]
                    self.server = self.launch(command, theirs.fileno())
                except OSError:
                    ours.close()
                    return False
                finally:
                    theirs.close()
                self.sock, self.env = ours, env
                threading.Thread(target=self._read, name="fork-server", daemon=True).start()
            same = self.env == env and self.sock is not None
        return same and self.ready.wait(START_S) and self.sock is not None

    def _read(self) -> None:
        """The fork server's answers: a worker started, a worker ended; at its end, every worker ended."""
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
            self.sock = None  # no new start is sent; the server stays set, so none is started again
            waiting, procs = list(self.waiting.values()), list(self.procs.values())
            self.waiting.clear()
            self.procs.clear()
        self.ready.set()
        for box in waiting:
            box[3].set()
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
                    box[4] = Forked(self, item["pid"], box[0], box[1], box[2])
                    self.procs[item["pid"]] = box[4]
            if box is not None:
                box[3].set()
        elif op == "exit":
            with self.lock:
                proc = self.procs.pop(item["pid"], None)
            if proc is not None:
                proc.end(int(item["code"]))

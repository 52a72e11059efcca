"""The compiled kernels are built before any learner asks for them: at the server's start, in a thread of
their own (``explorer.server.prepare``), and at image build time (the Dockerfile runs ``native.library()``,
the function the server's build runs)."""

import os
import shlex
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from attn_core.kernels import native

ROOT = Path(__file__).resolve().parents[2]
THREAD = "build-native-kernels"


def join_builds() -> None:
    for thread in threading.enumerate():
        if thread.name == THREAD:
            thread.join(120)


def test_the_server_builds_the_kernels_at_its_start_in_the_background(monkeypatch):
    from explorer import server
    from explorer.model import real

    join_builds()  # an earlier start's build in this process, if any, is over
    built = []

    def build():
        built.append(threading.current_thread().name)
        return "the library"

    monkeypatch.setattr(native, "_build", build)
    monkeypatch.setattr(native, "_lib", None)  # a process that has not built them yet
    monkeypatch.setattr(native, "_why", None)
    monkeypatch.setattr(server, "_prepared", False)
    monkeypatch.setattr(server, "freeze_heap", lambda: None)
    monkeypatch.setattr(real, "start_loading", lambda *name, **how: None)
    server.prepare()
    join_builds()
    assert built == [THREAD]  # built once, by the start, outside the caller's thread, with no kernel asked for
    assert native.library() == "the library" and built == [THREAD]  # a request then finds it built


def test_the_image_builds_the_kernels_as_the_user_that_serves(tmp_path):
    lines = (ROOT / "Dockerfile").read_text().splitlines()
    (at,) = [i for i, line in enumerate(lines) if line.startswith("RUN ") and "native.library()" in line]
    users = [i for i, line in enumerate(lines) if line.startswith("USER ")]
    assert users and users[-1] < at  # into the cache of the user the server runs as
    if not (os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")):
        pytest.skip("no C++ compiler here")
    command = lines[at].removeprefix("RUN ").replace("python ", f"{shlex.quote(sys.executable)} ", 1)
    env = {**os.environ, "ATTN_NATIVE_CACHE": str(tmp_path)}  # a fresh cache: the step itself builds
    done = subprocess.run(
        ["sh", "-c", command], check=False, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert len(list(tmp_path.glob("band-*.so"))) == 1

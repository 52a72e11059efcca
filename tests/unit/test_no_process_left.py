"""The suite's own check (tests/conftest.py): a session that leaves a process running fails, naming
it, and the process is ended; a session that leaves none passes."""

from __future__ import annotations

import os
import subprocess
import sys

import psutil

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

LEAKS = """
import subprocess

def test_leaks_a_child():
    child = subprocess.Popen(["sleep", "1000"])
    with open({pidfile!r}, "w") as f:
        f.write(str(child.pid))
"""

ENDS = """
import subprocess

def test_ends_its_child():
    child = subprocess.Popen(["sleep", "1000"])
    child.kill()
    child.wait()
"""


def session(tmp_path, body: str) -> subprocess.CompletedProcess:
    """A pytest session over one test file, with the suite's conftest as a plugin."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_one.py").write_text(body)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest"]
    cmd += ["-c", str(tmp_path / "pytest.ini"), "--rootdir", str(tmp_path), str(tmp_path / "test_one.py")]
    env = dict(os.environ, PYTHONPATH=ROOT, ATTN_TEST_LEFT_GRACE_S="2")  # the planted child never ends: 2 s tell
    return subprocess.run(cmd, check=False, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


def test_a_session_that_leaves_a_child_running_fails_and_names_it(tmp_path):
    pidfile = tmp_path / "child.pid"
    out = session(tmp_path, LEAKS.format(pidfile=str(pidfile)))
    pid = int(pidfile.read_text())
    try:
        assert out.returncode != 0, out.stdout
        assert "1 passed, 1 error" in out.stdout, out.stdout  # the test passed; the session's end did not
        assert "were left running" in out.stdout and f"pid {pid}" in out.stdout and "sleep 1000" in out.stdout
        try:
            assert psutil.Process(pid).status() == psutil.STATUS_ZOMBIE  # ended by the check
        except psutil.NoSuchProcess:
            pass
    finally:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass


def test_a_session_that_ends_its_children_passes(tmp_path):
    out = session(tmp_path, ENDS)
    assert out.returncode == 0 and "1 passed" in out.stdout and "error" not in out.stdout, out.stdout

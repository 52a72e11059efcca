"""scripts/replicas.py refuses what it cannot serve at once, naming the port or the address (before
it starts a replica), and the class poll's store is required where replicas are elsewhere."""

import os
import socket
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def replicas(*args: str) -> subprocess.CompletedProcess:
    # the timeout only keeps a hang from hanging the suite; the answer is expected at once
    cmd = [sys.executable, os.path.join(ROOT, "scripts", "replicas.py"), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)


def test_a_port_in_use_is_named_and_nothing_is_started():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        out = replicas("--port", str(port))
    assert out.returncode != 0 and out.stdout == ""
    assert f"port {port} on 127.0.0.1 is already in use" in out.stderr and "--port" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1  # one line, no traceback


@pytest.mark.parametrize("address", ["192.0.2.1", "no-such-host.invalid"])  # TEST-NET-1: never on a machine
def test_an_address_this_machine_does_not_have_is_named(address):
    out = replicas("--bind", address, "--port", "18123")
    assert out.returncode != 0 and f"--bind {address}" in out.stderr and "not an address of this machine" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "args,said",
    [
        (["--backends", "10.0.0.5:8501"], "--backends needs --redis URL"),
        (["--redis", "localhost:6379"], "not a redis:// URL"),
        (["--port", "70000"], "--port 70000 is not a port"),
        (["--replicas", "0"], "--replicas must be at least 1"),
    ],
)
def test_what_cannot_work_is_refused_with_how_to_fix_it(args, said):
    out = replicas(*args)
    assert out.returncode != 0 and said in out.stderr and "Traceback" not in out.stderr

"""The server's torch threads per operation (explorer.server): ATTN_SERVER_THREADS read as data."""

from __future__ import annotations

import os

import pytest

from explorer import server


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, 1), ("1", 1), ("2", min(2, os.cpu_count() or 1)), ("0", 1), ("-3", 1), ("lots", 1), ("10000", None)],
)
def test_the_thread_count_comes_from_the_environment_within_the_machine(monkeypatch, value, expected):
    if value is None:
        monkeypatch.delenv(server.THREADS_ENV, raising=False)
    else:
        monkeypatch.setenv(server.THREADS_ENV, value)
    assert server.server_threads() == (os.cpu_count() or 1 if expected is None else expected)


def test_a_test_process_is_not_a_server():
    """AppTest's runtime is a stand-in: the app's torch settings are left to the test process."""
    assert not server.serving()

"""The test harness's speed-ups for ``AppTest`` (tests/apptest_speed.py) change no result: an edited script is
compiled again, a run's end is waited for (and a run that never ends still times out), and the component scan
kept is the one Streamlit makes."""

from __future__ import annotations

import os
import threading
import time

import apptest_speed
import pytest
from streamlit.components.v2 import manifest_scanner
from streamlit.runtime.scriptrunner import ScriptRunnerEvent
from streamlit.signal_util import Signal  # the signal Streamlit's own script runner sends its events on
from streamlit.testing.v1 import AppTest, app_test, local_script_runner


def test_the_patches_are_in_place_for_every_apptest():
    assert app_test.ScriptCache() is apptest_speed.KEPT and local_script_runner.ScriptCache() is apptest_speed.KEPT
    assert local_script_runner.require_widgets_deltas is apptest_speed.wait_for_the_end


def test_the_kept_scan_is_what_streamlit_finds(monkeypatch):
    assert manifest_scanner.scan_component_manifests is not apptest_speed.SCAN  # kept, not scanned each time
    found = [("a component's manifest", "/its/package")]  # this machine's packages have none: a stand-in scan
    monkeypatch.setattr(apptest_speed, "SCAN", lambda: list(found))
    try:
        apptest_speed.install()
        assert manifest_scanner.scan_component_manifests() == found
        assert manifest_scanner.scan_component_manifests(max_workers=4) == found
    finally:
        monkeypatch.undo()
        apptest_speed.install()
    assert manifest_scanner.scan_component_manifests() == apptest_speed.SCAN()


def test_a_script_is_compiled_once_and_again_when_it_changes(tmp_path):
    cache = apptest_speed.KeptScriptCache()
    script = tmp_path / "page.py"
    script.write_text("x = 1\n")
    first = cache.get_bytecode(str(script))
    assert cache.get_bytecode(str(script)) is first  # kept
    script.write_text("x = 22\n")  # a new size
    assert 22 in cache.get_bytecode(str(script)).co_consts
    script.write_text("x = 33\n")  # the same size: the modification time tells
    later = os.stat(script).st_mtime_ns + 1_000_000
    os.utime(script, ns=(later, later))
    assert 33 in cache.get_bytecode(str(script)).co_consts


def test_an_apptest_sees_a_page_edited_between_runs(tmp_path):
    script = tmp_path / "app.py"
    script.write_text("import streamlit as st\nst.markdown('one')\n")
    at = AppTest.from_file(str(script), default_timeout=30).run()
    assert [m.value for m in at.markdown] == ["one"]
    script.write_text("import streamlit as st\nst.markdown('two and more')\n")
    assert [m.value for m in at.run().markdown] == ["two and more"]
    assert [m.value for m in AppTest.from_file(str(script), default_timeout=30).run().markdown] == ["two and more"]


class Runner:
    """What ``wait_for_the_end`` reads of a LocalScriptRunner: its events, its signal, stop and join."""

    def __init__(self) -> None:
        self.events: list = []
        self.on_event = Signal()
        self.on_event.connect(lambda sender, event=None, **kw: self.events.append(event), weak=False)
        self.stopped = self.joined = False

    def script_stopped(self) -> bool:
        return ScriptRunnerEvent.SHUTDOWN in self.events

    def request_stop(self) -> None:
        self.stopped = True

    def join(self) -> None:
        self.joined = True


def test_the_wait_returns_at_the_runs_end_and_not_before():
    runner = Runner()
    ended_at: list[float] = []

    def run() -> None:
        time.sleep(0.3)
        runner.on_event.send(runner, event=ScriptRunnerEvent.SCRIPT_STOPPED_WITH_SUCCESS)
        ended_at.append(time.monotonic())
        runner.on_event.send(runner, event=ScriptRunnerEvent.SHUTDOWN)

    threading.Thread(target=run).start()
    apptest_speed.wait_for_the_end(runner, timeout=30)
    assert ended_at and time.monotonic() >= ended_at[0] and not runner.stopped


def test_an_end_sent_before_the_wait_began_is_seen():
    runner = Runner()
    runner.on_event.send(runner, event=ScriptRunnerEvent.SHUTDOWN)
    apptest_speed.wait_for_the_end(runner, timeout=0.01)
    assert not runner.stopped


def test_a_run_that_never_ends_is_stopped_and_reported():
    runner = Runner()
    with pytest.raises(RuntimeError, match=r"timed out after 0.2\(s\)"):
        apptest_speed.wait_for_the_end(runner, timeout=0.2)
    assert runner.stopped and runner.joined

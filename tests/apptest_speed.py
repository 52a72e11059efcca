"""``AppTest`` as a server runs a page, without the costs a test harness adds to every run.

Streamlit 1.67's ``AppTest`` (py-spy over ``tests/app`` in one process: benchmarks/results/suite_time.txt)
- scans every installed distribution's metadata for components on each new ``AppTest`` (about 0.14 s of CPU);
- compiles the app and the page again on every run, in a new ``ScriptCache`` (a server keeps one for all its
  sessions): 17 % of the samples;
- waits for a run's end by waking every millisecond to look through the run's events: 5 % of the samples, and
  the GIL taken from the script's own thread each time.

``install()`` keeps the first scan's list (the packages do not change while the tests run), gives every run one
shared cache that compiles a file again when its size or modification time changes, and waits for the run's end
on the runner's own event. What a page does, and what a test reads of it, is unchanged
(``tests/unit/test_apptest_speed.py``). ``tests/app`` under the suite's two workers took 221.8 and 221.9 s
before, 144.7 and 135.9 s after (alternated). A Streamlit upgrade must run that test file again.
"""

from __future__ import annotations

import os
import threading

from streamlit import config
from streamlit.components.v2 import manifest_scanner
from streamlit.runtime.scriptrunner import ScriptRunnerEvent
from streamlit.runtime.scriptrunner.script_cache import ScriptCache
from streamlit.testing.v1 import app_test, local_script_runner


class KeptScriptCache(ScriptCache):
    """One cache of compiled scripts for every ``AppTest`` run in this process; a file whose size or
    modification time (or Streamlit's magic setting) changed since it was compiled is compiled again."""

    def __init__(self) -> None:
        super().__init__()
        self._stamps: dict[str, tuple] = {}

    def get_bytecode(self, script_path: str):
        path = os.path.abspath(script_path)
        st = os.stat(path)
        stamp = (st.st_mtime_ns, st.st_size, bool(config.get_option("runner.magicEnabled")))
        with self._lock:
            if self._stamps.get(path) != stamp:
                self._cache.pop(path, None)
                self._stamps[path] = stamp
        return super().get_bytecode(path)


KEPT = KeptScriptCache()
SCAN = manifest_scanner.scan_component_manifests  # Streamlit's own scan, before ``install`` keeps its result


def wait_for_the_end(runner, timeout: float = 3) -> None:
    """Streamlit's ``require_widgets_deltas``, woken by the runner's SHUTDOWN event instead of every millisecond:
    returns once the run has ended; after ``timeout`` seconds stops the run and raises, as the original does."""
    ended = threading.Event()

    def on_event(sender, event=None, **kwargs) -> None:
        if event == ScriptRunnerEvent.SHUTDOWN:
            ended.set()

    runner.on_event.connect(on_event, weak=False)
    try:
        if not runner.script_stopped():  # an end sent before the handler was connected is in runner.events
            ended.wait(timeout)
    finally:
        runner.on_event.disconnect(on_event)
    if runner.script_stopped():
        return
    runner.request_stop()
    runner.join()
    raise RuntimeError(f"AppTest script run timed out after {timeout}(s)")


def install() -> list:
    """Patch the three costs away for this process; returns what Streamlit's component scan found."""
    found = SCAN()
    manifest_scanner.scan_component_manifests = lambda max_workers=None: list(found)
    app_test.ScriptCache = local_script_runner.ScriptCache = lambda: KEPT
    local_script_runner.require_widgets_deltas = wait_for_the_end
    return found

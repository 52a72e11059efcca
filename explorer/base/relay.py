"""One wake-up of the server's event loop per burst of a script run's messages, not one per element.

Streamlit hands every element a script run draws (each caption, widget and chart: a page sends 40-90)
from the script thread to the event loop with ``loop.call_soon_threadsafe``, and the loop, having
queued it for the browser, wakes its own sender with a second one. Each call writes a byte to the
loop's wake-up pipe, and each wake-up passes the GIL from the script thread to the loop and back. With a
class of 100 on one server, ``DeltaGenerator._enqueue`` was in 23.4 % of the samples of a thread holding the GIL
and the event loop's thread in 14.8 % (``benchmarks/results/class_capacity_cpu.txt``).

``install()`` keeps Streamlit's order and handlers and changes only the hand-off:

- a session's script events go into one queue, and the loop is woken only when no drain of that queue
  is already scheduled; the drain runs the handlers in order, so the loop sees the same events in the
  same order, a burst at a time;
- on the loop's own thread, "a message is queued" sets the sender's event directly instead of
  scheduling the same call through the wake-up pipe.

``ATTN_EXPLORER_RELAY=0`` leaves Streamlit as it is (the benchmarks compare both).
"""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import threading

ENV = "ATTN_EXPLORER_RELAY"
_LOG = logging.getLogger(__name__)
_installed = False
_lock = threading.Lock()


def wanted() -> bool:
    return os.environ.get(ENV, "1") != "0"


def _drain(session) -> None:
    """On the event loop: run every queued handler of ``session`` in order."""
    session._attn_relay_pending = False  # before the first pop: a handler queued from now on schedules a drain
    queue = session._attn_relay_queue
    while queue:
        callback = queue.popleft()
        try:
            callback()
        except Exception:  # noqa: BLE001 - as asyncio does for a failed callback: log it, run the rest
            _LOG.exception("A script event's handler failed")


def _call_soon_on_event_loop(self, callback) -> None:
    """AppSession's hand-off from the script thread, a burst at a time (see the module's docstring)."""
    queue = self.__dict__.get("_attn_relay_queue")
    if queue is None:
        queue = self.__dict__.setdefault("_attn_relay_queue", collections.deque())
    queue.append(callback)
    if getattr(self, "_attn_relay_pending", False):
        return  # a drain is scheduled and has not started: it will run this one too
    self._attn_relay_pending = True
    try:
        self._event_loop.call_soon_threadsafe(_drain, self)
    except RuntimeError:
        self._attn_relay_pending = False
        if not self._event_loop.is_closed():
            raise
        queue.clear()  # the loop is gone (the server stopping): Streamlit drops these too


def _enqueued_some_message(self) -> None:
    """Runtime's "a message is queued": set the sender's event at once when already on the loop."""
    objs = self._get_async_objs()
    if asyncio.events._get_running_loop() is objs.eventloop:
        objs.need_send_data.set()
    else:
        objs.eventloop.call_soon_threadsafe(objs.need_send_data.set)


def install() -> bool:
    """Patch Streamlit's two hand-offs once per process; False (and Streamlit untouched) when switched
    off or when this Streamlit lacks what is patched."""
    global _installed
    if not wanted():
        return False
    with _lock:
        if _installed:
            return True
        try:
            from streamlit.runtime.app_session import AppSession
            from streamlit.runtime.runtime import Runtime
        except ImportError:  # pragma: no cover - another Streamlit layout
            return False
        if not (hasattr(AppSession, "_call_soon_on_event_loop") and hasattr(Runtime, "_enqueued_some_message")):
            return False  # pragma: no cover - checked by tests/unit/test_relay.py on the pinned Streamlit
        AppSession._call_soon_on_event_loop = _call_soon_on_event_loop
        Runtime._enqueued_some_message = _enqueued_some_message
        _installed = True
        return True

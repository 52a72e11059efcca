"""explorer/base/relay.py: a script run's events reach the event loop in order, every one once, with one
wake-up per burst; and the pinned Streamlit still has the two hand-offs it replaces."""

from __future__ import annotations

import asyncio
import inspect
import threading
import types

import pytest

from explorer.base import relay


class CountingLoop:
    """A real asyncio loop on its own thread; counts the wake-ups asked of it from other threads."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.wakeups = 0
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def call_soon_threadsafe(self, callback, *args):
        self.wakeups += 1
        return self.loop.call_soon_threadsafe(callback, *args)

    def is_closed(self) -> bool:
        return self.loop.is_closed()

    def block(self) -> threading.Event:
        """Hold the loop inside a callback until the returned event is set."""
        go, held = threading.Event(), threading.Event()
        self.loop.call_soon_threadsafe(lambda: (held.set(), go.wait(10)))
        assert held.wait(10)
        return go

    def finish(self) -> None:
        done = threading.Event()
        self.loop.call_soon_threadsafe(done.set)
        assert done.wait(10)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


@pytest.fixture
def loop():
    made = CountingLoop()
    yield made
    if not made.is_closed():
        made.close()


def session(loop: CountingLoop):
    return types.SimpleNamespace(_event_loop=loop)


def test_a_burst_of_events_arrives_in_order_with_one_wakeup(loop):
    s, seen = session(loop), []
    go = loop.block()  # the loop busy (another session's messages) while this script run draws 500 elements
    for i in range(500):
        relay._call_soon_on_event_loop(s, lambda i=i: seen.append((i, threading.current_thread())))
    go.set()
    loop.finish()
    assert [i for i, _ in seen] == list(range(500))
    assert {thread for _, thread in seen} == {loop.thread}  # every handler on the loop's thread, as Streamlit needs
    assert loop.wakeups == 1


def test_events_from_a_running_script_thread_all_arrive_in_order(loop):
    s, seen = session(loop), []

    def script() -> None:
        for i in range(3000):
            relay._call_soon_on_event_loop(s, lambda i=i: seen.append(i))

    thread = threading.Thread(target=script)
    thread.start()
    thread.join(30)
    loop.finish()
    assert seen == list(range(3000))
    assert 1 <= loop.wakeups <= 3000


def test_an_event_queued_while_its_queue_drains_is_run_once(loop):
    s, seen = session(loop), []

    def first() -> None:  # runs inside a drain; queues another, as a handler may
        seen.append("first")
        relay._call_soon_on_event_loop(s, lambda: seen.append("queued during the drain"))

    go = loop.block()
    relay._call_soon_on_event_loop(s, first)
    relay._call_soon_on_event_loop(s, lambda: seen.append("second"))
    go.set()
    loop.finish()
    loop.finish()
    assert seen == ["first", "second", "queued during the drain"]


def test_a_failing_handler_is_logged_and_the_rest_still_run(loop, monkeypatch):
    s, seen, logged = session(loop), [], []
    monkeypatch.setattr(relay._LOG, "exception", lambda msg: logged.append(msg))
    go = loop.block()
    relay._call_soon_on_event_loop(s, lambda: seen.append(1))
    relay._call_soon_on_event_loop(s, lambda: 1 / 0)
    relay._call_soon_on_event_loop(s, lambda: seen.append(3))
    go.set()
    loop.finish()
    assert seen == [1, 3]
    assert logged == ["A script event's handler failed"]


def test_events_after_the_loop_closed_are_dropped_as_streamlit_drops_them(loop):
    s = session(loop)
    loop.close()
    relay._call_soon_on_event_loop(s, lambda: None)  # no "Event loop is closed" raised to the script thread
    assert not s._attn_relay_queue


def test_a_message_queued_on_the_loop_sets_the_senders_event_without_a_wakeup(loop):
    objs = types.SimpleNamespace(eventloop=None, need_send_data=None)

    async def make() -> None:
        objs.eventloop, objs.need_send_data = asyncio.get_running_loop(), asyncio.Event()

    asyncio.run_coroutine_threadsafe(make(), loop.loop).result(10)
    runtime = types.SimpleNamespace(_get_async_objs=lambda: objs)

    async def on_the_loop() -> bool:
        relay._enqueued_some_message(runtime)
        return objs.need_send_data.is_set()

    assert asyncio.run_coroutine_threadsafe(on_the_loop(), loop.loop).result(10)
    objs.need_send_data = asyncio.Event()
    relay._enqueued_some_message(runtime)  # from another thread: through the loop, as Streamlit does
    loop.finish()
    assert objs.need_send_data.is_set()


def test_the_pinned_streamlit_has_the_two_hand_offs_the_relay_replaces():
    from streamlit.runtime.app_session import AppSession
    from streamlit.runtime.runtime import Runtime

    assert "self._call_soon_on_event_loop(" in inspect.getsource(AppSession._on_scriptrunner_event)
    assert list(inspect.signature(AppSession._call_soon_on_event_loop).parameters) == ["self", "callback"]
    assert "need_send_data.set" in inspect.getsource(Runtime._enqueued_some_message)
    assert "message_enqueued_callback=self._enqueued_some_message" in inspect.getsource(Runtime)


def test_switched_off_it_leaves_streamlit_alone(monkeypatch):
    from streamlit.runtime.app_session import AppSession

    monkeypatch.setenv(relay.ENV, "0")
    before = AppSession._call_soon_on_event_loop
    assert relay.install() is False
    assert AppSession._call_soon_on_event_loop is before

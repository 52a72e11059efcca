"""One PNG render at a time for the whole server (``explorer.charts.png.render``): Streamlit runs each click's
render in a
shared worker thread, so a class clicking at once must queue behind one Chromium, not start thirty; a click that
waits longer than ``WAIT_S`` fails instead of queueing without end. The figure's own ``to_image`` is replaced by
one that holds until the test lets it go, so which render is inside is known, not guessed from timing."""

from __future__ import annotations

import threading

import pytest

from explorer.charts import png

HOLD_S = 30.0  # how long a stand-in render waits for the test at most: a safety net, never reached when all is well


class Figure:
    """A figure whose render signals when it starts and returns only once released."""

    def __init__(self, name: str) -> None:
        self.name, self.inside, self.release = name, threading.Event(), threading.Event()

    def to_image(self, *, format, width, height, scale):
        self.inside.set()
        assert self.release.wait(HOLD_S)
        return f"{self.name} {format} {width}x{height}@{scale}".encode()


def start(figure: Figure, out: dict) -> threading.Thread:
    def click():
        try:
            out[figure.name] = png.render(figure, 100, 50)
        except Exception as err:  # noqa: BLE001 - what a click got is the result
            out[figure.name] = err

    thread = threading.Thread(target=click, daemon=True)
    thread.start()
    return thread


def test_a_second_click_waits_for_the_render_inside_and_then_renders():
    first, second, out = Figure("a"), Figure("b"), {}
    one = start(first, out)
    assert first.inside.wait(HOLD_S)
    two = start(second, out)
    # the second click is queued: while the first render holds, the second never starts (a broken bound lets it
    # in at once, well within this second)
    assert not second.inside.wait(1.0)
    first.release.set()
    assert second.inside.wait(HOLD_S)  # the first done, the second goes in
    second.release.set()
    one.join(HOLD_S), two.join(HOLD_S)
    assert out == {"a": b"a png 100x50@1", "b": b"b png 100x50@1"}


def test_a_click_that_waits_past_the_bound_fails_and_the_next_one_renders(monkeypatch):
    monkeypatch.setattr(png, "WAIT_S", 0.2)
    first, late, out = Figure("a"), Figure("late"), {}
    one = start(first, out)
    assert first.inside.wait(HOLD_S)
    start(late, out).join(HOLD_S)  # gives up after WAIT_S while the first still renders
    assert isinstance(out["late"], TimeoutError) and not late.inside.is_set()
    first.release.set()
    one.join(HOLD_S)
    after = Figure("after")
    after.release.set()
    assert png.render(after, 10, 10) == b"after png 10x10@1"  # the slot was given back


def test_a_render_that_raises_gives_the_slot_back():
    class Broken:
        def to_image(self, **kwargs):
            raise RuntimeError("Chromium crashed")

    with pytest.raises(RuntimeError):
        png.render(Broken(), 10, 10)
    fine = Figure("fine")
    fine.release.set()
    assert png.render(fine, 10, 10) == b"fine png 10x10@1"


class JavascriptError(Exception):
    """Named as kaleido's own (``kaleido._kaleido_tab._errors.JavascriptError``): the retry reads the name."""


class Flaky:
    """A figure whose first renders fail as kaleido's fail when its tab runs before its page has loaded."""

    def __init__(self, failures: list[Exception]) -> None:
        self.failures, self.calls = list(failures), 0

    def to_image(self, *, format, width, height, scale):
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return b"png"


TOO_SOON = "{'description': 'ReferenceError: kaleido_scopes is not defined\\n    at <anonymous>:1:26'}"


def test_a_render_whose_chromium_started_too_soon_is_tried_once_more():
    figure = Flaky([JavascriptError(TOO_SOON)])
    assert png.render(figure, 100, 50) == b"png" and figure.calls == 2


@pytest.mark.parametrize(
    "failures",
    [
        [JavascriptError(TOO_SOON), JavascriptError(TOO_SOON)],  # twice: not once more again
        [JavascriptError("TypeError: cannot read properties of undefined")],  # the chart's own error
        [ValueError("kaleido_scopes is not defined")],  # another error that only says the same
    ],
)
def test_other_failures_are_not_retried_and_reach_the_click(failures):
    figure = Flaky(failures)
    with pytest.raises(Exception) as caught:
        png.render(figure, 100, 50)
    tried = min(len(failures), 2)
    assert figure.calls == tried and caught.value is failures[tried - 1]  # the last try's own error
    assert png._ONE_AT_A_TIME.acquire(timeout=0) and png._ONE_AT_A_TIME.release() is None  # the slot given back

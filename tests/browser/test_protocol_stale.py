"""A browser's stale widget values, sent over Streamlit's own websocket protocol to `streamlit run app.py`.

A real browser sends the label it shows; when a student clicks while a rerun changes the options,
the label is no longer among them. The class benchmark (benchmarks/class_load.py) met this as
`TypeError: '>=' not supported between instances of 'str' and 'int'` on Multi-head. Its protocol
client is reused here: a ``BackMsg`` carrying the stale values, the ``ForwardMsg``s read back.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import math
import os
import sys
from dataclasses import dataclass, field

import pytest
import serve
from streamlit.proto.WidgetStates_pb2 import WidgetState

sys.path.insert(0, os.path.join(serve.ROOT, "benchmarks"))
from class_load import Session


@dataclass
class Tab(Session):
    """The benchmark's session, keeping every element the server drew in the last run."""

    elements: list = field(default_factory=list)

    def _read_delta(self, delta, seen) -> None:
        super()._read_delta(delta, seen)
        if delta.WhichOneof("type") == "new_element":
            self.elements.append(delta.new_element)

    async def send(self, *states: WidgetState, page: str | None = None) -> str | None:
        """One rerun with these widget states; the error kind, or None."""
        self.elements = []
        for s in states:
            self.states[s.id] = s
        _elapsed, error = await self.run(page=page, timeout=120)
        return error

    def of(self, kind: str) -> list:
        return [getattr(e, kind) for e in self.elements if e.WhichOneof("type") == kind]

    def charts(self) -> list[dict]:
        return [json.loads(c.spec) for c in self.of("plotly_chart")]


@pytest.fixture(scope="module")
def url():
    proc, url = serve.start_server(warm=False)  # Step by step and Multi-head: no model
    yield url
    serve.stop_server(proc)


def run(coro):
    """In a thread of its own: the browser tests' Playwright keeps an event loop running in this one."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, asyncio.wait_for(coro, timeout=300)).result()


def titles(tab: Tab) -> list[str]:
    return [(c["layout"].get("title") or {}).get("text", "") for c in tab.charts()]


def test_a_stale_head_label_in_a_backmsg_is_dropped_not_raised(url):
    async def go() -> None:
        tab = Tab(url, "stale-heads")
        await tab.connect()
        try:
            assert await tab.send(page="multihead") is None
            heads = tab.widgets["heads"]
            assert await tab.send(WidgetState(id=heads.id, double_value=4)) is None
            picker = tab.widgets["mh_heads"]
            assert list(picker.proto.options) == ["Head 0", "Head 1", "Head 2", "Head 3"]
            four = WidgetState(id=picker.id)  # the student picks the four heads
            four.string_array_value.data.extend(picker.proto.options)
            assert await tab.send(four) is None
            assert [t for t in titles(tab) if t.startswith("Head ")] == ["Head 0", "Head 1", "Head 2", "Head 3"]
            # The head count drops to 2; before the browser has drawn that run, the student clicks
            # "Head 3" in the list it still shows: the next BackMsg carries a label the server no longer has.
            assert await tab.send(WidgetState(id=heads.id, double_value=2)) is None
            stale = WidgetState(id=picker.id)
            stale.string_array_value.data.extend(["Head 0", "Head 3"])
            error = await tab.send(stale)
            exceptions = [f"{e.type}: {e.message}" for e in tab.of("exception")]
            assert error is None and not exceptions, (error, exceptions)
            assert [t for t in titles(tab) if t.startswith("Head ")] == ["Head 0"]  # the head that still exists
            assert any("Heads to show" in t.body for t in tab.of("toast"))  # named, so the student knows
            assert list(tab.widgets["mh_heads"].proto.options) == ["Head 0", "Head 1"]
            # and the page goes on answering
            assert await tab.send(WidgetState(id=heads.id, double_value=3)) is None
            assert not tab.of("exception")
        finally:
            await tab.close()

    run(go())


def test_stale_choices_and_junk_numbers_in_a_backmsg_never_raise(url):
    """A selectbox label of the other language, a radio label of another variant's steps, NaN,
    infinity and text for numbers: each falls back as a link's bad value does."""

    async def go() -> None:
        tab = Tab(url, "stale-sidebar")
        await tab.connect()
        try:
            assert await tab.send(page="steps") is None
            w = tab.widgets
            cases = [
                WidgetState(id=w["score"].id, string_value="缩放点积 (stale)"),
                WidgetState(id=w["step"].id, string_value="3 Pattern (stale)"),
                WidgetState(id=w["focus"].id, string_value="9 tired"),
                WidgetState(id=w["temperature"].id, double_value=math.nan),
                WidgetState(id=w["d_model"].id, string_value="sixteen"),  # Streamlit's int() raised before the page
                WidgetState(id=w["heads"].id, double_value=math.nan),
                WidgetState(id=w["heads"].id, double_value=math.inf),
                WidgetState(id=w["seed"].id, int_value=2**62),
                WidgetState(id=w["lang"].id, string_value="Klingon"),
            ]
            for state in cases:
                tab.states.clear()  # one hostile value at a time
                error = await tab.send(state)
                exceptions = [f"{e.type}: {e.message}" for e in tab.of("exception")]
                assert error is None and not exceptions, (state, error, exceptions)
                assert tab.charts(), state  # the page was drawn, not stopped
        finally:
            await tab.close()

    run(go())


def test_numbers_for_a_select_slider_are_dropped_and_the_page_keeps_drawing(url):
    """The Lab's replay scrubber is a select slider: Streamlit 1.67's browser sends its labels. A plain slider's
    numbers for it (the class benchmark's client sent them) were read, then written back in that shape, and every
    run of the Lab page raised ``TypeError: must be real number, not str`` from then on."""

    async def go() -> None:
        tab = Tab(url, "stale-replay", query="lab_task=shift&lab_steps=60&seed=11")
        await tab.connect()
        try:
            assert await tab.send(page="lab") is None
            await tab.run(trigger=tab.widgets["lab_play"].id, timeout=120)
            for _ in range(600):  # the run trains in a worker at the lowest priority; its scrubber is drawn at its end
                if "lab_replay" in tab.widgets:
                    break
                await asyncio.sleep(1)
                assert await tab.send() is None
            replay = tab.widgets["lab_replay"]
            assert list(replay.proto.options) == ["25", "50", "60"]
            numbers = WidgetState(id=replay.id)
            numbers.double_array_value.data.append(1.0)
            for state in (numbers, numbers, WidgetState(id=replay.id, string_value="50")):
                error = await tab.send(state)
                exceptions = [f"{e.type}: {e.message}" for e in tab.of("exception")]
                assert error is None and not exceptions, (state, error, exceptions)
                assert "lab_replay" in tab.widgets and tab.charts()
            labels = WidgetState(id=replay.id)  # what a browser sends: the scrubber still moves
            labels.string_array_value.data.append("25")
            assert await tab.send(labels) is None
            assert any("at step 25" in c.body for c in tab.of("markdown") + tab.of("caption"))
        finally:
            await tab.close()

    run(go())


def test_the_png_choice_a_browser_still_holds_from_an_earlier_step_is_dropped_silently(url):
    """The PNG control offers the charts of the page's last run, and each step of Step by step draws others. The
    browser keeps the chart name it showed when the control first appeared (the first step's first chart) and sends
    it with every rerun: a chart no longer drawn is not a learner's mistake, so no notice is shown (a toast on the
    projector covered Next); the control offers this run's charts again. A value of the wrong kind is still named."""

    async def go() -> None:
        tab = Tab(url, "stale-png")
        await tab.connect()
        try:
            assert await tab.send(page="steps") is None
            assert "png_chart" in tab.widgets, (
                "no PNG control: the server found no Chromium (scripts/test.sh installs one)"
            )
            held = WidgetState(id=tab.widgets["png_chart"].id, string_value=tab.widgets["png_chart"].proto.options[0])
            steps = list(tab.widgets["step"].proto.options)
            for step in steps[1:]:  # the browser's radio label of each step, and the name it still holds
                assert await tab.send(WidgetState(id=tab.widgets["step"].id, string_value=step), held) is None
                toasts = [t.body for t in tab.of("toast")]
                assert not toasts, (step, toasts)
                options = list(tab.widgets["png_chart"].proto.options)
                assert options == [n for n in options if n.startswith("steps_")] and options, options
            junk = WidgetState(id=tab.widgets["png_chart"].id, int_value=3)  # another widget's shape: dropped
            assert await tab.send(junk) is None and not tab.of("exception")
        finally:
            await tab.close()

    run(go())

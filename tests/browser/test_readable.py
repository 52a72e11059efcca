"""What a room can read: no two tick labels of a chart drawn over each other (measured from the SVG
in Chromium at a projector's 1280×720), on the pages with the most crowded axes, in both languages."""

import os
import re
import time

import pytest
from conftest import ARTIFACTS
from playwright.sync_api import expect
from test_browser import WAIT, no_toast, open_app, settle

# Every tick label's box, per chart and axis (plotly draws each axis's labels in a group of its own).
TICK_BOXES = """() => [...document.querySelectorAll('.stPlotlyChart, [data-testid="stPlotlyChart"]')].map(
  (chart) => ['xtick', 'ytick'].map((axis) => [...chart.querySelectorAll(`g.${axis} text`)]
    .filter((t) => t.textContent.trim() && getComputedStyle(t).opacity !== '0')
    .map((t) => { const r = t.getBoundingClientRect();
                  return {text: t.textContent, x0: r.left, x1: r.right, y0: r.top, y1: r.bottom}; })
    .filter((b) => b.x1 > b.x0 && b.y1 > b.y0)))"""


def overlaps(boxes: list[dict], slack: float = 0.5) -> list[tuple[str, str]]:
    """Pairs of label boxes that share area (touching edges allowed)."""
    found = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            if (
                min(a["x1"], b["x1"]) - max(a["x0"], b["x0"]) > slack
                and min(a["y1"], b["y1"]) - max(a["y0"], b["y0"]) > slack
            ):
                found.append((a["text"], b["text"]))
    return found


def crowded(page) -> list:
    charts = page.evaluate(TICK_BOXES)
    assert charts and any(any(axis) for chart in charts for axis in chart), "no tick labels found"
    return [(i, pair) for i, chart in enumerate(charts) for axis in chart for pair in overlaps(axis)]


def test_the_overlap_measure_finds_labels_drawn_over_each_other():
    side_by_side = [dict(text="0 Life", x0=0, x1=30, y0=0, y1=12), dict(text="1 is", x0=30, x1=45, y0=0, y1=12)]
    on_top = [dict(text="0 Life", x0=0, x1=30, y0=0, y1=12), dict(text="1 is", x0=25, x1=40, y0=0, y1=12)]
    assert overlaps(side_by_side) == [] and overlaps(on_top) == [("0 Life", "1 is")]


SENTENCE = "Life+is+short%2C+eat+dessert+first+and+then+attention+explains+everything+else"


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("path", [f"variants?sentence={SENTENCE}", f"multihead?heads=4&sentence={SENTENCE}"])
def test_no_tick_labels_overlap_on_crowded_pages(server, projector, path, lang):
    open_app(projector, server, f"{path}&lang={lang}")
    expect(projector.locator("g.xtick text").first).to_be_attached(timeout=WAIT)
    settle(projector)
    projector.wait_for_timeout(1000)  # plotly turns and thins labels after its first layout
    name = path.split("?")[0]
    projector.screenshot(path=os.path.join(ARTIFACTS, f"ticks_{name}_{lang}.png"), full_page=True)
    assert not crowded(projector), crowded(projector)


def _label(kernel: str, lang: str) -> str:
    from attn_core.kernels import KERNELS
    from explorer.base.i18n import STRINGS

    key = f"kernel.{kernel}.label"
    return STRINGS[key][lang == "zh"] if key in STRINGS else KERNELS[kernel].label


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_complexity_charts_are_labelled_and_uncrowded(server, projector, lang):
    """A sweep run from the page in the browser (a short one: three kernels, 256 to 1024) draws its fitted slopes
    and two charts whose labels are the selector's names, uncrowded."""
    from attn_core import bench
    from explorer.base.i18n import STRINGS

    open_app(projector, server, f"complexity?lang={lang}")
    keep = {"full", "sliding_window", "linear_elu"}
    removed = [_label(k, lang) for k in bench.DEFAULT_KERNELS if k not in keep] + ["2048", "4096"]
    for name in removed:  # a short sweep: three kernels, 256 to 1024
        projector.locator(f"button[aria-label='Remove {name}']").click()
        settle(projector)
    projector.locator("button[kind='primary']").first.click()  # the sweep runs in its job; its results come in
    slopes = STRINGS["cx_slopes"][lang == "zh"].split("（" if lang == "zh" else " (")[0]
    expect(projector.get_by_text(slopes).first).to_be_attached(timeout=240_000)
    expect(projector.locator(".stPlotlyChart, [data-testid='stPlotlyChart']").nth(1)).to_be_attached(timeout=WAIT)
    settle(projector)
    projector.wait_for_timeout(1000)
    charts = projector.locator(".stPlotlyChart, [data-testid='stPlotlyChart']")
    for i, name in enumerate(("time", "memory")):
        charts.nth(i).scroll_into_view_if_needed()
        charts.nth(i).screenshot(path=os.path.join(ARTIFACTS, f"complexity_{name}_{lang}.png"))
    assert not crowded(projector), crowded(projector)
    x_labels = projector.evaluate("() => [...document.querySelectorAll('g.xtick text')].map((t) => t.textContent)")
    assert {"256", "512", "1024"} <= set(x_labels), x_labels  # the measured lengths, not minor digits
    legend = projector.evaluate("() => [...document.querySelectorAll('g.legend text')].map((t) => t.textContent)")
    assert _label("linear_elu", lang) in legend and "linear_elu" not in legend, legend  # the selector's names


def _inside(box: dict | None, width: int = 1280, height: int = 720) -> bool:
    return (
        bool(box)
        and box["x"] >= 0
        and box["y"] >= 0
        and box["x"] + box["width"] <= width
        and (box["y"] + box["height"] <= height)
    )


def test_inside_the_viewport_means_the_whole_box():
    assert _inside({"x": 42, "y": 278, "width": 886, "height": 331})
    assert not _inside({"x": 42, "y": 711, "width": 587, "height": 331})  # what step 6 looked like before


def steady_box(page, locator, every_ms: int = 150, timeout_s: float = 10.0) -> dict | None:
    """The locator's box once two reads ``every_ms`` apart agree (plotly sizes a chart after it is attached; a fixed
    wait of 500 ms stood here before), or the last read after ``timeout_s``."""
    last, deadline = None, time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        box = locator.bounding_box()
        if box is not None and box == last:
            return box
        last = box
        page.wait_for_timeout(every_ms)
    return last


def test_a_steady_box_is_two_equal_reads():
    class Page:
        def wait_for_timeout(self, ms):
            pass

    class Moving:
        def __init__(self, boxes):
            self.boxes = list(boxes)

        def bounding_box(self):
            return self.boxes.pop(0) if len(self.boxes) > 1 else self.boxes[0]

    a, b = {"x": 0, "y": 0, "width": 10, "height": 10}, {"x": 0, "y": 0, "width": 20, "height": 10}
    assert steady_box(Page(), Moving([None, a, b, b])) == b  # not the first box read, the one that stayed
    assert steady_box(Page(), Moving([a, b, a, b, a, b]), timeout_s=0.0) is None  # no read in no time

    class Flicker:  # never two equal reads in a row: the wait ends at its timeout with the last read
        reads = 0

        def bounding_box(self):
            self.reads += 1
            return (a, b)[self.reads % 2]

    flicker = Flicker()
    assert steady_box(Page(), flicker, timeout_s=0.05) == (a, b)[flicker.reads % 2] and flicker.reads > 2


# The wait for a run to start, where the run is already seen drawing (the step's heading changed): a run that has ended
# by then costs this instead of settle()'s 300 ms
SEEN_STARTED = 50


def _walk(kernel: str) -> list[str]:
    """The steps presenter mode walks for ``kernel`` (a variant's own steps between Q, K, V and the output)."""
    from attn_core import Settings, run_trace
    from attn_core.stages import step_stages
    from explorer.controls import PAGE

    trace = run_trace(Settings(kernel=kernel))
    return list(step_stages(trace, 0, 1)) if trace.variant is not None else list(PAGE["step"].options)


def _variants() -> list[str]:
    from explorer.controls import live_variants

    return list(live_variants())  # the registry's variants a learner can pick, full attention first


# (kernel, language, the step the walk starts at): Tokens and Q, K, V are full attention's steps (their charts do not
# depend on the kernel), walked in both languages for full attention and, under a variant's fold-away, for Performer
# in Chinese; every other variant's walk in English starts at Q, K, V, the last of them, so that it steps into the
# variant's own first step as a class does (a change of step is where a notice once came: no_toast)
SHARED_STEPS = 2
PRESENTED = [("full", "en", 0), ("full", "zh", 0), ("performer", "zh", 0)]
PRESENTED += [(v, "en", SHARED_STEPS - 1) for v in _variants() if v != "full"]


def test_every_variant_walk_starts_after_the_steps_full_attention_walks():
    full = _walk("full")
    for kernel, _, start in PRESENTED:
        assert _walk(kernel)[:start] == full[:start]  # the steps left out are full attention's, by name


@pytest.mark.parametrize(("kernel", "lang", "start"), PRESENTED)
def test_presenter_mode_shows_each_steps_chart_on_the_first_screen(server, projector, kernel, lang, start):
    """At 1280×720 every step's main chart lies inside the viewport without scrolling, walked with →,
    for full attention and for every variant (their own steps too); the formula and code stay folded; no notice
    (a toast over Next and the way out of presenter mode) after any step."""
    steps = _walk(kernel)
    deep = f"&step={steps[start]}" if start else ""  # a later step named in the link, as a teacher's would
    open_app(projector, server, f"steps?present=1&lang={lang}&kernel={kernel}{deep}")
    for i, step in enumerate(steps):
        if i < start:
            continue
        if i > start:
            projector.keyboard.press("ArrowRight")
        at = re.compile(rf"(Step {i + 1} of {len(steps)}|第 {i + 1} 步)")
        expect(projector.locator(".st-key-present-row h3")).to_contain_text(at, timeout=WAIT)
        settle(projector, start_ms=SEEN_STARTED)
        no_toast(projector, (kernel, lang, i + 1, step))
        name = f"present_1280x720_{kernel}_{lang}_{i + 1}_{step}.png"
        chart = projector.locator(".stPlotlyChart, [data-testid='stPlotlyChart']").first
        try:
            expect(chart).to_be_visible(timeout=20_000)  # every step draws a chart (Performer's 7th drew none)
            box = steady_box(projector, chart)
        finally:
            projector.screenshot(path=os.path.join(ARTIFACTS, name))
        scrolled = projector.evaluate(
            "() => document.querySelector('[data-testid=\"stMain\"]')?.scrollTop || window.scrollY"
        )
        assert scrolled == 0 and _inside(box), (kernel, step, scrolled, box)
        # the formula and the code are folded away: none of them drawn outside the fold
        main = projector.locator("[data-testid='stMain']")
        formula_or_code = ".katex-display, [data-testid='stCode']"
        loose = main.locator(formula_or_code)
        folded = main.locator("[data-testid='stExpander']").locator(formula_or_code)
        assert loose.count() == folded.count(), (kernel, step, loose.count(), folded.count())
    assert (
        projector.locator("button", has_text={"en": "Leave presenter mode", "zh": "退出演示模式"}[lang]).count() == 1
    )


# The other teaching pages walked in presenter mode, one section a step: what each step must show on the first screen
# (its chart; the table of every position's prediction; before Play the trained model's buttons; the uploader)
CHART = ".stPlotlyChart, [data-testid='stPlotlyChart']"
PART_SHOWS = {
    "next_token": [CHART, "[data-testid='stDataFrame']", CHART, CHART, CHART, CHART],
    "vision?vi_model=swin&vi_patch=1&vi_window=4": [CHART, CHART, "button:has-text('Play'), button:has-text('播放')"],
    "model": [CHART, CHART, CHART],
}
PART_SHOWS["vision?vi_model=swin&vi_patch=1&vi_window=4"].append("[data-testid='stFileUploader']")


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("path", list(PART_SHOWS))
def test_presenter_mode_walks_each_teaching_page_with_each_steps_chart_on_the_first_screen(
    server, projector, path, lang
):
    """Next token, Vision and Real model at 1280×720 in presenter mode: Step i of n walked with →, each step's
    chart (or what the step shows first) wholly inside the viewport without scrolling."""
    shows = PART_SHOWS[path]
    joiner = "&" if "?" in path else "?"
    open_app(projector, server, f"{path}{joiner}present=1&lang={lang}")
    for i, selector in enumerate(shows):
        if i:
            projector.locator(".st-key-present-row h3").click()  # the keys go to the page, not to a text box
            projector.keyboard.press("ArrowRight")
        at = re.compile(rf"(Step {i + 1} of {len(shows)}|第 {i + 1} 步)")
        expect(projector.locator(".st-key-present-row h3")).to_contain_text(at, timeout=WAIT)
        settle(projector, start_ms=SEEN_STARTED)
        name = f"present_1280x720_{path.split('?')[0]}_{lang}_{i + 1}.png"
        first = projector.locator(".st-key-present-part").locator(selector).first
        try:
            expect(first).to_be_visible(timeout=120_000)  # a worker's result (generation, copying) may come later
            box = steady_box(projector, first)
        finally:
            projector.screenshot(path=os.path.join(ARTIFACTS, name))
        scrolled = projector.evaluate(
            "() => document.querySelector('[data-testid=\"stMain\"]')?.scrollTop || window.scrollY"
        )
        assert scrolled == 0 and _inside(box), (path, lang, i + 1, scrolled, box)
    leave = {"en": "Leave presenter mode", "zh": "退出演示模式"}[lang]
    assert projector.locator("button", has_text=leave).count() == 1


# A pinned comparison presented: A's chart and B's, by their titles, side by side on the first screen of every step
PAIR_TITLES = {"en": ("A (pinned)", "B (now)"), "zh": ("A（固定）", "B（当前）")}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_presenter_mode_shows_a_and_b_of_each_step_on_the_first_screen(server, projector, lang):
    """Step by step presented at 1280×720 with A pinned in the link (two heads; B has one): at every step A's and
    B's main chart lie wholly inside the viewport, side by side, without scrolling."""
    from urllib.parse import quote, urlencode

    from attn_core.config import TUTORIAL_SENTENCE

    steps = _walk("full")
    pinned = quote(urlencode({"sentence": TUTORIAL_SENTENCE, "heads": "2"}))
    open_app(projector, server, f"steps?present=1&lang={lang}&a={pinned}")
    for i, step in enumerate(steps):
        if i:
            projector.locator(".st-key-present-row h3").click()  # the keys go to the page, not to a text box
            projector.keyboard.press("ArrowRight")
        at = re.compile(rf"(Step {i + 1} of {len(steps)}|第 {i + 1} 步)")
        expect(projector.locator(".st-key-present-row h3")).to_contain_text(at, timeout=WAIT)
        settle(projector, start_ms=SEEN_STARTED)
        charts = [projector.locator(CHART, has_text=title).first for title in PAIR_TITLES[lang]]
        try:
            for chart in charts:
                expect(chart).to_be_visible(timeout=20_000)
            a, b = (steady_box(projector, chart) for chart in charts)
        finally:
            projector.screenshot(path=os.path.join(ARTIFACTS, f"present_pinned_1280x720_{lang}_{i + 1}_{step}.png"))
        scrolled = projector.evaluate(
            "() => document.querySelector('[data-testid=\"stMain\"]')?.scrollTop || window.scrollY"
        )
        assert scrolled == 0 and _inside(a) and _inside(b), (step, scrolled, a, b)
        assert a["x"] + a["width"] <= b["x"], (step, a, b)  # side by side, A on the left

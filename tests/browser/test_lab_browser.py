"""The Lab in Chromium: Play trains, the curves and heads update, other controls stay usable, Pause holds."""

import os

import serve
from conftest import ARTIFACTS
from playwright.sync_api import expect
from test_browser import WAIT, open_app, settle

POINTS = """() => {
    const plot = Array.from(document.querySelectorAll('.js-plotly-plot'))
        .find(el => (((el.layout || {}).title || {}).text || '').replace(/<[^>]+>/g, '') === 'Loss');
    return plot ? plot.data[0].x.length : 0;
}"""
HEAD = """() => {
    const plot = Array.from(document.querySelectorAll('.js-plotly-plot'))
        .find(el => (((el.layout || {}).title || {}).text || '').replace(/<[^>]+>/g, '') === 'layer 0, head 0');
    return plot ? JSON.stringify(plot.data[0].z) : '';
}"""


def test_play_trains_live_other_controls_respond_and_pause_holds(server, page):
    # a larger model, so that training lasts long enough to act on it while it runs
    open_app(page, server, "lab?lab_task=sort&lab_steps=5000&d_model=64&heads=4&d_q=16&d_k=16&d_v=16")
    expect(page.get_by_text("Press Play").first).to_be_visible(timeout=WAIT)
    page.get_by_role("button", name="Play").click()
    page.wait_for_function(f"({POINTS})() >= 2", polling=serve.POLL, timeout=WAIT)
    first_points, first_head = page.evaluate(POINTS), page.evaluate(HEAD)
    # the curve grows, redrawn in place, and the head's pattern with it
    page.wait_for_function(f"({POINTS})() > {first_points}", polling=serve.POLL, timeout=WAIT)
    page.wait_for_function(f"({HEAD})() !== {first_head!r}", polling=serve.POLL, timeout=WAIT)
    before = page.evaluate(POINTS)
    box = page.locator("textarea[aria-label='Sentence']")  # a control the Lab does not use: it must respond now
    box.fill("the page is not blocked")
    box.press("Control+Enter")
    settle(page)
    assert box.input_value() == "the page is not blocked"
    page.wait_for_function(f"({POINTS})() > {before}", polling=serve.POLL, timeout=WAIT)  # still training
    page.screenshot(path=os.path.join(ARTIFACTS, "lab_training.png"), full_page=True)
    page.get_by_role("button", name="Pause").click()
    settle(page)
    expect(page.get_by_text("paused at step").first).to_be_visible(timeout=WAIT)
    page.wait_for_timeout(1500)  # the snapshot the worker was writing as Pause arrived may still be drawn
    settle(page)
    held = page.evaluate(POINTS)
    page.wait_for_timeout(2500)
    assert page.evaluate(POINTS) == held


RANGES = """() => Array.from(document.querySelectorAll('.js-plotly-plot'))
    .filter(el => (((el.layout || {}).title || {}).text || '').replace(/<[^>]+>/g, '') === 'Accuracy')
    .map(el => JSON.stringify(el._fullLayout.yaxis.range))"""


def test_the_p_key_plays_and_a_and_b_share_their_accuracy_axis(server, page):
    open_app(page, server, "lab?lab_task=reverse&lab_steps=100&lab_b=positions&seed=5")
    expect(page.get_by_text("Press Play").first).to_be_visible(timeout=WAIT)
    expect(page.get_by_role("button", name="Play")).to_be_enabled(timeout=WAIT)
    settle(page)  # the run that drew the Play button has ended: its shortcut is bound (a key pressed before is lost)
    page.locator("h1").first.click()  # the keyboard on the page, not in a field
    page.keyboard.press("p")  # the Play button's shortcut
    page.wait_for_function(f"({POINTS})() >= 2", polling=serve.POLL, timeout=WAIT)
    # one reading of both charts: the live redraw replaces a chart in place, so two readings can see a third or one
    both = f"(() => {{ const r = ({RANGES})(); return r.length === 2 ? r : null; }})()"
    a, b = page.wait_for_function(both, polling=serve.POLL, timeout=WAIT).json_value()
    assert a == b and a.startswith("[0,"), (
        a,
        b,
    )  # the same 0-1 axis for the run that learns and the one that does not
    page.screenshot(path=os.path.join(ARTIFACTS, "lab_ab_axes.png"), full_page=True)


CUT = """() => {
    const wide = (el) => el.scrollWidth > el.clientWidth + 1;
    const says = (el, text) => text + ' ' + el.scrollWidth + ' > ' + el.clientWidth;
    // every cell of the Lab's tables shows its whole text: nothing wider than its box (an ellipsis or a
    // hidden overflow), no table wider than the column it is in
    const out = [];
    for (const table of document.querySelectorAll("[data-testid='stTable']")) {
        if (wide(table)) out.push(says(table, 'table'));
        for (const cell of table.querySelectorAll('th, td'))
            if (wide(cell)) out.push(says(cell, cell.textContent));
    }
    // and the presets' buttons: their titles whole ("An induction patt…" was cut)
    for (const button of document.querySelectorAll("[class*='st-key-lab_preset_'] button"))
        for (const el of [button, ...button.querySelectorAll('*')])
            if (wide(el)) out.push(says(el, button.textContent));
    return out;
}"""
TABLE_TEXT = """() => Array.from(document.querySelectorAll("[data-testid='stTable']"))
    .map(t => t.innerText).join(' ')"""
IDEAL = """() => {
    // the ideal pattern's title (and subtitle) inside its chart, not cut at the chart's edge
    const plot = Array.from(document.querySelectorAll('.js-plotly-plot'))
        .find(el => (((el.layout || {}).title || {}).text || '').replace(/<[^>]+>/g, '').startsWith('Ideal pattern'));
    if (!plot) return null;
    const box = plot.getBoundingClientRect();
    return Array.from(plot.querySelectorAll('.gtitle, .gtitle-subtitle')).map(t => {
        const r = t.getBoundingClientRect();
        return {text: t.textContent, left: r.left - box.left, right: r.right - box.left, width: box.width};
    });
}"""


def test_the_head_detector_table_and_the_ideal_title_are_read_whole(server, projector):
    """The induction preset's score is the one to read: at 1280×720 and wider, no header or score is cut."""
    page = projector
    open_app(page, server, "lab?lab_task=repeat&pos=learned&lab_b=induction&lab_steps=60")
    expect(page.get_by_role("button", name="Play")).to_be_enabled(timeout=WAIT)
    settle(page)
    page.get_by_role("button", name="Play").click()
    expect(page.locator("[data-testid='stTable']").nth(1)).to_be_visible(timeout=3 * WAIT)  # A's and B's scores
    for width in (1280, 1400, 1920):
        page.set_viewport_size({"width": width, "height": 720})
        page.wait_for_timeout(800)
        # one reading of the cut cells and the tables' text, once the tables are drawn: the live run's fragment
        # replaces them in place, and a reading between the two had no table to read (text '', nothing cut)
        read = f"(() => {{ const shown = ({TABLE_TEXT})(); return shown ? [({CUT})(), shown] : null; }})()"
        cut, shown = page.wait_for_function(read, polling=serve.POLL, timeout=WAIT).json_value()
        assert cut == [], (width, cut)
        assert "induction (after the earlier occurrence)" in shown and "previous token (t − 1)" in shown
        titles = page.evaluate(IDEAL)
        assert titles and "repeat a segment (next token, causal)" in " ".join(x["text"] for x in titles), titles
        for x in titles:
            assert x["left"] >= 0 and x["right"] <= x["width"] + 1, (width, x)
    page.screenshot(path=os.path.join(ARTIFACTS, "lab_scores_1920.png"), full_page=True)

"""The Lab in Chromium: Play trains, the curves and heads update, other controls stay usable, Pause holds."""

import os

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
    page.wait_for_function(f"({POINTS})() >= 2", timeout=WAIT)
    first_points, first_head = page.evaluate(POINTS), page.evaluate(HEAD)
    page.wait_for_function(f"({POINTS})() > {first_points}", timeout=WAIT)  # the curve grows, redrawn in place
    page.wait_for_function(f"({HEAD})() !== {first_head!r}", timeout=WAIT)  # and the head's pattern with it
    before = page.evaluate(POINTS)
    box = page.locator("textarea[aria-label='Sentence']")  # a control the Lab does not use: it must respond now
    box.fill("the page is not blocked")
    box.press("Control+Enter")
    settle(page)
    assert box.input_value() == "the page is not blocked"
    page.wait_for_function(f"({POINTS})() > {before}", timeout=WAIT)  # still training
    page.screenshot(path=os.path.join(ARTIFACTS, "lab_training.png"), full_page=True)
    page.get_by_role("button", name="Pause").click()
    settle(page)
    expect(page.get_by_text("paused at step").first).to_be_visible(timeout=WAIT)
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
    page.wait_for_function(f"({POINTS})() >= 2", timeout=WAIT)
    page.wait_for_function(f"({RANGES})().length === 2", timeout=WAIT)
    a, b = page.evaluate(RANGES)
    assert a == b and a.startswith("[0,"), (
        a,
        b,
    )  # the same 0-1 axis for the run that learns and the one that does not
    page.screenshot(path=os.path.join(ARTIFACTS, "lab_ab_axes.png"), full_page=True)

"""A tab's first run of Next token, Explain, Real model, Tutorial, Step by step and Variants draws the first screen
before the sections under it (explorer/controls/later.py): when the page's first chart is drawn, no chart of a lower
section is on the page yet, its placeholder is; the sections then come without the learner doing anything; and a
later run of the page in that tab draws them in the same run as the rest, with no placeholder."""

import pytest
import serve
from playwright.sync_api import expect
from test_browser import LATER, WAIT, settle

from explorer.controls import later

# Installed before the app's scripts: at the first Plotly chart drawn, the keys of the charts on the page and of the
# placeholders there; from the moment ``window.__watch`` is set, whether a placeholder is ever drawn again.
MARKS = """(() => {
  window.__first = null; window.__sawLater = false;
  new MutationObserver(() => {
    const later = document.querySelector("LATER");
    if (window.__watch && later) window.__sawLater = true;
    if (window.__first || !document.querySelector("[data-testid='stPlotlyChart'] svg.main-svg")) return;
    const keys = [...document.querySelectorAll("[data-testid='stElementContainer'][class*='st-key-']")]
      .filter(e => e.querySelector("[data-testid='stPlotlyChart']"))
      .map(e => [...e.classList].find(c => c.startsWith('st-key-')).slice(7));
    const later_keys = [...document.querySelectorAll("LATER")]
      .map(e => [...e.classList].find(c => c.startsWith('st-key-')).slice(7));
    window.__first = {keys, later: later_keys};
  }).observe(document, {subtree: true, childList: true});
})();""".replace("LATER", LATER)

PAGES = {  # a page: its first chart, and charts of the sections under it
    "next_token": ("nt_bars", ["nt_query_row", "nt_lens_grid", "nt_eff_map", "nt_copy_map"]),
    "explain": ("ex_overview", ["ex_layers"]),
    "model": ("rm_overview", ["rm_lines", "rm_chart_weights"]),
    "tutorial": ("tut_bars", ["tut_heads", "tut_cross"]),
    "steps": ("chart_weights", ["chart_focus"]),
    "variants": ("var_w_full", ["var_p_sliding_window", "var_curve_chart"]),
}
# The placeholders at the first chart drawn: the sections under the first screen's, and a page's other parts' (a tab
# not shown first: Explain's pair of sentences, whose five charts held its overview back once their jobs were done)
PLACEHOLDERS = {"explain": [later.KEY, f"{later.KEY}-pair"]}


def first_screen_then_the_rest(page, url: str, path: str) -> None:
    first, lower = PAGES[path]
    page.add_init_script(MARKS)
    page.goto(f"{url}/{path}")
    page.wait_for_function("() => window.__first", polling=serve.POLL, timeout=WAIT)
    seen = page.evaluate("window.__first")
    assert first in seen["keys"], seen
    assert sorted(seen["later"]) == sorted(PLACEHOLDERS.get(path, [later.KEY])), seen
    assert not set(seen["keys"]) & set(lower), seen
    for key in lower:  # then the sections come on their own
        expect(page.locator(f".st-key-{key} svg.main-svg").first).to_be_attached(timeout=WAIT)
    expect(page.locator(LATER)).to_have_count(0, timeout=WAIT)
    settle(page)


@pytest.mark.parametrize("path", ["explain", "model", "tutorial", "steps", "variants"])
def test_the_first_screen_is_drawn_before_the_sections_under_it(server, page, path):
    first_screen_then_the_rest(page, server, path)


def test_a_later_run_draws_every_section_at_once(server, page):
    first_screen_then_the_rest(page, server, "next_token")
    page.evaluate("window.__watch = true")  # a later run in this tab: everything in one run, no placeholder
    page.get_by_label("Sampling temperature").fill("0.5")
    page.get_by_label("Sampling temperature").press("Enter")
    settle(page)
    for key in PAGES["next_token"][1]:
        expect(page.locator(f".st-key-{key} svg.main-svg").first).to_be_attached(timeout=WAIT)
    assert "temp=0.5" in page.url
    assert not page.evaluate("window.__sawLater")


def test_a_lost_answer_of_the_beacon_is_asked_again(server, page):
    """The beacon's answer dropped on its way to the server (as a click's rerun or a dropped connection can lose it):
    the placeholder stays, so the beacon asks again once the page is at rest, and the sections come all the same."""
    dropped = []

    def between(ws):  # the page's websocket, passed through but for the beacon's first answer
        to_server = ws.connect_to_server()

        def from_page(message):
            if isinstance(message, bytes) and b"first_screen_steps" in message and not dropped:
                dropped.append(len(message))
                return
            to_server.send(message)

        ws.on_message(from_page)

    page.route_web_socket("**/_stcore/stream", between)
    page.goto(f"{server}/steps")
    for key in PAGES["steps"][1]:
        expect(page.locator(f".st-key-{key} svg.main-svg").first).to_be_attached(timeout=WAIT)
    expect(page.locator(LATER)).to_have_count(0, timeout=WAIT)
    assert len(dropped) == 1, dropped  # the first answer never reached the server


def test_a_click_that_changes_the_address_is_not_undone_by_the_beacon(server, page):
    """The tour's Next (the same page, another lesson in the address) clicked before the first chart is drawn, its
    message slow to reach the server: the beacon must not answer in between, or the server folds the click's run and
    the answer into one run at the old address and the lesson never changes (seen once in a whole-suite run). Plotly's
    script is held, so the beacon's answer is due at ``later.WAIT_MS``; the click's message is held until the beacon
    has answered or ``later.WAIT_MS`` + 1.5 s have passed, then sent first, as the browser sent it."""
    from explorer.classroom.tour import TOUR

    charts, held = [], {"click": None, "after": [], "open": False}

    def between(ws):  # the page's websocket: the click's message and anything after it held
        to_server = ws.connect_to_server()

        def from_page(message):
            if held["open"]:
                to_server.send(message)
            elif held["click"] is not None:
                held["after"].append(message)
            elif isinstance(message, bytes) and b"tour=scores" in message:
                held["click"] = message
            else:
                to_server.send(message)

        held["send"] = to_server.send
        ws.on_message(from_page)

    page.route_web_socket("**/_stcore/stream", between)
    page.route("**/PlotlyChart.*.js", lambda route: charts.append(route))  # Plotly's script held: no chart drawn
    page.goto(f"{server}/steps?tour=qkv&step=st_qkv")
    expect(page.get_by_text(f"Lesson 1 of {len(TOUR)}").first).to_be_visible(timeout=WAIT)
    page.get_by_role("link", name="Next: Scores: a query against every key").click()
    due = later.WAIT_MS + 1500
    for _ in range(due // 100):  # until the beacon answers after the click, or the wait is over
        if held["after"]:
            break
        page.wait_for_timeout(100)
    answered_between = bool(held["after"])
    assert held["click"] is not None, "the click's message never came"
    held["open"] = True  # what comes after goes straight through
    for message in [held["click"], *held["after"]]:
        held["send"](message)
    for route in charts:
        route.continue_()
    page.unroute("**/PlotlyChart.*.js")
    expect(page.get_by_text(f"Lesson 2 of {len(TOUR)}").first).to_be_visible(timeout=WAIT)
    assert "tour=scores" in page.url, page.url
    expect(page.locator("[data-testid='stPlotlyChart'] svg.main-svg").first).to_be_attached(timeout=WAIT)
    expect(page.locator(LATER)).to_have_count(0, timeout=WAIT)  # the sections came all the same
    assert not answered_between  # the beacon waited for the click's run


def test_a_click_that_runs_nothing_leaves_the_beacon_to_answer_all_the_same(server, page):
    """A click before the first chart that starts no run (on the page's title): no run ever follows it, so the
    beacon answers once ``later.SETTLE_MS`` have passed, and the sections come without the learner doing more."""
    charts = []
    page.route("**/PlotlyChart.*.js", lambda route: charts.append(route))  # no chart drawn until the click is made
    page.goto(f"{server}/steps")
    title = page.locator("[data-testid='stMain'] h1").first
    expect(title).to_be_visible(timeout=WAIT)
    title.click()
    for route in charts:
        route.continue_()
    page.unroute("**/PlotlyChart.*.js")
    expect(page.locator("[data-testid='stPlotlyChart'] svg.main-svg").first).to_be_attached(timeout=WAIT)
    expect(page.locator(LATER)).to_have_count(0, timeout=WAIT)

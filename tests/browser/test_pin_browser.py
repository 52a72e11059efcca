"""Pin as A in Chromium: pin, change the heads, see A and B and the words; the link opened in a new page shows the
same comparison (the numbers the browser holds, read from both pages' charts)."""

import os
import re

from conftest import ARTIFACTS
from playwright.sync_api import expect
from test_browser import WAIT, open_app, settle

PLOT = "[data-testid='stPlotlyChart']"
# A's, B's and B − A's chart by its title, and the line of words, in each language
TITLES = {"en": ("A (pinned)", "B (now)", "B − A"), "zh": ("A（固定）", "B（当前）", "B − A")}
MOVED = {"en": "moved most", "zh": "变化最大"}
HEADS = {"en": "Heads", "zh": "头数"}
PIN = {"en": "Pin as A", "zh": "固定为 A"}


def _z(page, title: str) -> list:
    """The matrix the browser drew under the chart titled ``title`` (plotly's own data)."""
    chart = page.locator(PLOT, has_text=title).first
    expect(chart).to_be_visible(timeout=WAIT)
    return chart.locator(".js-plotly-plot").evaluate("(el) => el.data[0].z")


def _comparison(page, lang: str) -> list:
    return [_z(page, title) for title in TITLES[lang]]


def test_pin_change_the_heads_and_the_link_opens_the_same_comparison(server, page):
    for lang in ("en", "zh"):
        open_app(page, server, f"steps?step=st_softmax&lang={lang}")
        page.get_by_role("button", name=PIN[lang]).click()
        page.wait_for_url(re.compile(r"[?&]a="), timeout=WAIT)  # A is in the link
        settle(page)
        heads = page.get_by_test_id("stSidebar").locator(f"input[aria-label='{HEADS[lang]}']")
        heads.fill("4")
        heads.press("Enter")
        settle(page)
        expect(page.get_by_text(MOVED[lang]).first).to_be_visible(timeout=WAIT)  # what changed most, in words
        shown = _comparison(page, lang)
        a, b, diff = shown
        assert len(a) == len(b) == len(diff) and a != b  # four heads changed head 0's weights
        assert all(abs(d - (y - x)) < 1e-6 for ra, rb, rd in zip(a, b, diff) for x, y, d in zip(ra, rb, rd))
        page.screenshot(path=os.path.join(ARTIFACTS, f"pin_heads_{lang}.png"), full_page=True)
        link = page.url
        assert "heads=4" in link and "a=" in link
        other = page.context.new_page()  # the link sent to a student: a new session
        open_app(other, server, link[len(server) + 1 :])
        settle(other)
        expect(other.get_by_text(MOVED[lang]).first).to_be_visible(timeout=WAIT)
        assert _comparison(other, lang) == shown
        other.close()

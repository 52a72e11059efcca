"""The light and the dark theme in the browser tests: Streamlit follows the system preference, which Playwright
can change on an open page, so a page drawn once is checked in both themes."""

import serve
from playwright.sync_api import expect

BACKGROUND = "getComputedStyle(document.querySelector('[data-testid=stApp]')).backgroundColor"
QUIET = """async (cap) => new Promise((done) => {  // no change to the page for 300 ms (at most cap ms in all)
  let timer;
  const observer = new MutationObserver(() => { clearTimeout(timer); timer = setTimeout(end, 300); });
  const end = () => { observer.disconnect(); clearTimeout(last); done(); };
  const last = setTimeout(end, cap);
  observer.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  timer = setTimeout(end, 300);
})"""


def luminance(css: str) -> float:
    """Relative luminance (WCAG 2) of a CSS rgb() colour."""
    r, g, b = (int(float(v)) / 255 for v in css[css.index("(") + 1 : css.index(")")].split(",")[:3])
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def switch_theme(page, to: str) -> None:
    """The system preference turned to ``to`` ("light" or "dark") on the open page, drawn in the other theme:
    Streamlit, which follows it, redraws in that theme without a reload (no new script run). Waits until the app's
    background has changed and the page has stopped changing (the charts redrawn in the new theme)."""
    assert to in ("light", "dark"), to
    before = page.evaluate(BACKGROUND)
    was_light = luminance(before) > 0.8
    assert was_light == (to == "dark"), f"the page was not drawn in the other theme: background {before}"
    page.emulate_media(color_scheme=to)
    page.wait_for_function(f"{BACKGROUND} !== {before!r}", polling=serve.POLL, timeout=30_000)
    expect(page.locator("[data-testid='stStatusWidget']")).to_have_count(0, timeout=120_000)
    page.evaluate(QUIET, 1500)
    after = page.evaluate(BACKGROUND)
    drawn = luminance(after) < 0.05 if to == "dark" else luminance(after) > 0.8
    assert drawn, f"the {to} theme was not drawn: background {after}"

"""Browser latency: from a change in the sidebar to the last chart updated, in real Chromium.

Starts ``streamlit run app.py`` on 127.0.0.1 and a free port, opens the Step-by-step page at
the defaults (and then the Real model page) in Debian's Chromium (through Playwright) and, for
each kind of change, measures in the page's own clock (performance.now) the time from the key
press to the moment when the script run has finished, no element is stale any more and every
chart on the page has been redrawn with new data. Prints the median and the range over the repeats.

    python benchmarks/browser_latency.py [--repeats 10]
"""

import argparse
import os
import shutil
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "browser"))
from serve import CHROMIUM_ARGS, start_server

# Each plotly chart's data, as drawn; "done" once the run is over, nothing is stale and as many
# charts as this kind of change redraws (counted after a warm-up change) show new data.
DRAWN = (
    "Array.from(document.querySelectorAll('.js-plotly-plot'))"
    ".map(el => JSON.stringify((el.data || []).map(t => [t.z, t.y, t.text])))"
)
N_CHANGED = "now.filter((s, i) => s !== before[i]).length + Math.max(0, now.length - before.length)"
SIGNATURE = f"() => {DRAWN}"
CHANGED = f"(before) => {{ const now = {DRAWN}; return {N_CHANGED}; }}"
DONE = f"""([before, expected]) => {{
    if (document.querySelector("[data-testid='stStatusWidget']")) return false;
    if (document.querySelector("[data-stale='true']")) return false;
    const now = {DRAWN};
    return {N_CHANGED} >= expected;
}}"""


def redrawn(page, act, prepare=lambda: None) -> int:
    """How many charts a change of this kind redraws (given time to settle)."""
    page.wait_for_timeout(400)
    prepare()
    before = page.evaluate(SIGNATURE)
    act()
    page.wait_for_timeout(3000)
    return page.evaluate(CHANGED, before)


def timed(page, act, expected: int, prepare=lambda: None) -> float:
    """ms from ``act()`` to the last of the ``expected`` charts redrawn with new data, after a finished run
    (``prepare()``, such as opening a select box's list, happens before the clock starts)."""
    page.wait_for_timeout(400)
    prepare()
    before = page.evaluate(SIGNATURE)
    t0 = page.evaluate("performance.now()")
    act()
    page.wait_for_function(DONE, arg=[before, expected], polling="raf", timeout=30_000)
    return page.evaluate("performance.now()") - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    proc, url = start_server()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=args.chromium, headless=True, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{url}/steps?dropout_on=true")
            page.wait_for_selector(".js-plotly-plot", timeout=60_000)
            page.wait_for_timeout(2000)
            slider = page.get_by_role("slider").first
            d_v = page.locator("input[aria-label='d_v']")
            box = page.locator("textarea[aria-label='Sentence']")
            sentences = ["the cat sat on the mat", "Life is short, eat dessert first"]
            dims = ["20", "28"]
            changes = {
                "dropout slider (one step)": lambda i: slider.press("ArrowRight" if i % 2 == 0 else "ArrowLeft"),
                "d_v number input": lambda i: (d_v.fill(dims[i % 2]), d_v.press("Enter")),
                "sentence": lambda i: (box.fill(sentences[i % 2]), box.press("Control+Enter")),
            }
            print(
                f"Step by step page at the defaults (+ dropout on), {args.repeats} changes each; "
                f"time from the key press to the last chart redrawn:"
            )
            choices = {  # a select box: its list opened first (not timed), then the option clicked
                "mask (select box)": ("Mask", ["causal", "none"]),
                "attention variant (select box)": ("Attention variant", ["Linear (elu+1)", "Full (materialised)"]),
            }
            for name, (label, options) in choices.items():
                box_ = page.get_by_test_id("stSidebar").locator(f"input[aria-label='{label}']")

                def prepare(box_=box_):
                    box_.click()
                    box_.press("ArrowDown")

                changes[name] = (
                    lambda i, options=options: page.get_by_role("option", name=options[i % 2], exact=True).click(),
                    prepare,
                )
            for name, change in changes.items():
                act, prepare = change if isinstance(change, tuple) else (change, lambda: None)
                expected = redrawn(page, lambda act=act: act(0), prepare)  # warm-up, and how many charts it redraws
                times = [
                    timed(page, lambda i=i, act=act: act(i), expected, prepare) for i in range(1, args.repeats + 1)
                ]
                print(
                    f"  {name:<28} median {statistics.median(times):6.0f} ms   "
                    f"min {min(times):6.0f}   max {max(times):6.0f}"
                    f"   ({expected} charts redrawn)"
                )
            page.goto(f"{url}/model?sentence=The+animal+didn%27t+cross+the+street+because+it+was+too+tired")
            page.wait_for_selector(".js-plotly-plot", timeout=60_000)
            page.wait_for_timeout(2000)
            layer = page.locator("input[aria-label='Layer']")
            layers = ["1", "2", "3", "4", "5", "0"]
            act = lambda i: (layer.fill(layers[i % 6]), layer.press("Enter"))
            expected = redrawn(page, lambda: act(0))
            times = [timed(page, lambda i=i: act(i), expected) for i in range(1, args.repeats + 1)]
            print(
                f"Real model page (14 pieces), layer change (a fragment rerun):\n  {'layer number input':<28} median "
                f"{statistics.median(times):6.0f} ms   min {min(times):6.0f}   max {max(times):6.0f}   "
                f"({expected} charts redrawn)"
            )
            browser.close()
    finally:
        proc.terminate()


if __name__ == "__main__":
    main()

"""The README's screenshots, taken from a running server in Debian's Chromium, so they are refreshed, not hand-taken.

    python scripts/screenshots.py                      # starts its own `streamlit run app.py`, writes docs/images/
    python scripts/screenshots.py --url http://host:8501 --only steps_en,lab_en

Each shot is the first screen of a page at 1280×800 (what a projector shows), scaled to 960 pixels wide and
stored as a palette PNG, kept under --max-kb (150 KB by default; a larger one is an error, not a silent keep).
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "browser"))

import serve  # the browser tests' server starter

SENTENCE = "The+animal+didn%27t+cross+the+street+because+it+was+too+tired"
# name -> (path and query, what to do on the page before the shot)
SHOTS = {
    "steps_en": ("steps?sentence=Life+is+short%2C+eat+dessert+first&heads=2&step=st_softmax", None),
    "multihead_en": ("multihead?heads=4", None),
    "model_en": (f"model?sentence={SENTENCE}&rm_layer=4&rm_head=9", None),
    "inside_en": (f"inside?sentence={SENTENCE}", None),
    "explain_en": ("explain?sentence=I+like+this+film+very+much", None),
    "lab_en": ("lab?lab_task=reverse&lab_steps=600&seed=5&pos=sinusoidal", "play"),
    "complexity_en": ("complexity", None),
    "next_token_en": ("next_token?prompt=The+meaning+of+life+is&seed=7", None),
    "vision_en": ("vision?vi_model=swin&vi_patch=2&vi_window=2&vi_compare=1", "play_vision"),
    "steps_zh": ("steps?sentence=我爱注意力机制&lang=zh&heads=2", None),
}
WIDTH, HEIGHT, SCALED = 1280, 800, 960
WAIT = 180_000


def drawn(page, url: str) -> None:
    """Open a page and wait until its script run and any background work it shows have finished."""
    from playwright.sync_api import expect

    page.goto(url)
    page.wait_for_selector("h1", timeout=WAIT)
    page.wait_for_timeout(500)
    for _ in range(2):  # a job's result redraws the page once more
        expect(page.locator("[data-testid='stStatusWidget']")).to_have_count(0, timeout=WAIT)
        expect(page.locator("[data-testid='stProgress']")).to_have_count(0, timeout=WAIT)
        page.wait_for_timeout(1000)


def play(page) -> None:
    """The Lab: press Play and let it train until the run has ended."""
    from playwright.sync_api import expect

    page.get_by_role("button", name="Play").click()
    expect(page.get_by_text("done:").first).to_be_visible(timeout=WAIT)
    page.wait_for_timeout(1000)


def play_vision(page) -> None:
    """The Vision page: press Play, let both runs (ViT and Swin, compared) train to their end, and show the section
    with their curves and the heads, not the page's first screen."""
    from playwright.sync_api import expect

    page.get_by_role("button", name="Play").click()
    expect(page.get_by_text("done:")).to_have_count(2, timeout=WAIT)
    page.wait_for_timeout(1500)
    page.get_by_role("heading", name="Trained on the digits").evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(1000)


def small_png(raw: bytes, max_kb: int) -> bytes:
    """The screenshot scaled to SCALED pixels wide as a palette PNG; an error if it is still over max_kb."""
    from PIL import Image

    image = Image.open(io.BytesIO(raw)).convert("RGB")
    image = image.resize((SCALED, round(image.height * SCALED / image.width)), Image.LANCZOS)
    for colours in (256, 128, 64):
        out = io.BytesIO()
        image.quantize(colours, method=Image.Quantize.MEDIANCUT).save(out, "PNG", optimize=True)
        if out.tell() <= max_kb * 1024:
            return out.getvalue()
    raise SystemExit(f"a screenshot is {out.tell() // 1024} KB even at 64 colours (limit {max_kb} KB)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a running server (default: start one on a free port)")
    parser.add_argument("--out", default=os.path.join(ROOT, "docs", "images"))
    parser.add_argument("--only", help="comma-separated shot names (default: all): " + ",".join(SHOTS))
    parser.add_argument("--max-kb", type=int, default=150)
    chromium = os.environ.get("CHROMIUM", shutil.which("chromium") or "/usr/bin/chromium")
    parser.add_argument("--chromium", default=chromium)
    args = parser.parse_args(argv)
    names = args.only.split(",") if args.only else list(SHOTS)
    unknown = [n for n in names if n not in SHOTS]
    if unknown:
        parser.error(f"unknown shots: {', '.join(unknown)}")
    os.makedirs(args.out, exist_ok=True)
    proc, url = (None, args.url.rstrip("/")) if args.url else serve.start_server()
    from playwright.sync_api import sync_playwright

    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=args.chromium, headless=True, args=serve.CHROMIUM_ARGS)
            page = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT}).new_page()
            for name in names:
                path, action = SHOTS[name]
                drawn(page, f"{url}/{path}")
                if action == "play":
                    play(page)
                elif action == "play_vision":
                    play_vision(page)
                data = small_png(page.screenshot(), args.max_kb)
                with open(os.path.join(args.out, f"{name}.png"), "wb") as f:
                    f.write(data)
                print(f"{name}.png  {len(data) // 1024} KB  /{path}")
            browser.close()
    finally:
        if proc is not None:
            serve.stop_server(proc)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Real browser flows against `streamlit run app.py` on 127.0.0.1 (Debian Chromium via Playwright)."""

import os

import pytest
import serve
from conftest import ARTIFACTS
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect
from theme import switch_theme

from explorer.classroom.tour import TOUR
from explorer.controls import later

WAIT = 60_000


def open_app(page, url, path="steps"):
    page.goto(f"{url}/{path}")
    page.wait_for_selector(".stPlotlyChart, [data-testid='stPlotlyChart'], h1", timeout=WAIT)
    expect(page.locator("[data-testid='stStatusWidget']")).to_have_count(0, timeout=WAIT)
    # A deep link on a fresh server must not meet the legacy pages/ path's "Page not found"
    assert page.get_by_text("Page not found").count() == 0


SCRIPT_STATE = "document.querySelector(\"[data-testid='stApp']\")?.dataset.testScriptState"
# explorer/controls/later.py: drawn once the first chart is on screen (a page's other parts: KEY-part)
LATER = f"[class*='st-key-{later.KEY}']"


def settle(page, start_ms: int = 300):
    """Wait until the script run that the last change started has finished. The app's own script state (its
    ``data-test-script-state``) leaves "notRunning" when the server starts the run: seen within ``start_ms``, the wait
    ends with the run; a run not seen starting by then (none asked for, or one over before a frame was drawn) costs
    ``start_ms``, the fixed wait this used to be. The status widget alone cannot say it: it shows a run only once the
    run has lasted 500 ms."""
    try:
        page.wait_for_function(f"() => {SCRIPT_STATE} !== 'notRunning'", polling=serve.POLL, timeout=start_ms)
    except PlaywrightTimeout:
        pass
    page.wait_for_function(f"() => {SCRIPT_STATE} === 'notRunning'", polling=serve.POLL, timeout=WAIT)
    expect(page.locator("[data-testid='stStatusWidget']")).to_have_count(0, timeout=WAIT)
    expect(page.locator(LATER)).to_have_count(0, timeout=WAIT)  # a tab's first run: the sections below its chart


def first_sentence_change_sticks(page, sentence: str, last_label: str) -> None:
    """Type a sentence as the first change after a fresh start; the charts follow and it stays."""
    box = page.locator("textarea[aria-label='Sentence']")
    box.fill(sentence)
    box.press("Control+Enter")
    settle(page)
    expect(page.locator("svg text", has_text=last_label).first).to_be_visible(timeout=WAIT)
    page.wait_for_timeout(1500)  # a lost first change would revert here
    assert box.input_value() == sentence
    assert "sentence=" + sentence.replace(" ", "+") in page.url


def test_first_change_after_a_fresh_start_sticks_and_updates_the_charts(fresh_server, page):
    server = fresh_server
    open_app(page, server)
    expect(page.locator("svg text", has_text="4 dessert").first).to_be_visible(timeout=WAIT)
    first_sentence_change_sticks(page, "the cat sat on a mat", "5 mat")
    d_v = page.locator("input[aria-label='d_v']")
    d_v.fill("5")
    d_v.press("Enter")
    settle(page)
    page.locator("[data-testid='stExpander'] summary", has_text="The code (PyTorch)").first.click()  # sent once opened
    settle(page)
    expect(page.get_by_text("# (6, 5)").first).to_be_visible(timeout=WAIT)
    assert page.locator("textarea[aria-label='Sentence']").input_value() == "the cat sat on a mat"
    os.makedirs(ARTIFACTS, exist_ok=True)
    page.screenshot(path=os.path.join(ARTIFACTS, "step_by_step.png"), full_page=True)


def test_first_change_after_a_fresh_start_on_a_deep_link_sticks(fresh_server, page):
    server = fresh_server
    """A fresh server's first run of /multihead takes Streamlit's legacy pages/ path (see explorer/boot.py)."""
    open_app(page, server, "multihead")
    expect(page.locator("h1", has_text="Multi-head")).to_be_visible(timeout=WAIT)
    first_sentence_change_sticks(page, "one two three four", "3 four")
    assert "/multihead" in page.url
    expect(page.locator("h1", has_text="Multi-head")).to_be_visible()


def test_the_root_is_a_start_page_whose_links_open_each_page(server, page):
    open_app(page, server, "")
    expect(page.locator("h1", has_text="Attention Explorer").last).to_be_visible(timeout=WAIT)
    page.get_by_role("link", name="Step by step").last.click()
    expect(page.locator("h1", has_text="Step by step")).to_be_visible(timeout=WAIT)
    assert page.url.rstrip("/").endswith("/steps")
    expect(page.locator("svg text", has_text="4 dessert").first).to_be_visible(timeout=WAIT)


def test_script_typed_as_the_sentence_is_shown_as_text(server, page):
    open_app(page, server)
    payload = "<script>window.__pwned = 1</script><img src=x onerror=window.__pwned=2>"
    box = page.locator("textarea[aria-label='Sentence']")
    box.fill(payload)
    box.press("Control+Enter")
    settle(page)
    expect(page.get_by_test_id("stText").filter(has_text=payload)).to_be_visible(timeout=WAIT)
    assert page.evaluate("window.__pwned === undefined")
    page.screenshot(path=os.path.join(ARTIFACTS, "script_as_text.png"), full_page=True)


def test_shared_link_opens_the_same_view_in_chinese(server, page):
    open_app(page, server, "steps?sentence=one+two+three&mask=causal&lang=zh&heads=2")
    expect(page.locator("h1", has_text="逐步计算")).to_be_visible(timeout=WAIT)
    expect(page.locator("svg text", has_text="2 three").first).to_be_visible(timeout=WAIT)
    page.screenshot(path=os.path.join(ARTIFACTS, "shared_link_zh.png"), full_page=True)


def test_choices_survive_language_switches_and_the_focus_a_new_sentence(server, page):
    """The browser holds a choice's label; a switch relabels it, and the value must not fall back."""
    open_app(page, server, "steps?mask=causal&step=st_mask&focus=4")
    sidebar = page.get_by_test_id("stSidebar")
    zh, en = ("简体中文", "掩码", "因果", "4 掩码"), ("English", "Mask", "causal", "4 Mask")
    for language, title, mask, step in (zh, en, zh, en, zh):  # a reset widget showed in 1 of 2 runs of 4
        sidebar.get_by_text(language, exact=True).click()
        settle(page)
        expect(sidebar.locator(f"input[aria-label='{title}']")).to_have_value(mask, timeout=WAIT)
        assert "mask=causal" in page.url and "step=st_mask" in page.url and "focus=4" in page.url
        expect(page.get_by_role("radio", name=step, exact=True)).to_be_checked(timeout=WAIT)
        page.wait_for_timeout(300)  # a widget the browser reset would be sent back by now
        for name in ("sentence=", "source=", "d_model=", "d_k=", "temperature="):  # no default moved
            assert name not in page.url, page.url
    box = page.locator("textarea[aria-label='句子']")
    box.fill("one two three")
    box.press("Control+Enter")
    settle(page)
    page.wait_for_timeout(1000)
    assert "focus=2" in page.url  # clamped to the last token of the shorter sentence
    assert "mask=causal" in page.url


def test_linear_attention_picked_in_the_sidebar_goes_through_the_steps(server, page):
    open_app(page, server)
    sidebar = page.get_by_test_id("stSidebar")
    expect(page.locator("svg text", has_text="4 dessert").first).to_be_visible(timeout=WAIT)
    box = sidebar.locator("input[aria-label='Attention variant']")
    box.click()
    box.press("ArrowDown")  # opens the list
    option = page.get_by_role("option", name="Linear (elu+1)", exact=True)
    expect(option).to_be_visible(timeout=WAIT)
    option.click()
    settle(page)
    assert "kernel=linear_elu" in page.url
    page.get_by_text("Feature maps φ(Q), φ(K)").first.click()
    settle(page)
    expect(page.locator("svg text", has_text="φ(Q) (6, 24)").first).to_be_visible(timeout=WAIT)
    expect(page.locator("svg text", has_text="φ(K) (6, 24)").first).to_be_visible(timeout=WAIT)
    page.screenshot(path=os.path.join(ARTIFACTS, "variant_linear_steps.png"), full_page=True)
    page.get_by_text("State S and normaliser z").first.click()
    settle(page)
    expect(page.locator("svg text", has_text="S = Σ φ(k_j) v_jᵀ (24, 28)").first).to_be_visible(timeout=WAIT)


@pytest.mark.parametrize(
    "path,text",
    [
        ("multihead", "Concatenated heads"),
        ("cross", "Who attends to whom"),
        ("tutorial", "'is' attends most to 'dessert' (0.4917)."),
        ("variants", "Distance from full attention"),
    ],
)
def test_each_page_renders_its_charts(server, page, path, text):
    open_app(page, server, path)
    if path in ("multihead", "cross"):
        expect(page.locator("svg text", has_text=text).first).to_be_visible(timeout=WAIT)
    elif path == "variants":
        expect(page.get_by_text("max |Δ output|").first).to_be_visible(timeout=WAIT)
    else:
        expect(page.get_by_text(text).first).to_be_visible(timeout=WAIT)
    expect(page.locator(".stPlotlyChart, [data-testid='stPlotlyChart']").first).to_be_attached(timeout=WAIT)
    page.screenshot(path=os.path.join(ARTIFACTS, f"{path}.png"), full_page=True)


def test_real_model_page_takes_a_head_apart(server, page):
    open_app(page, server, "model?sentence=The+animal+didn%27t+cross+the+street+because+it+was+too+tired")
    expect(page.get_by_text("matches the model's own attention probabilities").first).to_be_visible(timeout=WAIT)
    expect(page.locator("svg text", has_text="Layer 0, head 0").first).to_be_visible(timeout=WAIT)
    layer = page.locator("input[aria-label='Layer']")
    layer.fill("4")
    layer.press("Enter")
    settle(page)
    expect(page.locator("svg text", has_text="Layer 4, head 0").first).to_be_visible(timeout=WAIT)
    expect(page.get_by_text("matches the model's own attention probabilities").first).to_be_visible(timeout=WAIT)
    assert "rm_layer=4" in page.url
    expect(page.locator("svg text", has_text="3 didn").first).to_be_attached(timeout=WAIT)
    page.screenshot(path=os.path.join(ARTIFACTS, "real_model.png"), full_page=True)


def test_dark_preference_gives_a_dark_app_and_dark_charts(server, browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000}, color_scheme="dark")
    page = ctx.new_page()
    try:
        open_app(page, server)
        expect(page.locator("svg text", has_text="4 dessert").first).to_be_visible(timeout=WAIT)

        def brightness(css: str) -> float:
            rgb = [float(v) for v in css[css.index("(") + 1 : css.index(")")].split(",")[:3]]
            return sum(rgb) / 3

        app_bg = page.evaluate("getComputedStyle(document.querySelector('.stApp')).backgroundColor")
        tick = page.evaluate("getComputedStyle(document.querySelector('.js-plotly-plot .xtick text')).fill")
        assert brightness(app_bg) < 60, app_bg  # dark background
        assert brightness(tick) > 150, tick  # light axis labels on it
        page.screenshot(path=os.path.join(ARTIFACTS, "dark.png"))
    finally:
        ctx.close()


def test_a_lesson_link_hides_and_locks_settings_on_a_fresh_server(fresh_server, page):
    server = fresh_server
    open_app(page, server, "multihead?hide=score,mask&lock=heads&mask=causal&heads=2&lang=zh")
    sidebar = page.get_by_test_id("stSidebar")
    expect(page.locator("h1", has_text="多头注意力")).to_be_visible(timeout=WAIT)
    expect(sidebar.locator("input[aria-label='头数']")).to_be_disabled(timeout=WAIT)
    assert sidebar.locator("input[aria-label='掩码']").count() == 0
    assert sidebar.locator("input[aria-label='打分函数']").count() == 0
    d_model = sidebar.locator("input[aria-label='d_model（嵌入维度）']")
    d_model.fill("32")
    d_model.press("Enter")
    settle(page)
    assert "mask=causal" in page.url and "hide=score%2Cmask" in page.url.replace(",", "%2C")
    page.screenshot(path=os.path.join(ARTIFACTS, "lesson_link_zh.png"), full_page=True)


def test_a_newcomer_follows_the_tour_from_the_start_page(server, page):
    open_app(page, server, "")
    page.get_by_role("link", name="1. Why Q, K and V").click()
    expect(page.get_by_text(f"Lesson 1 of {len(TOUR)}").first).to_be_visible(timeout=WAIT)
    expect(page.locator("h1", has_text="Step by step")).to_be_visible(timeout=WAIT)
    assert "tour=qkv" in page.url and "step=st_qkv" in page.url
    expect(page.get_by_test_id("stSidebar").locator("input[aria-label='d_k']")).to_have_value("24", timeout=WAIT)
    page.get_by_role("link", name="Next: Scores: a query against every key").click()
    expect(page.get_by_text(f"Lesson 2 of {len(TOUR)}").first).to_be_visible(timeout=WAIT)
    page.get_by_role("link", name="Next: Why divide by √d_k").click()
    expect(page.get_by_text(f"Lesson 3 of {len(TOUR)}").first).to_be_visible(timeout=WAIT)
    expect(page.get_by_test_id("stSidebar").locator("input[aria-label='d_k']")).to_be_disabled(timeout=WAIT)
    assert "d_k=512" in page.url
    page.screenshot(path=os.path.join(ARTIFACTS, "tour_lesson_3.png"), full_page=True)


def test_a_students_prediction_reaches_the_teachers_live_tally(server, browser):
    """Two browser sessions on one server: the teacher's histogram changes without a reload."""
    lesson = "steps?predict=true&lesson=room-7&focus=1"
    teacher_ctx, student_ctx = browser.new_context(), browser.new_context()
    try:
        teacher, student = teacher_ctx.new_page(), student_ctx.new_page()
        open_app(teacher, server, lesson + "&teacher=1")
        expect(teacher.get_by_text("0 answers so far").first).to_be_visible(timeout=WAIT)
        open_app(student, server, lesson)
        expect(student.get_by_text("attend to most?").first).to_be_visible(timeout=WAIT)
        assert student.locator(".js-plotly-plot").count() == 0  # the weights stay hidden
        student.get_by_test_id("stRadio").filter(has_text="4 dessert").get_by_text("4 dessert").click()
        settle(student)
        student.get_by_role("button", name="Reveal").click()
        expect(student.get_by_text("Right: 'is' attends most to 4 dessert").first).to_be_visible(timeout=WAIT)
        expect(teacher.get_by_text("1 answer so far").first).to_be_visible(timeout=WAIT)  # live, no reload
        teacher.screenshot(path=os.path.join(ARTIFACTS, "predict_teacher.png"), full_page=True)
    finally:
        teacher_ctx.close()
        student_ctx.close()


def test_presenter_mode_at_1280x720_walks_the_steps_from_the_keyboard_in_both_languages(server, browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        page = ctx.new_page()
        open_app(page, server, "steps?present=1&step=st_tokens")
        expect(page.get_by_text("Step 1 of 6: Tokens").first).to_be_visible(timeout=WAIT)
        expect(page.get_by_role("button", name="Expand sidebar")).to_be_visible(timeout=WAIT)  # collapsed
        page.wait_for_function(
            "parseFloat(getComputedStyle(document.documentElement).fontSize) >= 20", polling=serve.POLL, timeout=WAIT
        )
        expect(page.locator(".st-key-present-row h3", has_text="Step 1 of 6")).to_be_in_viewport(timeout=WAIT)
        page.wait_for_function(  # read from the back of a room
            "parseFloat(getComputedStyle(document.querySelector('.st-key-present-narration p')).fontSize) >= 24",
            polling=serve.POLL,
            timeout=WAIT,
        )
        expect(page.locator(".js-plotly-plot").first).to_be_attached(timeout=WAIT)
        settle(page)
        page.screenshot(path=os.path.join(ARTIFACTS, "present_1280x720_en.png"))
        page.locator(".st-key-present-row h3").click()  # the keys go to the page, not to a text box
        for n in range(2, 7):
            page.keyboard.press("ArrowRight")
            expect(page.get_by_text(f"Step {n} of 6").first).to_be_visible(timeout=WAIT)
            settle(page)
        assert "step=st_output" in page.url  # presenting starts at step 1: a later step is named in the link
        expect(page.locator("svg text", has_text="Attention weights").first).to_be_visible(timeout=WAIT)
        page.screenshot(path=os.path.join(ARTIFACTS, "present_1280x720_en_step6.png"))
        page.keyboard.press("ArrowLeft")
        expect(page.get_by_text("Step 5 of 6").first).to_be_visible(timeout=WAIT)

        open_app(page, server, "steps?present=1&lang=zh&step=st_softmax")
        expect(page.get_by_text("第 5 步，共 6 步").first).to_be_visible(timeout=WAIT)
        expect(page.get_by_text("softmax 把每一行分数").first).to_be_visible(timeout=WAIT)
        expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=WAIT)
        settle(page)
        page.screenshot(path=os.path.join(ARTIFACTS, "present_1280x720_zh.png"))
    finally:
        ctx.close()


# a formula wider than its column: KaTeX's display block scrolls what does not fit, out of sight (a glyph's few pixels
# of overhang past its box are not a cut)
OVERFLOWING = """() => [...document.querySelectorAll('.katex-display')]
    .filter(e => e.scrollWidth > e.clientWidth + 8)
    .map(e => [e.scrollWidth, e.clientWidth, e.textContent.slice(-30)])"""


def test_each_formula_on_variants_fits_its_column(server, projector):
    """Three variants side by side on a projector's screen (full, sliding window, linear): each formula is whole in
    its column. Linear attention's, one line with its feature map after it, was cut at "φ(x) = elu(" there."""
    page = projector
    open_app(page, server, "variants")
    expect(page.locator(".katex-display").nth(2)).to_be_visible(timeout=WAIT)
    settle(page)
    assert not page.evaluate(OVERFLOWING)
    expect(page.locator(".katex-display", has_text="elu(x)+1").first).to_be_visible(timeout=WAIT)


TOAST = "[data-testid='stToast']"


def no_toast(page, where: str) -> None:
    """No notice after the run a step change started (the PNG control's chart choice was once named on most steps: a
    toast over Next and the way out of presenter mode, which swallowed a click on Next)."""
    toasts = page.locator(TOAST)
    assert toasts.count() == 0, (where, toasts.all_inner_texts())


def test_every_step_of_every_kernel_walks_without_a_toast(server, page):
    """Each step picked in turn for every kernel, each kernel picked in the sidebar after the last one's walk.
    Presenter mode's walk of every kernel, step after step with the arrow key, checks the same after each step
    (tests/browser/test_readable.py, on a projector's screen)."""
    from explorer.base.i18n import kernel_label
    from explorer.controls import live_variants

    kernels = live_variants()
    open_app(page, server, f"steps?kernel={kernels[0]}&focus=1")
    # the notice came from the PNG control's choice, which a server without Chromium does not draw
    expect(page.locator("input[aria-label='Chart']")).to_be_attached(timeout=WAIT)
    for k, kernel in enumerate(kernels):
        if k:  # the next kernel picked in the sidebar, as a learner does (one page for the whole walk)
            box = page.get_by_test_id("stSidebar").locator("input[aria-label='Attention variant']")
            box.click()
            box.press("ArrowDown")  # opens the list
            page.get_by_role("option", name=kernel_label(kernel), exact=True).click()
            settle(page)
            assert f"kernel={kernel}" in page.url, (kernel, page.url)
            no_toast(page, (kernel, "picked"))
        steps = page.locator(".st-key-step [data-testid='stRadioOption']")
        expect(steps.first).to_be_visible(timeout=WAIT)
        n = steps.count()
        for i in [*range(1, n), 0]:  # every step (a link opens on the last one), ending on the first
            steps.nth(i).click()
            settle(page)
            no_toast(page, (kernel, "step", i + 1))


def test_the_tour_is_followed_with_the_keyboard_alone(server, page):
    open_app(page, server, "steps?tour=qkv&step=st_qkv&d_k=24")
    expect(page.get_by_text(f"Lesson 1 of {len(TOUR)}").first).to_be_visible(timeout=WAIT)
    expect(page.get_by_role("link", name="Next: Scores: a query against every key")).to_be_visible(timeout=WAIT)
    settle(page)
    page.keyboard.press("Tab")  # Streamlit's "Skip to main content"
    page.keyboard.press("Enter")
    for _ in range(8):  # the lesson's links come first in the main content
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.textContent").startswith("Next:"):
            break
    assert page.evaluate("document.activeElement.textContent").startswith("Next: Scores")
    page.keyboard.press("Enter")
    expect(page.get_by_text(f"Lesson 2 of {len(TOUR)}").first).to_be_visible(timeout=WAIT)


CONTRAST_SELECTORS = [
    "[data-testid=stMain] p",
    "[data-testid=stBaseButton-primary] p",
    "[data-testid=stBaseButton-secondary] p",
    "[data-testid=stSidebar] label p",
    ".st-key-tour_banner a p",  # the tour's Back and Next (the app's page links)
    "h1",
    "[data-testid=stCaptionContainer] p",
]
CONTRAST_JS = """(sels) => {
  const opaque = (e) => {  // the first background behind e that is painted
    for (let p = e; p; p = p.parentElement) {
      const bg = getComputedStyle(p).backgroundColor;
      if (bg !== 'rgba(0, 0, 0, 0)' && bg !== 'transparent') return bg;
    }
    return 'rgb(255, 255, 255)';
  };
  return sels.map((s) => { const e = document.querySelector(s);
    return e ? [s, getComputedStyle(e).color, opaque(e)] : [s, null, null]; });
}"""


def contrast(fg: str, bg: str) -> float:
    """WCAG 2 contrast ratio of two CSS rgb() colours."""

    def luminance(css: str) -> float:
        r, g, b = (int(float(v)) / 255 for v in css[css.index("(") + 1 : css.index(")")].split(",")[:3])
        lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    hi, lo = sorted((luminance(fg), luminance(bg)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_text_meets_wcag_aa_contrast_in_both_themes(server, browser):
    """Body text, captions, both kinds of button, sidebar labels, the tour's links: 4.5:1 at least. The page is
    drawn once, in the light theme, and switched in place to the dark one (its background checked dark)."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="light")
    try:
        page = ctx.new_page()
        open_app(page, server, "steps?present=1&tour=qkv&step=st_qkv")
        expect(page.get_by_text(f"Lesson 1 of {len(TOUR)}").first).to_be_visible(timeout=WAIT)
        page.get_by_role("button", name="Expand sidebar").click()
        expect(page.get_by_test_id("stSidebar").locator("label p").first).to_be_visible(timeout=WAIT)
        settle(page)
        page.wait_for_function(  # every kind of text drawn (a loaded machine draws late)
            "(sels) => sels.every((s) => document.querySelector(s))",
            arg=CONTRAST_SELECTORS,
            polling=serve.POLL,
            timeout=WAIT,
        )
        for scheme in ("light", "dark"):
            if scheme == "dark":
                switch_theme(page, "dark")
            for selector, fg, bg in page.evaluate(CONTRAST_JS, CONTRAST_SELECTORS):
                assert fg is not None, (scheme, selector)
                assert contrast(fg, bg) >= 4.5, (scheme, selector, fg, bg, round(contrast(fg, bg), 2))
    finally:
        ctx.close()


@pytest.mark.parametrize(
    ("path", "removed", "en", "zh"),
    [
        ("multihead?heads=6", "Head 0", ["Head 1", "Head 2", "Head 3"], ["头 1", "头 2", "头 3"]),
        ("variants", "Full (materialised)", ["Sliding window", "Linear (elu+1)"], ["滑动窗口", "线性注意力（elu+1）"]),
    ],
)
def test_a_multiselect_whose_labels_follow_the_language_keeps_its_choice(server, page, path, removed, en, zh):
    open_app(page, server, path)
    tags = page.get_by_test_id("stMainBlockContainer").locator("[data-tag]")
    expect(tags.first).to_be_visible(timeout=WAIT)
    page.get_by_role("button", name=f"Remove {removed}").click()
    settle(page)
    expect(tags).to_have_text(en, timeout=WAIT)
    sidebar = page.get_by_test_id("stSidebar")
    for language, labels in (("简体中文", zh), ("English", en)):  # the choice was lost on the way back before
        sidebar.get_by_text(language, exact=True).click()
        settle(page)
        expect(tags).to_have_text(labels, timeout=WAIT)


def test_a_fragments_own_rerun_keeps_the_palette_and_the_presenters_large_type(server, page):
    """The Real model's head view reruns alone (a fragment, without app.py) when the layer changes."""
    open_app(page, server, "model?palette=safe&present=1&rm_part=compare")
    page.get_by_text("Model and padding").first.click()  # presenting: the layer is with the settings, folded away
    layer = page.locator("input[aria-label='Layer']")
    expect(layer).to_be_visible(timeout=WAIT)
    layer.fill("3")
    layer.press("Enter")
    settle(page)
    expect(page.locator("svg text", has_text="Layer 3, head 0").first).to_be_visible(timeout=WAIT)
    looks = page.evaluate(
        """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map((g) => [
            g.layout.title && g.layout.title.text, g._fullLayout.font.size,
            g.data[0].type === 'heatmap' ? JSON.stringify(g.data[0].colorscale) : null])"""
    )
    heatmaps = [x for x in looks if x[2]]
    safe = ('[[0,"#00224e"]', '[[0,"rgb(127,59,8)"]')  # cividis, purple-orange: not viridis or red-blue
    assert heatmaps and all(scale.startswith(safe) for _, _, scale in heatmaps), looks
    assert all(size >= 16 for _, size, _ in looks), looks

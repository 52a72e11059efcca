"""Vision's uploader on the Chinese page, in Chromium: the text a learner sees is the catalogue's (the app's own
5 MiB limit in its label, the button's word in Chinese), none of Streamlit's English (its drop-zone instructions,
its per-file limit, its button's "Upload")."""

import pytest
from playwright.sync_api import expect
from test_browser import WAIT, open_app

from attn_core.vision.picture import MAX_BYTES
from explorer.base.i18n import t

# Every piece of text drawn in the uploader at a size that can be read, the generated text of the page's CSS
# (``::before`` / ``::after``) included; a material icon's ligature (its name, drawn as a glyph) left out.
SHOWN_TEXT = """(root) => {
  const out = [];
  const drawn = (el) => {
    for (let e = el; e && e !== root.parentElement; e = e.parentElement) {
      const s = getComputedStyle(e);
      if (s.display === 'none' || s.visibility === 'hidden' || parseFloat(s.opacity) === 0) return false;
    }
    return true;
  };
  const readable = (el) => drawn(el) && parseFloat(getComputedStyle(el).fontSize) > 0;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!n.textContent.trim() || el.closest("[data-testid='stIconMaterial']")) continue;
    if (readable(el)) out.push(n.textContent.trim());
  }
  for (const el of root.querySelectorAll('*')) {
    for (const pseudo of ['::before', '::after']) {
      const s = getComputedStyle(el, pseudo), c = s.content;
      if (c && c !== 'none' && c !== 'normal' && parseFloat(s.fontSize) > 0 && drawn(el)) {
        out.push(c.replace(/^"|"$/g, ''));
      }
    }
  }
  return out;
}"""

ENGLISH = ("Drag and drop", "Limit", "200MB", "MB per file", "per file", "Browse files", "Upload", "PNG, JPG")


def test_the_uploader_on_the_chinese_page_shows_the_catalogues_words_and_the_apps_limit(server, page):
    open_app(page, server, "vision?lang=zh")
    uploader = page.locator(".st-key-vi_upload [data-testid='stFileUploader']")
    expect(uploader.locator("[data-testid='stFileUploaderDropzone']")).to_be_visible(timeout=WAIT)
    uploader.scroll_into_view_if_needed()
    shown = uploader.evaluate(SHOWN_TEXT)
    text = " ".join(shown)
    assert not [w for w in ENGLISH if w in text], shown
    mib = MAX_BYTES // 2**20
    assert t("vision.upload", mib=mib, language="zh") in shown, shown  # the limit, the app's own, in Chinese
    assert t("vision.upload_button", language="zh") in shown, shown
    assert f"{mib} MiB" in text and mib == 5


def _png() -> bytes:
    """A dark stroke on light paper: a picture the page reads."""
    import io

    from PIL import Image, ImageDraw

    img = Image.new("L", (40, 40), 255)
    ImageDraw.Draw(img).line([(20, 6), (20, 34)], fill=0, width=5)
    out = io.BytesIO()
    img.save(out, format="PNG")
    return out.getvalue()


# Streamlit's own refusals, in English whatever the page's language (its file chip, its tooltip, its alert)
STREAMLIT_REFUSALS = ("File must be", "or smaller", "files are not allowed", "Remove ", "Error:")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_file_over_the_limit_or_of_another_type_is_refused_in_the_pages_language(server, page, lang):
    """A file one byte over the app's limit, then a GIF, chosen on Vision's uploader: the page says why in its own
    language (the engine's error for that picture), Streamlit's English chip never appears, and a PNG chosen after
    is read as before, the refusal gone."""
    from attn_core import AttentionConfigError
    from explorer.base.i18n import ERRORS_ZH

    open_app(page, server, f"vision?lang={lang}")
    uploader = page.locator(".st-key-vi_upload [data-testid='stFileUploader']")
    expect(uploader.locator("[data-testid='stFileUploaderDropzone']")).to_be_visible(timeout=WAIT)
    chooser = page.locator(".st-key-vi_upload input[type='file']")
    main = page.locator("[data-testid='stMain']")

    def said(code: str, **params) -> str:  # the engine's error for that picture, in the page's language
        err = AttentionConfigError("image", code, **params)
        message, fix = [s.format(**params) for s in ERRORS_ZH[code]] if lang == "zh" else (err.message, err.fix)
        return t("vision.upload_invalid", msg=f"{message} {fix}", language=lang)

    too_big = {"name": "digit.png", "mimeType": "image/png", "buffer": b"\x89PNG" + bytes(MAX_BYTES - 3)}
    other = {"name": "digit.gif", "mimeType": "image/gif", "buffer": b"GIF89a" + bytes(64)}
    refusals = ((too_big, "vision_upload_size", {"mib": MAX_BYTES // 2**20}), (other, "vision_upload_bad", {}))
    for chosen, code, params in refusals:
        chooser.set_input_files(chosen)
        expect(main.get_by_text(said(code, **params))).to_be_visible(timeout=WAIT)
        expect(page.locator("[data-testid='stFileChip']")).to_have_count(0)
        text = uploader.inner_text()
        assert not [w for w in STREAMLIT_REFUSALS if w in text], text
    # dropped on the zone instead of chosen: the same check (a file of the limit plus one byte)
    zone = uploader.locator("[data-testid='stFileUploaderDropzone']")
    dropped = page.evaluate_handle(
        "(n) => { const d = new DataTransfer(); d.items.add(new File([new Uint8Array(n)], 'digit.png',"
        " { type: 'image/png' })); return d; }",
        MAX_BYTES + 1,
    )
    zone.dispatch_event("dragenter", {"dataTransfer": dropped})
    zone.dispatch_event("drop", {"dataTransfer": dropped})
    expect(main.get_by_text(said("vision_upload_size", mib=MAX_BYTES // 2**20))).to_be_visible(timeout=WAIT)
    expect(page.locator("[data-testid='stFileChip']")).to_have_count(0)
    chooser.set_input_files({"name": "digit.png", "mimeType": "image/png", "buffer": _png()})
    expect(page.locator(".st-key-vi_upload_chart [data-testid='stPlotlyChart']")).to_be_visible(timeout=WAIT)
    expect(main.get_by_text(said("vision_upload_bad"))).to_have_count(0)

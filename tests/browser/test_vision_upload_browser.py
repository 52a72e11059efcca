"""Vision's uploader on the Chinese page, in Chromium: the text a learner sees is the catalogue's (the app's own
5 MiB limit in its label, the button's word in Chinese), none of Streamlit's English (its drop-zone instructions,
its per-file limit, its button's "Upload")."""

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

"""Take it home in Chromium against a real server: a click on "Download as notebook" (a deferred download: the
server builds the file only then, outside the script run) gives the notebook of the view on screen, whose code
cells recompute the app's numbers; the same for the script and for the Real model's head."""

import contextlib
import io

import nbformat
from playwright.sync_api import expect
from test_browser import WAIT, open_app, settle


def download(page, label: str, tmp_path) -> str:
    button = page.get_by_role("button", name=label)
    expect(button.first).to_be_visible(timeout=WAIT)
    # clicked once the page is at rest: a click on Real model during its tab's second run (the sections under the first
    # screen, explorer/controls/later.py) started no download in 60 s, once in a whole suite
    settle(page)
    with page.expect_download(timeout=WAIT) as info:
        button.first.click()
    path = tmp_path / info.value.suggested_filename
    info.value.save_as(path)
    return path.read_text(encoding="utf-8")


def run(code: str) -> dict:
    ns: dict = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, "<download>", "exec"), ns)  # noqa: S102 - the notebook this app wrote
    return ns


def test_steps_notebook_and_script_download(server, page, tmp_path):
    open_app(page, server, "steps?heads=2&focus=2&lang=zh")
    nb = nbformat.reads(download(page, "下载为笔记本（.ipynb）", tmp_path), as_version=4)
    nbformat.validate(nb)
    ns = run("\n".join(c.source for c in nb.cells if c.cell_type == "code"))
    assert (ns["HEADS"], ns["FOCUS"]) == (2, 2) and max(ns["differences"].values()) <= 1e-5
    assert any("\u4e00" <= ch <= "\u9fff" for ch in nb.cells[0].source)
    script = download(page, "下载为 Python 脚本（.py）", tmp_path)
    assert max(run(script)["differences"].values()) <= 1e-5


def test_real_model_head_downloads(server, page, tmp_path):
    open_app(page, server, "model?sentence=The+animal+didn%27t+cross+the+street&rm_layer=4&rm_head=9")
    expect(page.get_by_text("matches the model's own attention probabilities").first).to_be_visible(timeout=WAIT)
    nb = nbformat.reads(download(page, "Download as notebook (.ipynb)", tmp_path), as_version=4)
    nbformat.validate(nb)
    ns = run("\n".join(c.source for c in nb.cells if c.cell_type == "code"))
    assert (ns["LAYER"], ns["HEAD"]) == (4, 9) and max(ns["differences"].values()) <= 1e-5

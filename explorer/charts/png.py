"""Every chart as a PNG: one control at the page's end (a choice of the charts this run drew and one download
button), beside the modebar's own camera button, which downloads the chart as SVG (``views.export_config``).

Plotly's modebar has one image button with one format, and a second button needs a JavaScript function that
Streamlit's JSON config cannot carry, so the PNG is rendered on the server: kaleido drives a Chromium already
on the machine (3-4 s a chart: each render starts one). Streamlit calls a download button's callable when the
button is clicked, in a worker thread of the event loop's executor (``asyncio.to_thread`` in its
``DeferredFileHandler``): the loop and other sessions' reruns go on meanwhile. Those threads are shared, so a
class clicking at once must not start thirty Chromiums: one render at a time for the whole server, the others
wait for it (``WAIT_S`` at most, then the download fails rather than queue without end).
"""

from __future__ import annotations

import functools
import os
import threading

import streamlit as st

from explorer.base import session, widgets
from explorer.base.i18n import t

WIDTH, HEIGHT = 1000, 600  # a chart drawn across its column has no width of its own: the PNG's default size
WAIT_S = 60.0
_ONE_AT_A_TIME = threading.BoundedSemaphore(1)


def record(name: str, figure) -> None:
    """Note a chart this run drew, under its download name (the SVG's, less the extension)."""
    session.run_context().charts.append((name, figure))


def drawn() -> list[tuple[str, object]]:
    """The charts this run drew so far, in order: (file name, figure)."""
    return list(session.run_context().charts)


def chromium() -> str | None:
    """The Chromium kaleido would start (``BROWSER_PATH``, else its own download, else the usual names and
    places), when it is there and runs; None: no PNG on this machine. Looked for once per ``BROWSER_PATH``: the
    search is dozens of file-system calls, and the control is drawn on every rerun."""
    return _chromium(os.environ.get("BROWSER_PATH"))


@functools.lru_cache(maxsize=8)
def _chromium(browser_path: str | None) -> str | None:
    from choreographer.browsers.chromium import Chromium

    path = Chromium.find_browser(skip_local=False)
    return path if path and os.path.isfile(path) and os.access(path, os.X_OK) else None


def size(figure) -> tuple[int, int]:
    """The PNG's width and height in pixels: the figure's own where its layout sets them, else the default."""
    return int(figure.layout.width or WIDTH), int(figure.layout.height or HEIGHT)


def render(figure, width: int, height: int) -> bytes:
    """``figure`` as a PNG of ``width`` x ``height`` pixels (scale 1), one render at a time for the server."""
    if not _ONE_AT_A_TIME.acquire(timeout=WAIT_S):
        raise TimeoutError(f"another chart was still rendering after {WAIT_S:.0f} s")
    try:
        try:
            return figure.to_image(format="png", width=width, height=height, scale=1)
        except Exception as error:
            if not started_too_soon(error):
                raise
            return figure.to_image(format="png", width=width, height=height, scale=1)  # a new Chromium, once more
    finally:
        _ONE_AT_A_TIME.release()


def started_too_soon(error: Exception) -> bool:
    """kaleido's tab ran its script before its page had loaded: on a busy machine its new Chromium can report the
    blank first page's JavaScript context as the one to use, where kaleido's own functions are not defined. The
    render itself was never tried, so trying again (a fresh Chromium) is safe."""
    return type(error).__name__ == "JavascriptError" and "kaleido_scopes is not defined" in str(error)


def download_ui() -> None:
    """The page's PNG control, after everything it drew (app.py, after the page's run); nothing when the page
    drew no chart. A fragment: choosing another chart reruns only this control, with the charts of the page's
    run (a chart redrawn by a fragment of the page since is offered as that run drew it)."""
    charts = drawn()
    if charts:
        st.fragment(_control)(charts)


def unique(names: list[str]) -> list[str]:
    """The names, a repeated one numbered from its second use ("steps_Head", "steps_Head_2"): each names one chart."""
    out: list[str] = []
    for name in names:
        n, new = 1, name
        while new in out:
            n += 1
            new = f"{name}_{n}"
        out.append(new)
    return out


def _control(charts: list[tuple[str, object]]) -> None:
    with st.expander(t("png.title"), icon=":material/image:"):
        if chromium() is None:
            st.info(t("png.no_chromium"), icon=":material/info:")
            return
        # chosen by name: each run draws its own charts (another step, another head), and the browser sends back
        # the name it last showed, often a chart this run did not draw. That is no mistake of the learner's: a
        # name not drawn goes quietly to the first chart (a value not even a name is still named, as anywhere)
        named = dict(zip(unique([name for name, _ in charts]), (figure for _, figure in charts), strict=True))
        name = widgets.selectbox(st, t("png.chart"), list(named), key="png_chart")
        figure = named[name]
        width, height = size(figure)
        st.download_button(
            t("png.download", width=width, height=height),
            lambda: render(figure, width, height),
            f"{name}.png",
            "image/png",
            key="png_download",
            on_click="ignore",
        )  # rendered only when clicked

"""Take it home: "Download as notebook" and "… as .py" under the view on Step by step, Multi-head,
Cross-attention, Real model and Next token (one call per page: ``offer(...)``, ``offer_model(...)`` or
``offer_next_token(...)``).

The file is built only when clicked (a deferred download: the page's rerun registers a callable over plain
values, never the notebook), from the server's cached trace or head, and kept in a small per-server cache
with a byte budget, so a class clicking the same lesson's button builds it once. The callable runs outside
the script run (no session state there): everything it needs is bound when the page is drawn.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable

import streamlit as st

from attn_core import AttentionConfigError, Settings
from attn_core import notebook as nbk
from explorer.base import session
from explorer.base.cache import COMPUTING
from explorer.base.i18n import error_text, lang, t
from explorer.base.safe import md

MIME = {"ipynb": "application/x-ipynb+json", "py": "text/x-python"}


class _Files:
    """The most recently built files, within ``max_bytes`` (a notebook carries up to ~6 MiB of the app's values)."""

    def __init__(self, max_bytes: int, max_entries: int) -> None:
        self.max_bytes, self.max_entries = max_bytes, max_entries
        self.lock = threading.Lock()
        self.entries: OrderedDict[tuple, bytes] = OrderedDict()
        self.total = 0

    def get(self, key: tuple, build: Callable[[], bytes]) -> bytes:
        with self.lock:
            if key in self.entries:
                self.entries.move_to_end(key)
                return self.entries[key]
        data = build()
        with self.lock:
            if key not in self.entries and len(data) <= self.max_bytes:
                self.entries[key] = data
                self.total += len(data)
                while self.total > self.max_bytes or len(self.entries) > self.max_entries:
                    _, dropped = self.entries.popitem(last=False)
                    self.total -= len(dropped)
        return data

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()
            self.total = 0


FILES = _Files(max_bytes=48 * 2**20, max_entries=64)


def _render(nb: nbk.Notebook, fmt: str, language: str) -> bytes:
    return (nb.script(language) if fmt == "py" else nb.ipynb()).encode("utf-8")


def trace_file(page: str, items: tuple, language: str, focus: int, head: int, fmt: str) -> bytes:
    """The notebook (``fmt`` 'ipynb') or script ('py') of a toy view, from plain values."""

    def build() -> bytes:
        from explorer.controls.state import trace_for

        settings = Settings(**dict(items))
        trace = trace_for(settings)  # from the server's cache (it takes a computing slot of its own if it must)
        with COMPUTING:  # at most two heavy computations at once on the server, these included
            nb = nbk.trace_notebook(settings, lang=language, focus=focus, head=head, page=page, trace=trace)
            return _render(nb, fmt, language)

    return FILES.get(("trace", page, items, language, focus, head, fmt), build)


def model_file(spec: str, sentence: str, pad_to: int, layer: int, head: int, language: str, focus: int, fmt: str):
    """The Real model page's head as a notebook or script, from plain values (the model is loaded already)."""

    def build() -> bytes:
        from explorer.model import real

        pre = real.wait_for(spec)
        run, ht = real.run(spec, sentence, pad_to), real.head(spec, sentence, pad_to, layer, head)  # cached
        where = "" if pre.name == real.pt.BUNDLED else pre.path or ""  # the notebook's: the wheel, or the directory
        with COMPUTING:  # never held while waiting for a cached result: that one may need a slot
            nb = nbk.model_notebook(
                pre, run, ht, sentence=sentence, pad_to=pad_to, lang=language, focus=focus, spec=where
            )
            return _render(nb, fmt, language)

    return FILES.get(("model", spec, sentence, pad_to, layer, head, language, focus, fmt), build)


def next_token_file(choice, language: str, fmt: str) -> bytes:
    """The Next token page's prediction as a notebook or script, from plain values (the page's ``Choice``)."""

    def build() -> bytes:
        from attn_core import nexttoken as nt
        from attn_core.notebook import nexttoken_notebook
        from explorer.model import real

        m = real.wait_for(choice.model)  # the server's loader holds it already (the page waited for it)
        with COMPUTING:
            p = nt.predict(m, choice.prompt, choice.sampling(m.vocab))
            nb = nexttoken_notebook(m, p, prompt=choice.prompt, lang=language)
            return _render(nb, fmt, language)

    return FILES.get(("next_token", choice.key(), language, fmt), build)


def _button(label: str, data: Callable[[], bytes], file_name: str, mime: str, key: str, container) -> None:
    container.download_button(
        label, data, file_name, mime, key=key, on_click="ignore", help=t("takehome_help"), icon=":material/download:"
    )


def _focus(n: int, focus: int | None) -> int:
    """The page's focus token, else the one the pages share (its control's value, or the link's ``focus``)."""
    if focus is None:
        focus = session.get("focus")
    if not isinstance(focus, int):
        raw = session.url("focus") or ""
        focus = int(raw) if isinstance(raw, str) and raw.isdigit() and len(raw) < 6 else 1
    return min(max(focus, 0), n - 1)


def _buttons(files: dict[str, Callable[[], bytes]], name: str, prefix: str) -> None:
    a, b = st.columns(2)
    _button(t("takehome_notebook"), files["ipynb"], f"{name}.ipynb", MIME["ipynb"], f"{prefix}dl_notebook", a)
    _button(t("takehome_script"), files["py"], f"{name}.py", MIME["py"], f"{prefix}dl_script", b)


def _refused(err: AttentionConfigError) -> None:
    st.caption(t("takehome_refused", msg=md(" ".join(error_text(err)))))


def offer(page: str, settings: Settings, *, head: int = 0, focus: int | None = None) -> None:
    """The two buttons for a toy view (``page``: steps, multihead or cross; ``settings``: the page's own)."""
    from explorer.controls.state import trace_for

    try:
        trace = trace_for(settings)  # the page's own, cached
        nbk.check_exportable(trace)
    except AttentionConfigError as err:
        _refused(err)
        return
    language = lang()
    f = _focus(len(trace.tokens.words), focus)
    head = min(max(head, 0), trace.settings.heads - 1)
    items = settings.key()
    files = {fmt: functools.partial(trace_file, page, items, language, f, head, fmt) for fmt in MIME}
    _buttons(files, f"attention_{page}", "")


def offer_next_token(choice) -> None:
    """The two buttons for the Next token page (its model, prompt and sampling settings: a ``Choice``)."""
    language = lang()
    files = {fmt: functools.partial(next_token_file, choice, language, fmt) for fmt in MIME}
    _buttons(files, "next_token", "nt_")


def offer_model(spec: str, sentence: str, pad_to: int, layer: int, head: int, *, focus: int | None = None) -> None:
    """The two buttons for the Real model page's head (the page's model, sentence, padding, layer and head)."""
    from explorer.model import real

    try:
        ht = real.head(spec, sentence, pad_to, layer, head)  # the page's own, cached
        nbk.check_size(nbk.head_tensors(ht))
    except AttentionConfigError as err:
        _refused(err)
        return
    language = lang()
    f = _focus(real.run(spec, sentence, pad_to).encoding.n_real, focus)
    files = {fmt: functools.partial(model_file, spec, sentence, pad_to, layer, head, language, f, fmt) for fmt in MIME}
    _buttons(files, f"head_L{layer}_H{head}", "rm_")

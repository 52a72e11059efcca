"""Pin as A: the settings now kept as A, every later change is B, each step's main matrix drawn for both.

A lives in the link, one compact parameter ``a=``: the sidebar's values that differ from their defaults, written as a
link writes them (``heads=4&causal=true``, encoded once more as the value of ``a``), so a link carries the
comparison. The Variants page's own inputs (its window, its features: ``var_window=3``) travel in it too when A was
pinned there. Each value is read by its control, as a link's own value is (``Control.parse``: range-checked; a page
input by its knob's page range); a value that cannot be used, an unknown name or settings that cannot work drop
``a=`` with the link's usual notice. The numbers are the engine's (``attn_core.pair``), computed once per pair of
settings, step and head for every session.

Where A's and B's matrices differ in shape (another sentence, another d_k), what can still be compared is: the
attention weights' B − A when only the step's own matrix changed shape (a Q of another width), else the entropy
and the largest weight of each query, A's beside B's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from urllib.parse import parse_qsl, urlencode

import streamlit as st

from attn_core import AttentionConfigError, Settings
from attn_core.knobs import KNOBS, in_context
from attn_core.pair import changed_most, diff, step_matrices, words
from explorer import charts
from explorer import figures as fig
from explorer.base import session
from explorer.base.cache import bounded
from explorer.base.i18n import error_text, lang, t
from explorer.charts.views import chart
from explorer.controls import BY_NAME, SIDEBAR, present

PARAM = "a"  # the link's parameter holding A's settings (a contract: lesson links carry it)
MAX_LINK = 4000  # characters of a= read at most (a sentence is cut at 1000 by its control)
PAGE_PREFIX = "var_"  # a Variants page input in a=: its widget's key, var_<knob>
PAGE_KNOBS = tuple(in_context("page"))  # the knobs the Variants page draws as its own inputs
HEIGHT, PRESENT_HEIGHT = 340, 250  # A's and B's charts side by side; presenting: both on the first screen


@dataclass(frozen=True)
class Pin:
    """A, read from the link: the sidebar's settings, its second sentence (Cross-attention's queries) and the
    Variants page's own inputs it holds (``((knob, value), ...)``, none unless pinned there)."""

    settings: Settings
    source: str
    page: tuple = ()


def encode(values: dict, page: dict | None = None) -> str:
    """The sidebar's values (by control name) as ``a=``'s text: the sentence (never an empty ``a=``, which a browser
    may drop) and the others that differ from their defaults; then ``page``, a Variants page's own inputs (by knob)."""
    pairs = [(c.name, c.to_url(values[c.name])) for c in SIDEBAR if c.name in values]
    default = {name: BY_NAME[name].to_url(BY_NAME[name].default) for name, _ in pairs}
    kept = [(name, text) for name, text in pairs if name == "sentence" or text != default[name]]
    kept += [(PAGE_PREFIX + name, str(value)) for name, value in (page or {}).items() if name in PAGE_KNOBS]
    return urlencode(kept)


def _page_value(name: str, raw: str):
    """A Variants page input's value from ``a=`` (its knob's page range), or None."""
    knob = KNOBS[name[len(PAGE_PREFIX) :]]
    try:
        return knob.parse(raw, "page")
    except AttentionConfigError:
        return None


def decode(text: str) -> dict | None:
    """``a=``'s text as the sidebar's values (every control, its default where the text is silent) and the page
    inputs it names (under ``var_<knob>``); None when a name is neither or its value cannot be used."""
    if len(text) > MAX_LINK:
        return None
    try:
        pairs = parse_qsl(
            text,
            keep_blank_values=True,
            strict_parsing=bool(text),
            max_num_fields=len(SIDEBAR) + len(PAGE_KNOBS),
        )
    except ValueError:
        return None
    values = {c.name: c.default for c in SIDEBAR}
    inputs = {PAGE_PREFIX + name for name in PAGE_KNOBS}
    for name, raw in pairs:
        if name in inputs:
            value = _page_value(name, raw)
        else:
            c = BY_NAME.get(name)
            value = None if c is None or name not in values else c.parse(raw)
        if value is None:
            return None
        values[name] = value
    return values


def now_values() -> dict:
    """The sidebar's values in this session (what Pin as A keeps)."""
    return {c.name: session.get(c.name, c.default) for c in SIDEBAR}


def pin() -> Pin | None:
    """A from the link, checked as the sidebar's settings are; None when none is pinned (a bad ``a=`` is dropped
    from the link and named in the sidebar's notice)."""
    from explorer.controls.state import check_for, settings_of

    raw = session.url(PARAM)
    if raw is None:
        return None
    values = decode(raw)
    try:
        settings = None if values is None else settings_of({k: v for k, v in values.items() if k in BY_NAME})
        if settings is not None:
            check_for(settings)
    except AttentionConfigError:
        settings = None
    if settings is None:
        session.drop_url(PARAM)
        session.notice(PARAM)
        return None
    page = tuple((k[len(PAGE_PREFIX) :], v) for k, v in values.items() if k.startswith(PAGE_PREFIX))
    return Pin(settings, str(values["source"]), page)


def pinned() -> Settings | None:
    """A's settings from the link (see ``pin``); None when none are pinned."""
    p = pin()
    return None if p is None else p.settings


def cross_of(p: Pin) -> Settings:
    """A on Cross-attention: A's second sentence's queries over A's first sentence, as the page builds B's."""
    from explorer.controls.state import cross_settings

    return replace(cross_settings(p.settings), sentence=p.source)


def _pin(page: dict | None = None) -> None:
    session.set_url(PARAM, encode(now_values(), page))


def _unpin() -> None:
    session.drop_url(PARAM)


def pin_ui(container, is_pinned: bool, page: dict | None = None) -> None:
    """The *Pin as A* button, and *Unpin A* beside it while A is pinned. ``page``: the Variants page's own inputs,
    kept in A with the sidebar's settings."""
    left, right = container.columns(2)
    left.button(
        t("pair.pin"),
        help=t("pair.pin_help"),
        on_click=_pin,
        args=(page,),
        key="pin_a",
        icon=":material/push_pin:",
    )
    if is_pinned:
        right.button(t("pair.unpin"), on_click=_unpin, key="unpin_a")


def _axis(trace, what: str, n: int) -> list[str]:
    if what == "dim":
        return [str(i) for i in range(n)]
    return list((trace.tokens if what == "query" else trace.key_tokens).words)


def pair_view(ta, tb, step: str, head: int, language: str) -> dict:
    """What a comparison draws, as plain values: one step's main matrix for A and for B (lists), B − A (or None),
    their shared range and the line of words; where B − A cannot be drawn, ``weights_diff`` (the attention weights'
    B − A, when their shapes agree) or ``per_query`` (each query's entropy and largest weight in A and in B).
    ``ta``, ``tb``: traces, or anything with ``attn`` (H, L, S), ``tokens`` and ``key_tokens`` (a variant's
    weights)."""
    pair = step_matrices(ta, tb, step, head)
    out = {
        "name": pair.name,
        "a": pair.a.tolist(),
        "b": pair.b.tolist(),
        "diff": None if pair.diff is None else pair.diff.tolist(),
        "shape_a": tuple(pair.a.shape),
        "shape_b": tuple(pair.b.shape),
        "bounds": pair.bounds,
        "axes": (pair.rows, pair.cols),
        "a_rows": _axis(ta, pair.rows, pair.a.shape[0]),
        "a_cols": _axis(ta, pair.cols, pair.a.shape[1]),
        "b_rows": _axis(tb, pair.rows, pair.b.shape[0]),
        "b_cols": _axis(tb, pair.cols, pair.b.shape[1]),
        "words": words(changed_most(ta, tb, head), language),
        "weights_diff": None,
        "per_query": None,
    }
    if pair.diff is None:
        whole = diff(ta, tb)  # the engine's comparison of the weights, whatever the step's matrix
        ha, hb = min(head, ta.attn.shape[0] - 1), min(head, tb.attn.shape[0] - 1)
        if whole["shapes_agree"]:
            out["weights_diff"] = whole["weights"][hb]
        else:
            out["per_query"] = {
                "entropy_a": whole["entropy"]["a"][ha],
                "entropy_b": whole["entropy"]["b"][hb],
                "max_a": whole["max_abs"]["a"][ha],
                "max_b": whole["max_abs"]["b"][hb],
            }
    return out


@bounded(max_mib=64)  # shared by every session: plain, hashable settings in, plain lists out
def compared(a: Settings, b: Settings, step: str, head: int, language: str) -> dict:
    """``pair_view`` of the traces of ``a`` and ``b`` (each the cached trace any view of them draws)."""
    from explorer.controls.state import trace_for

    return pair_view(trace_for(a), trace_for(b), step, head, language)


def _labels(names: list[str], what: str) -> list[str]:
    return names if what == "dim" else fig.labels(names)


def _height() -> int:
    return PRESENT_HEIGHT if present.on() else HEIGHT


def compare_section(a: Settings, b: Settings, step: str, head: int) -> dict | None:
    """A and B side by side on one colour scale, then B − A (or what can still be compared), then the line of
    words. None, with the reason said, when A cannot be computed here (A's second sentence on Cross-attention)."""
    try:
        c = compared(a, b, step, head, lang())
    except AttentionConfigError as err:
        message, fix = error_text(err)
        st.warning(t("pair.a_unusable", msg=_plain(f"{message} {fix}")), icon=":material/warning:")
        return None
    draw_pair(c)
    return c


def draw_pair(c: dict, title: str | None = None) -> None:
    """``pair_view``'s values drawn: A beside B, B − A or what can still be compared, the line of words."""
    rows, cols = c["axes"]
    style = fig.run_style()
    if not present.on():  # presenting: the walk's row names the step; A and B share the first screen with it
        st.subheader(title or t("pair.title", name=c["name"]))
    left, right = st.columns(2)
    for side, box in (("a", left), ("b", right)):
        with box:
            chart(
                fig.heatmap(
                    c[side],
                    _labels(c[f"{side}_cols"], cols),
                    _labels(c[f"{side}_rows"], rows),
                    title=t(f"pair.{side}"),
                    x_title=cols,
                    y_title=rows,
                    zrange=c["bounds"],
                    height=_height(),
                    style=style,
                ),
                f"pair_{side}",
            )
    if c["diff"] is not None:
        _diff_chart(c["diff"], _labels(c["b_cols"], cols), _labels(c["b_rows"], rows), cols, rows, t("pair.b_minus_a"))
    else:
        st.info(t("pair.no_diff", a=c["shape_a"], b=c["shape_b"]), icon=":material/compare_arrows:")
        if c.get("weights_diff") is not None:  # the step's matrix changed shape, the weights did not
            w = c["weights_diff"]
            st.caption(t("pair.weights_instead"))
            _diff_chart(
                w,
                [str(j) for j in range(len(w[0]))],
                [str(i) for i in range(len(w))],
                "key",
                "query",
                t("pair.b_minus_a_weights"),
            )
        elif c.get("per_query") is not None:
            per_query(c["per_query"])
    st.markdown(_plain(c["words"]))


def _diff_chart(z, x, y, x_title: str, y_title: str, title: str) -> None:
    chart(
        charts.heatmap(z, x, y, title=title, x_title=x_title, y_title=y_title, colorscale="RdBu", zmid=0),
        "pair_diff",
    )


def per_query(q: dict) -> None:
    """Each query's entropy and largest weight, A's beside B's, by the query's position (A's and B's sentences may
    differ in length: the shorter one's line ends sooner)."""
    st.caption(t("pair.per_query"))
    n = max(len(q["entropy_a"]), len(q["entropy_b"]))

    def padded(values: list) -> list:
        return list(values) + [None] * (n - len(values))

    style = fig.run_style()
    left, right = st.columns(2)
    for box, what, title in ((left, "entropy", "pair.entropy_chart"), (right, "max", "pair.max_chart")):
        series = {t("pair.a"): padded(q[f"{what}_a"]), t("pair.b"): padded(q[f"{what}_b"])}
        with box:
            chart(
                fig.line(list(range(n)), series, title=t(title), x_title=t("pair.position"), style=style),
                f"pair_{what}",
            )


def _plain(text: str) -> str:
    from explorer.base.safe import md

    return md(text)

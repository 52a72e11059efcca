"""Pin as A: the settings now kept as A, every later change is B, each step's main matrix drawn for both.

A lives in the link, one compact parameter ``a=``: the sidebar's values that differ from their defaults, written as a
link writes them (``heads=4&causal=true``, encoded once more as the value of ``a``), so a link carries the
comparison. Each value is read by its control, as a link's own value is (``Control.parse``: range-checked); a value
that cannot be used, an unknown name or settings that cannot work drop ``a=`` with the link's usual notice. The
numbers are the engine's (``attn_core.pair``), computed once per pair of settings, step and head for every session.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode

import streamlit as st

from attn_core import AttentionConfigError, Settings
from attn_core.pair import changed_most, step_matrices, words
from explorer import figures as fig
from explorer.base import session
from explorer.base.cache import bounded
from explorer.base.i18n import lang, t
from explorer.charts.views import chart
from explorer.controls import BY_NAME, SIDEBAR

PARAM = "a"  # the link's parameter holding A's settings (a contract: lesson links carry it)
MAX_LINK = 4000  # characters of a= read at most (a sentence is cut at 1000 by its control)


def encode(values: dict) -> str:
    """The sidebar's values (by control name) as ``a=``'s text: the sentence (never an empty ``a=``, which a browser
    may drop) and the others that differ from their defaults."""
    pairs = [(c.name, c.to_url(values[c.name])) for c in SIDEBAR if c.name in values]
    default = {name: BY_NAME[name].to_url(BY_NAME[name].default) for name, _ in pairs}
    return urlencode([(name, text) for name, text in pairs if name == "sentence" or text != default[name]])


def decode(text: str) -> dict | None:
    """``a=``'s text as the sidebar's values (every control, its default where the text is silent); None when a name
    is not a sidebar control's or its value cannot be used."""
    if len(text) > MAX_LINK:
        return None
    try:
        pairs = parse_qsl(text, keep_blank_values=True, strict_parsing=bool(text), max_num_fields=len(SIDEBAR))
    except ValueError:
        return None
    values = {c.name: c.default for c in SIDEBAR}
    for name, raw in pairs:
        c = BY_NAME.get(name)
        value = None if c is None or name not in values else c.parse(raw)
        if value is None:
            return None
        values[name] = value
    return values


def now_values() -> dict:
    """The sidebar's values in this session (what Pin as A keeps)."""
    return {c.name: session.get(c.name, c.default) for c in SIDEBAR}


def pinned() -> Settings | None:
    """A's settings from the link, checked as the sidebar's are; None when none are pinned (a bad ``a=`` is dropped
    from the link and named in the sidebar's notice)."""
    from explorer.controls.state import check_for, settings_of

    raw = session.url(PARAM)
    if raw is None:
        return None
    values = decode(raw)
    try:
        settings = None if values is None else settings_of(values)
        if settings is not None:
            check_for(settings)
    except AttentionConfigError:
        settings = None
    if settings is None:
        session.drop_url(PARAM)
        session.notice(PARAM)
    return settings


def _pin() -> None:
    session.set_url(PARAM, encode(now_values()))


def _unpin() -> None:
    session.drop_url(PARAM)


def pin_ui(container, is_pinned: bool) -> None:
    """The *Pin as A* button, and *Unpin A* beside it while A is pinned."""
    left, right = container.columns(2)
    left.button(t("pair.pin"), help=t("pair.pin_help"), on_click=_pin, key="pin_a", icon=":material/push_pin:")
    if is_pinned:
        right.button(t("pair.unpin"), on_click=_unpin, key="unpin_a")


@bounded(max_mib=64)  # shared by every session: plain, hashable settings in, plain lists out
def compared(a: Settings, b: Settings, step: str, head: int, language: str) -> dict:
    """One step's main matrix for A and for B (lists), B − A (or None), their shared range and the line of words."""
    from explorer.controls.state import trace_for

    ta, tb = trace_for(a), trace_for(b)
    pair = step_matrices(ta, tb, step, head)

    def axis(trace, what: str, n: int) -> list[str]:
        if what == "dim":
            return [str(i) for i in range(n)]
        return list((trace.tokens if what == "query" else trace.key_tokens).words)

    return {
        "name": pair.name,
        "a": pair.a.tolist(),
        "b": pair.b.tolist(),
        "diff": None if pair.diff is None else pair.diff.tolist(),
        "shape_a": tuple(pair.a.shape),
        "shape_b": tuple(pair.b.shape),
        "bounds": pair.bounds,
        "axes": (pair.rows, pair.cols),
        "a_rows": axis(ta, pair.rows, pair.a.shape[0]),
        "a_cols": axis(ta, pair.cols, pair.a.shape[1]),
        "b_rows": axis(tb, pair.rows, pair.b.shape[0]),
        "b_cols": axis(tb, pair.cols, pair.b.shape[1]),
        "words": words(changed_most(ta, tb, head), language),
    }


def _labels(names: list[str], what: str) -> list[str]:
    return names if what == "dim" else fig.labels(names)


def compare_section(a: Settings, b: Settings, step: str, head: int) -> dict:
    """A and B side by side on one colour scale, then B − A (or why it cannot be drawn), then the line of words."""
    c = compared(a, b, step, head, lang())
    rows, cols = c["axes"]
    style = fig.run_style()
    st.subheader(t("pair.title", name=c["name"]))
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
                    style=style,
                ),
                f"pair_{side}",
            )
    if c["diff"] is None:
        st.info(t("pair.no_diff", a=c["shape_a"], b=c["shape_b"]), icon=":material/compare_arrows:")
    else:
        chart(
            fig.heatmap(
                c["diff"],
                _labels(c["b_cols"], cols),
                _labels(c["b_rows"], rows),
                title=t("pair.b_minus_a"),
                x_title=cols,
                y_title=rows,
                colorscale="RdBu",
                zmid=0,
                style=style,
            ),
            "pair_diff",
        )
    st.markdown(_plain(c["words"]))
    return c


def _plain(text: str) -> str:
    from explorer.base.safe import md

    return md(text)

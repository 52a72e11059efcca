"""Pin as A on Variants: each variant against full attention, in A and in B.

What a learner pins here is the question "what does my change do to each variant's error?": A keeps the sidebar's
settings and this page's own inputs (its window, its features); B is what they are now. The page shows each
variant's distance from full attention (the largest difference of the output and the mean KL of the weight rows)
under A and under B, and one variant's weights, A's beside B's on one colour scale, with B − A where their shapes
agree (else each query's entropy and largest weight), and what changed most in words. A link's ``a=`` silent on a
page input (A pinned on another page) takes the page's value now: the comparison is then the sidebar's change alone.

A comparison costs the two views it shows: the page's comparison under A's settings and under B's
(``results.comparison``, cached for every session as the page's own is); what is drawn is read from them.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st
import torch

from attn_core import AttentionConfigError, Settings
from explorer.base import tables, widgets
from explorer.base.i18n import error_text, kernel_label, label, lang, t
from explorer.base.safe import md
from explorer.steps import pin
from explorer.variants import results

KEY = "var_pair_kernel"  # which variant's weights are drawn for A and B
SAME = 5e-4  # an error that moved less than this (relative) is said to stay


@dataclass(frozen=True)
class _Words:
    words: tuple


@dataclass(frozen=True)
class _View:
    """A variant's weights as ``attn_core.pair`` reads a trace: one head, the sentence's tokens on both axes."""

    attn: torch.Tensor  # (1, L, L)
    tokens: _Words
    key_tokens: _Words


def a_settings(p: pin.Pin, chosen: dict) -> Settings:
    """A on this page: A's sidebar settings with the page inputs A holds, the page's own values for the others."""
    held = dict(p.page)
    return p.settings.with_options(**{name: held.get(name, value) for name, value in chosen.items()})


def _view(res: dict, kernel: str) -> _View:
    words = _Words(tuple(res["tokens"]))
    return _View(res["kernels"][kernel]["weights"].detach()[None].double(), words, words)


def compared(a_items: tuple, b_items: tuple, kernels: tuple, kernel: str, language: str) -> dict:
    """The chosen variant's ``pin.pair_view`` (A's weights beside B's), and every variant's errors in A and B: read
    from the two comparisons' cached results on each rerun, as the page's own charts read B's (no cache of its own)."""
    ra, rb = results.comparison(a_items, kernels), results.comparison(b_items, kernels)

    def error(r: dict, name: str) -> dict | None:  # None: the variant refused these settings
        e = r["kernels"].get(name)
        return None if e is None else {"max_abs": e["max_abs"], "kl": e["kl"]}

    errors = {name: {"a": error(ra, name), "b": error(rb, name)} for name in kernels}
    view = None
    if kernel in ra["kernels"] and kernel in rb["kernels"]:
        view = pin.pair_view(_view(ra, kernel), _view(rb, kernel), "variant", 0, language)
    return {"view": view, "errors": errors, "uniform": (ra["uniform"]["max_abs"], rb["uniform"]["max_abs"])}


def error_words(name: str, a: float, b: float) -> str:
    """The variant's error against full attention from A to B, in words."""
    key = "pair.var_error_same"
    if abs(b - a) > SAME * max(abs(a), abs(b), 1e-12):
        key = "pair.var_error_fell" if b < a else "pair.var_error_rose"
    return t(key, name=kernel_label(name), a=f"{a:.3g}", b=f"{b:.3g}")


def section(p: pin.Pin, b: Settings, chosen: dict, kernels: list[str]) -> dict | None:
    """The comparison on the Variants page (after the variants' own columns); returns what it drew, or None."""
    st.subheader(t("pair.var_title"))
    st.caption(t("pair.var_intro"))
    a = a_settings(p, chosen)
    try:
        results.comparison(a.key(), tuple(kernels))  # A's settings may not work with these variants at all
    except AttentionConfigError as err:
        message, fix = error_text(err)
        st.warning(t("pair.a_unusable", msg=md(f"{message} {fix}")), icon=":material/warning:")
        return None
    others = [k for k in kernels if k != "full"] or list(kernels)
    kernel = widgets.selectbox(st, t("pair.var_pick"), others, format_func=label("kernel.{}.label"), key=KEY)
    c = compared(a.key(), b.key(), tuple(kernels), kernel, lang())
    rows = []
    for name, sides in c["errors"].items():
        ea, eb = sides["a"], sides["b"]
        rows.append(
            {
                t("pair.var_col_kernel"): kernel_label(name),
                t("pair.var_col_err_a"): None if ea is None else ea["max_abs"],
                t("pair.var_col_err_b"): None if eb is None else eb["max_abs"],
                t("pair.var_col_kl_a"): None if ea is None else ea["kl"],
                t("pair.var_col_kl_b"): None if eb is None else eb["kl"],
            }
        )
    tables.dataframe(rows, hide_index=True)
    st.caption(t("pair.var_uniform", a=f"{c['uniform'][0]:.3g}", b=f"{c['uniform'][1]:.3g}"))
    sides = c["errors"][kernel]
    if c["view"] is None or sides["a"] is None or sides["b"] is None:  # refused under A or B: said above the page
        st.info(t("pair.var_refused", name=kernel_label(kernel)), icon=":material/info:")
        return c
    st.markdown(md(error_words(kernel, sides["a"]["max_abs"], sides["b"]["max_abs"])))
    pin.draw_pair(c["view"], title=t("pair.var_weights", name=kernel_label(kernel)))
    return c

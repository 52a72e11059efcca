"""The Variants page's spread sections: softmax, linear attention and Performer's entropies on the page's
input, softmax's dispersion as the keys grow (with the adaptive temperature as an option), and a window
with global (sink) tokens against the window alone. The numbers come from ``attn_core.why.spread``; these
functions cache them on plain values (shared by every session) and draw them."""

from __future__ import annotations

import streamlit as st
import torch

from attn_core import Settings
from attn_core.compare import compared, head0
from attn_core.kernels import KERNELS, effective_weights, kernel_options
from attn_core.trace import kernel_settings
from attn_core.why import spread as sp
from explorer import charts
from explorer.base import tables, widgets
from explorer.base.cache import bounded
from explorer.base.i18n import kernel_label, t
from explorer.charts.views import chart

SPREAD_KERNELS = ("full", "linear_elu", "performer")


@bounded(max_mib=1)
def entropies(items: tuple) -> dict:
    """{"n": keys per row at most, "kernels": {name: spread(...)}}: each kernel's effective weights on head 0
    of the page's input (the one the kernels are compared on), under its options from the settings."""
    s = compared(Settings(**dict(items)))
    q, k, _, base = head0(s)
    L = q.shape[-2]
    allowed = torch.ones(L, L, dtype=torch.bool)
    if s.causal:
        allowed = allowed.tril()
    out = {}
    for name in SPREAD_KERNELS:
        opts = kernel_options(KERNELS[name], **kernel_settings(s))
        w = effective_weights(name, q, k, causal=s.causal, scale=base.scale, **opts)[0, 0]
        out[name] = sp.spread(w, allowed)
    return {"n": L, "kernels": out}


@bounded(max_mib=1)
def dispersion(gap: float) -> dict:
    """Softmax's and the adaptive temperature's largest weight per n (``sp.DISPERSION_NS``) at score gap ``gap``."""
    return {"plain": sp.dispersion(gap), "adaptive": sp.dispersion(gap, adaptive=True)}


@bounded(max_mib=1)
def sinks(items: tuple) -> dict:
    """The window's relative error against full attention with g = 0, 1, 2, 4 global tokens (head 0)."""
    s = compared(Settings(**dict(items)))
    q, k, v, base = head0(s)
    return {
        "L": q.shape[-2],
        "window": s.window,
        "rows": sp.sink_errors(q, k, v, causal=s.causal, scale=base.scale, window=s.window),
    }


def draw_entropies(settings: Settings) -> None:
    st.subheader(t("va_ent_title"))
    try:
        res = entropies(settings.key())
    except ValueError:  # weights that are not a distribution (the engine checks): said, no number shown
        st.warning(t("va_ent_refused"), icon=":material/warning:")
        return
    ks = res["kernels"]
    rows = [
        {
            t("va_col_kernel"): kernel_label(name),
            t("va_col_entropy"): round(r["entropy"], 4),
            t("va_col_effective"): round(r["effective_keys"], 3),
            t("va_col_max_weight"): round(r["max_weight"], 4),
        }
        for name, r in ks.items()
    ]
    tables.dataframe(rows, hide_index=True)
    flat = [kernel_label(n) for n, r in ks.items() if r["uniform_rows"]]
    if flat:  # rows whose weights are all equal: entropy at its maximum, log n, said rather than left to be read
        st.info(t("va_ent_uniform", kernels=", ".join(flat)), icon=":material/info:")
    peaked = min(ks, key=lambda n: ks[n]["entropy"])
    spread = max(ks, key=lambda n: ks[n]["entropy"])
    st.caption(
        t(
            "va_ent_read",
            peaked=kernel_label(peaked),
            pk=ks[peaked]["effective_keys"],
            spread=kernel_label(spread),
            sk=ks[spread]["effective_keys"],
            n=res["n"],
            hmax=ks["full"]["max_entropy"],
        )
    )


def draw_dispersion(gap: float, adaptive: bool) -> None:
    res = dispersion(float(gap))
    plain, adapt = res["plain"], res["adaptive"]
    series = {t("va_softmax"): [r["max_weight"] for r in plain]}
    if adaptive:
        series[t("va_adaptive_series")] = [r["max_weight"] for r in adapt]
    chart(
        charts.line(
            [r["n"] for r in plain],
            series,
            title=t("va_disp_chart", gap=gap),
            x_title=t("va_disp_x"),
            y_title=t("va_disp_y"),
            log_x=True,
        ),
        "va_dispersion_chart",
    )
    at = {r["n"]: r for r in plain}
    at_a = {r["n"]: r for r in adapt}
    tables.dataframe(
        [
            {
                "n": n,
                t("va_softmax"): f"{at[n]['max_weight']:.4f}",
                t("va_adaptive_series"): f"{at_a[n]['max_weight']:.4f}",
                "β": f"{at_a[n]['beta']:.3f}",
            }
            for n in sp.QUOTED_NS
        ],
        hide_index=True,
    )
    first, last = sp.QUOTED_NS[0], sp.QUOTED_NS[-1]
    st.caption(
        t(
            "va_disp_read",
            gap=gap,
            a=at[first]["max_weight"],
            b=at[last]["max_weight"],
            c=at_a[first]["max_weight"],
            d=at_a[last]["max_weight"],
            beta=at_a[last]["beta"],
            n0=first,
            n1=last,
        )
    )


def draw_sinks(settings: Settings) -> None:
    st.subheader(t("va_sink_title"))
    res = sinks(settings.key())
    rows = res["rows"]
    tables.dataframe(
        [
            {
                t("va_col_g"): t("va_window_alone") if r["g"] == 0 else str(r["g"]),
                t("va_col_error"): f"{r['error']:.4g}",
            }
            for r in rows
        ],
        hide_index=True,
    )
    alone, best = rows[0], min(rows[1:], key=lambda r: r["error"])
    if alone["error"] < 1e-5:
        st.caption(t("va_sink_covered", w=res["window"], L=res["L"]))
    else:
        st.caption(t("va_sink_read", w=res["window"], e0=alone["error"], g=best["g"], eg=best["error"]))


OPEN_KEY = "va_spread_open"


def opened():
    """The expander the three sections are drawn in, or None while it is closed: nothing computed or drawn then
    (drawn on every rerun they doubled the page's CPU: benchmarks/results/rerun_cost_cpu.txt). A link that sets
    ``va_gap`` or ``va_adaptive`` opens it."""
    box = widgets.expander(
        st, t("va_spread_open"), key=OPEN_KEY, icon=":material/blur_on:", opened_by=("va_gap", "va_adaptive")
    )
    return box if box.open else None

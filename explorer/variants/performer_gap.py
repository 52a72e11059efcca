"""The Variants page's Performer chart: how far its output is from exact softmax, beside uniform
attention's (every query averaging the values), as the logits' scale and the features count m vary.

Large logits make attention peaked and random features noisy: there Performer has nothing to
offer over averaging (its shrinkage brings it back to about uniform's error); small logits and
many features are where it helps. Computed on head 0 of the current sentence (the input the other
charts use), the logits multiplied by each factor; shared by every session (plain values in,
plain numbers out)."""

from __future__ import annotations

import streamlit as st
import torch

from attn_core import Settings
from attn_core.compare import compared, head0
from attn_core.kernels import full_attention, run_kernel
from explorer import charts
from explorer.base import widgets
from explorer.base.cache import bounded
from explorer.base.i18n import t
from explorer.charts.views import chart

FACTORS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)  # the logits' scale, times the app's 1/√d_k
FEATURES = (4, 16, 64, 256, 1024)
SEEDS = 4  # feature draws averaged per point
OPEN_KEY = "var_pg_open"  # the expander's state (a widget key)


def _rel(out: torch.Tensor, exact: torch.Tensor) -> float:
    return float((out.double() - exact).norm() / exact.norm().clamp_min(1e-30))


@bounded(max_mib=4)
def gap_curves(items: tuple) -> dict:
    """{"factors", "features", "uniform": [err per factor], "performer": {m: [err per factor]}}:
    relative errors of the output against exact softmax (mean over ``SEEDS`` feature draws)."""
    s = compared(Settings(**dict(items)))  # the sidebar's Mask = causal is the kernels' causal flag
    q, k, v, base = head0(s)
    scale = base.scale
    causal = s.causal
    uniform, perf = [], {m: [] for m in FEATURES}
    allowed = torch.ones(q.shape[-2], q.shape[-2]).tril() if causal else torch.ones(q.shape[-2], q.shape[-2])
    mean_v = (allowed / allowed.sum(-1, keepdim=True)) @ v[0, 0]
    for f in FACTORS:
        exact = full_attention(q.double(), k.double(), v.double(), causal=causal, scale=scale * f)[0, 0]
        uniform.append(_rel(mean_v, exact))
        for m in FEATURES:
            errs = [
                _rel(
                    run_kernel("performer", q, k, v, causal=causal, scale=scale * f, features=m, seed=seed)[0, 0],
                    exact,
                )
                for seed in range(SEEDS)
            ]
            perf[m].append(sum(errs) / len(errs))
    return {"factors": list(FACTORS), "features": list(FEATURES), "uniform": uniform, "performer": perf}


def section(settings: Settings) -> None:
    """The chart and what to read in it, in an expander computed only while it is open: 120
    Performer calls per sentence (~0.1 s of CPU), which a class changing settings would otherwise pay
    on every visit to the page (benchmarks/results/class_capacity_cpu.txt)."""
    box = widgets.expander(st, t("pg_title"), key=OPEN_KEY)
    if not box.open:
        return
    with box:
        st.caption(t("pg_intro"))
        res = gap_curves(settings.key())
        series = {
            t("pg_series", m=m): [p - u for p, u in zip(res["performer"][m], res["uniform"])] for m in res["features"]
        }
        chart(
            charts.line(
                res["factors"],
                series,
                title=t("pg_chart"),
                x_title=t("pg_x"),
                y_title=t("pg_y"),
                log_x=True,
            ),
            "var_performer_gap",
        )
        best = min(
            (
                (p - u, m, f)
                for m in res["features"]
                for p, u, f in zip(res["performer"][m], res["uniform"], res["factors"])
            ),
        )
        st.caption(t("pg_best", gap=best[0], m=best[1], f=best[2]) if best[0] < 0 else t("pg_none"))

"""The Lab's sink view: each head's first-token score (``attn_core.lab.training.head_scores``'s ``first``: the weight
queries after the first put on it) against the step, drawn only while its expander is open."""

from __future__ import annotations

import streamlit as st

from explorer import charts
from explorer.base import widgets
from explorer.base.i18n import t
from explorer.charts.views import chart

GU_EPSILON = 0.3  # Gu et al. 2025 call a head a sink when its mean first-token weight reaches this


def section(name: str, snaps: list) -> None:
    """Run ``name``'s heads' first-token scores over its snapshots (those that have one: runs kept from before the
    score have none), with Gu et al.'s threshold as a reference line."""
    box = widgets.expander(st, t("lab_sink_open"), key=f"lab_sink_open_{name}", icon=":material/anchor:")
    if not box.open:
        return
    scored = [x for x in snaps if x.scores and "first" in x.scores[0][0]]
    with box:
        if not scored:
            st.caption(t("lab_sink_none"))
            return
        layers, heads = len(scored[0].scores), len(scored[0].scores[0])
        series = {
            t("lab_head", layer=layer, head=h): [x.scores[layer][h]["first"] for x in scored]
            for layer in range(layers)
            for h in range(heads)
        }
        steps = [x.step for x in scored]
        figure = charts.line(steps, series, title=t("lab_sink_title"), x_title="step")
        figure.add_hline(y=GU_EPSILON, line_dash="dot", annotation_text=t("lab_sink_eps", eps=GU_EPSILON))
        chart(figure, f"lab_sink_{name}")
        last = {k: v[-1] for k, v in series.items()}
        top = max(last, key=last.get)
        st.caption(t("lab_sink_note", head=top, w=f"{last[top]:.3f}", eps=GU_EPSILON))

"""Step by step's "Queries and keys as a map": the current head's queries and keys on one map (attn_core.why.qkmap),
drawn only while its expander is open."""

from __future__ import annotations

import streamlit as st

from attn_core.why import qk_map

from . import figures as fig
from . import widgets
from .i18n import t
from .views import chart

OPEN_KEY = "qk_map_open"


def section(trace, head: int, focus: int, q_labels: list[str], k_labels: list[str]) -> None:
    box = widgets.expander(st, t("qk_open"), key=OPEN_KEY, icon=":material/scatter_plot:")
    if not box.open:
        return
    with box:
        Q, K = trace.Q[head], trace.K[head]
        if trace.settings.score == "additive" or Q.shape[-1] != K.shape[-1]:
            st.info(t("qk_not_dot"), icon=":material/info:")
            return
        st.caption(t("qk_intro"))
        scaled = trace.scaled_scores
        scores = scaled[head] if scaled is not None else (Q @ K.T) * trace.scale
        m = qk_map(Q, K, scores, trace.mask)
        r = f"{m.correlation:.3f}" if m.correlation is not None else t("qk_no_r")
        if Q.shape[-1] == 1:  # one number per query and key: a line, not a map; said instead of "PCA keeps 100%"
            note = t("qk_one_dim", r=r)
        elif m.method == "exact":
            note = t("qk_exact", r=r)
        else:
            note = t("qk_pca", d=Q.shape[-1], share=f"{m.explained:.0%}", r=r)
        chart(
            fig.qk_scatter(
                m.queries,
                m.keys,
                q_labels,
                k_labels,
                trace.attn[head, focus],
                focus=focus,
                title=t("qk_title", h=head),
                style=fig.run_style(),
            ),
            "chart_qk_map",
        )
        st.caption(note)

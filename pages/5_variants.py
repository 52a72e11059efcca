"""Variants: efficient kernels side by side with full attention on the current sentence."""

import streamlit as st

from attn_core import AttentionConfigError
from attn_core.kernels import KERNELS
from attn_core.knobs import KNOBS
from explorer import charts
from explorer import figures as fig
from explorer.base import session, widgets
from explorer.base.i18n import STRINGS, error_text, kernel_label, label, t, tex
from explorer.base.safe import md
from explorer.boot import run_through_app
from explorer.charts.views import chart
from explorer.controls import PAGE, draw, later
from explorer.controls.state import current_settings
from explorer.steps import pin
from explorer.variants import performer_gap, pin_view, spread_view
from explorer.variants import results as variants

run_through_app()  # before anything is drawn; see explorer/boot.py

st.title(t("page.variants"))
st.caption(t("var_intro"))
settings = current_settings()
names = [k for k, spec in KERNELS.items() if spec.teaching]
# labels in the UI's language: re-pinned on a switch (see controls)
session.translated("var_kernels", "var_curve", pin_view.KEY)
picked = widgets.multiselect(
    st,
    t("var_pick"),
    names,
    default=["full", "sliding_window", "linear_elu"],
    format_func=label("kernel.{}.label"),  # the language of the run that drew it
    key="var_kernels",
    max_selections=4,
)
inputs = variants.inputs()  # the page's own value of these knobs
chosen = {
    name: widgets.number(col, t(KNOBS[name].label), span.low, span.high, span.default, key=f"var_{name}")
    for col, (name, span) in zip(st.columns(len(inputs)), inputs.items())
}
s = settings.with_options(**chosen)
window = s.window


if len(picked) < 2:
    st.info(t("var_need_two"))
    st.stop()
try:
    res = variants.comparison(s.key(), tuple(picked))
except AttentionConfigError as err:
    message, fix = error_text(err)
    st.error(f"{md(message)} {t('fix_prefix')} {md(fix)}", icon=":material/warning:")
    st.stop()

labels = fig.labels(res["tokens"])
L = len(labels)
if res["causal"]:
    st.caption(t("var_causal"))
if res["mask_not_applied"]:
    st.info(t("var_mask_not_applied", mask=label("opt.")(res["mask_not_applied"])), icon=":material/info:")
for name, err in res["refused"].items():  # a kernel these settings rule out: said beside the others
    message, fix = error_text(err)
    st.error(f"{md(message)} {t('fix_prefix')} {md(fix)}", icon=":material/warning:")
shown = [k for k in picked if k in res["kernels"]]
if any(KERNELS[k].family == "sparse" for k in shown) and window >= L - 1:
    st.warning(t("window_too_big", w=window, L=L))
for col, name in zip(st.columns(max(1, len(shown))), shown):  # each kernel's weights: the first screen
    k, r = KERNELS[name], res["kernels"][name]
    with col:
        st.markdown(f"**{md(kernel_label(name))}**")
        st.latex(tex(k.formula))
        st.caption(f"{t('cost_time')} {k.time} · {t('cost_memory')} {k.memory}  \n{t('paper')}: {k.paper}")
        chart(
            charts.heatmap(
                r["weights"],
                labels,
                labels,
                title=t("attn_weights"),
                x_title="key",
                y_title="query",
                height=340,
                weights=True,
            ),
            f"var_w_{name}",
        )


def kernel_facts() -> None:
    """Under each kernel's weights: its pattern, its distance from full attention and from uniform weights, how it
    works."""
    base = res["uniform"]["max_abs"]
    for col, name in zip(st.columns(max(1, len(shown))), shown):
        k, r = KERNELS[name], res["kernels"][name]
        with col:
            if r["pattern"] is not None:
                chart(
                    charts.heatmap(r["pattern"], labels, labels, title=t("pattern"), colorscale="Blues", height=300),
                    f"var_p_{name}",
                )
            st.metric(t("max_abs"), f"{r['max_abs']:.4g}", help=t("uniform_help"))
            st.caption(t("uniform_beside", u=base))
            if k.family != "full" and r["max_abs"] >= base:
                st.warning(t("no_better_than_uniform"), icon=":material/balance:")
            st.metric(t("kl"), f"{r['kl']:.4g}")
            st.metric(t("cos"), f"{r['cos']:.4f}")
            with st.expander(t("how")):
                how = f"kernel.{name}.how"  # the engine's docstring, in the UI's language
                st.text(t(how) if how in STRINGS else k.doc)


def below_the_weights() -> None:
    """Everything under the kernels' weights (``later``: on a tab's first run, once those maps are on screen: a new
    tab's browser draws one run's charts in one batch, and the four to seven charts under them held the first back)."""
    kernel_facts()
    pinned = pin.pin()  # A from the link's a=: the sidebar's settings and this page's inputs when pinned here
    pin.pin_ui(st, pinned is not None, page=chosen)
    if pinned is not None:  # each variant against full attention in A and in B; one variant's weights, A beside B
        pin_view.section(pinned, s, chosen, picked)

    sweepable = [n for n in shown if KERNELS[n].sweep]
    if sweepable:
        name = widgets.selectbox(
            st, t("curve", p="…"), sweepable, format_func=label("kernel.{}.label"), key="var_curve"
        )
        param = KERNELS[name].sweep
        values = variants.curve_values(param, L)
        rows = variants.curve(s.key(), name, values)
        if rows:
            chart(
                charts.line(
                    [r[param] for r in rows],
                    {
                        t("max_abs"): [r["max_abs"] for r in rows],
                        t("kl"): [r["kl"] for r in rows],
                        t("uniform_line"): [r["uniform_max_abs"] for r in rows],
                    },
                    title=t("curve", p=t(KNOBS[param].label)),
                    x_title=t(KNOBS[param].label),
                    log_x=KNOBS[param].log,
                ),
                "var_curve_chart",
            )

    if box := spread_view.opened():  # how spread attention is: entropies, dispersion, sink tokens (only while open)
        with box:
            spread_view.draw_entropies(s)  # softmax, linear attention and Performer: how spread their weights are
            st.subheader(t("va_disp_title"))
            st.caption(t("va_disp_intro"))
            c1, c2 = st.columns(2)
            gap = draw(PAGE["va_gap"], c1)
            adaptive = draw(PAGE["va_adaptive"], c2)
            spread_view.draw_dispersion(gap, adaptive)
            spread_view.draw_sinks(s)  # a window with global (sink) tokens against the window alone

    performer_gap.section(s)  # when random features beat averaging: against the logits' scale and m


later.below_first_screen("variants", below_the_weights)

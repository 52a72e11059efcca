"""Real model: a trained encoder's attention, and one head taken apart through attn_core's steps."""

import json

import streamlit as st

from attn_core import AttentionConfigError
from attn_core import models as pt
from attn_core.models.heads import uniform_entropy
from explorer import charts
from explorer import figures as fig
from explorer.base import tables, widgets
from explorer.base.i18n import error_text, lang, t
from explorer.base.safe import md
from explorer.boot import run_through_app
from explorer.charts.views import (
    WEIGHTED_SUM,
    chart,
    focus_select,
    mask_step,
    matrix_chart,
    output_step,
    scores_step,
    softmax_step,
)
from explorer.classroom import takehome
from explorer.controls import PAGE, draw, later, present
from explorer.controls.state import current_settings
from explorer.model import causal, pair_view, pick, real, why_view
from explorer.poll.view import predict_then_reveal
from explorer.steps import qk_view

run_through_app()  # before anything is drawn; see explorer/boot.py

presenting = present.on()  # ?present=1: the sections walked one at a time, the settings folded away
if presenting:
    walk_row = st.container()
else:
    title, toggle = st.columns([5, 1], vertical_alignment="bottom")
    title.title(t("page.model"))
    with toggle:
        present.toggle()
intro = st.empty()  # what reads the sentence, said once the model chosen below is known (not when presenting)
settings = current_settings()
if presenting:  # the settings, and the formula and code of the head taken apart, fold away side by side
    left, formula_slot = st.columns(2)
    box = left.expander(t("rm_settings"))
else:
    box = st.expander(t("rm_settings"))
about = box if presenting else st  # the model, the sentence and its pieces: folded away when presenting
spec = pick.choose(box)
try:
    pre = real.model(spec)
except pt.ModelUnavailable as err:
    message, fix = error_text(err)
    st.error(t("rm_unavailable", msg=md(message)), icon=":material/warning:")
    st.caption(md(fix))
    st.caption(t("rm_install"))
    st.code(pt.INSTALL, language="bash")
    st.stop()
if pre is None:  # still loading in the background (it starts with the server): never block the page
    real.wait_on_page(spec)
if not presenting:
    intro.caption(t("dec.rm_intro", name=md(pre.name)) if pre.causal else t("rm_intro"))
pad_to = 0 if pre.causal else draw(PAGE["rm_pad"], box)  # a decoder is never padded: it sees no later key
try:
    run = real.run(spec, settings.sentence, pad_to)
except AttentionConfigError as err:
    st.warning(t("invalid", msg=md(" ".join(error_text(err)))), icon=":material/warning:")
    st.stop()

enc = run.encoding
pieces = list(enc.pieces)
if pre.causal:
    about.caption(t("dec.intro"))
labels = fig.labels(pieces)
about.caption(
    t(
        "rm_model_caption",
        name=pre.name,
        layers=pre.layers,
        heads=pre.heads,
        d=pre.d_model,
        dh=pre.d_head,
        n=pre.n_params,
    )
)
about.caption(t("your_sentence"))
about.text(settings.sentence)
if enc.truncated:
    st.warning(t("rm_truncated", n=enc.n_total, max=pre.max_positions), icon=":material/content_cut:")
if enc.unk and enc.unk_share >= pt.UNK_NOTICE:
    st.warning(t("rm_unk", unk=enc.unk, n=enc.n_real - enc.specials), icon=":material/help:")
about.caption(t("dec.pieces" if pre.causal else "rm_pieces"))
with box if presenting else st.container():
    tables.dataframe(  # every piece on view up to a dozen, then a scroll box
        {t("position"): list(range(len(pieces))), t("token"): pieces, t("id"): list(enc.ids)},
        hide_index=True,
        height=min(38 + 35 * len(pieces), 460),
    )


def overview_ui(layer: int, head: int) -> None:
    """Every head's weights, the head taken apart below outlined."""
    st.subheader(t("rm_overview"))
    st.caption(t("rm_overview_note"))
    grid, grid_labels = pt.overview(run)
    if len(grid_labels) < len(pieces):
        st.caption(t("rm_pooled", n=len(pieces), m=len(grid_labels)))
    if pre.causal:
        st.caption(t("dec.causal_grid"))
    chart(
        charts.small_multiples(
            causal.shown(grid, pre.causal).numpy(),
            labels=grid_labels,
            row_name=t("rm_layer"),
            col_name=t("head"),
            mark=(layer, head),
        ),
        "rm_overview",
    )


def compare_ui(layer: int, head: int, ht: pt.HeadTrace, rnd: pt.HeadTrace, floor: float) -> None:
    """The trained head as lines and as a heatmap, beside the same head with random weights."""
    uniform = uniform_entropy(ht.mask)  # even weights over the keys each query may see (a decoder: fewer)
    a, b, c = st.columns(3)
    with a:
        chart(
            charts.attention_lines(
                ht.model_attn,
                labels,
                labels,
                min_weight=floor,
                title=t("rm_head_view", l=layer, h=head),
                left=t("queries"),
                right=t("keys"),
                allowed=ht.mask,
            ),
            "rm_lines",
        )
    for col, title, h_trace, key in ((b, t("rm_model_weights"), ht, "trained"), (c, t("rm_untrained"), rnd, "random")):
        with col:
            chart(
                charts.heatmap(
                    causal.shown(h_trace.model_attn if key == "trained" else h_trace.attn[0], pre.causal),
                    labels,
                    labels,
                    title=title,
                    x_title="key",
                    y_title="query",
                    weights=True,
                ),
                f"rm_{key}_heatmap",
            )
            st.metric(t("rm_entropy", u=uniform), f"{pt.row_entropy(h_trace.attn, h_trace.mask):.3f}")
    st.caption(t("rm_random_intro", d=pre.d_model, seed=settings.seed))


def qkv_ui(ht: pt.HeadTrace, layer: int, head: int, explain) -> None:
    explain.latex(r"Q = x W_q^\top + b_q,\quad K = x W_k^\top + b_k,\quad V = x W_v^\top + b_v")
    shapes = {"W_q": tuple(ht.weights.W_q[0].shape), "x": tuple(ht.x.shape), "Q": tuple(ht.Q[0].shape)}
    widgets.code(explain, causal.projection_code(pre, layer, head, shapes))
    which = widgets.radio(
        st, t("weights_of", name=""), ["x", "Q", "K", "V", "W_q", "W_k", "W_v"], horizontal=True, key="rm_which"
    )
    if which == "x":
        m, rows, title = ht.x, labels, t("rm_x", l=layer)
    elif which in ("Q", "K", "V"):
        m, rows, title = getattr(ht, which)[0], labels, which
    else:
        m = getattr(ht.weights, which)[0]
        rows, title = [str(i) for i in range(m.shape[0])], which
    cols = [str(i) for i in range(m.shape[1])]
    matrix_chart(  # a chart and its CSV download
        charts.heatmap(
            m,
            cols,
            rows,
            title=f"{title} {tuple(m.shape)}",
            x_title="dim",
            colorscale="RdBu",
            zmid=0,
        ),
        which,
        m,
        rows,
        cols,
        key_prefix="rm_",
    )


def scores_ui(ht: pt.HeadTrace, layer: int, head: int, explain) -> None:
    d = pre.d_head
    explain.latex(rf"e_{{ij}} = \frac{{q_i^\top k_j}}{{\sqrt{{d_{{head}}}}}} = \frac{{q_i^\top k_j}}{{\sqrt{{{d}}}}}")
    widgets.code(
        explain,
        f"scores = Q @ K.T            # {tuple(ht.scores[0].shape)}\nscaled = scores * {ht.scale:.6g}  # 1/sqrt({d})",
    )
    scores_step(ht, 0, pieces, pieces, key_prefix="rm_")


def mask_ui(ht: pt.HeadTrace, layer: int, head: int, explain) -> None:
    L = len(pieces)
    if pre.causal:
        explain.latex(causal.CAUSAL_LATEX)
        widgets.code(explain, causal.causal_code(L))
        st.caption(t("dec.causal_mask"))
        mask_step(ht, pieces, pieces, key_prefix="rm_")
        return
    explain.latex(
        r"\tilde e_{ij} = \begin{cases} e_{ij} & j \text{ is a real piece} \\ -\infty & j \text{ is [PAD]}\end{cases}"
    )
    widgets.code(
        explain,
        f"mask = padding([{enc.n_real}], {L}, {L})[0]   # bool, True = may attend\n"
        "scaled = scaled.masked_fill(~mask, float('-inf'))",
    )
    if enc.n_real == L:
        st.info(t("rm_no_padding"))
    mask_step(ht, pieces, pieces, key_prefix="rm_")


def softmax_ui(ht: pt.HeadTrace, layer: int, head: int, explain) -> None:
    softmax_step(ht, 0, pieces, pieces, key_prefix="rm_")


def output_ui(ht: pt.HeadTrace, layer: int, head: int, explain) -> None:
    explain.latex(WEIGHTED_SUM)
    widgets.code(
        explain,
        f"weights = F.softmax(scaled, dim=-1)  # {tuple(ht.attn[0].shape)}\n"
        f"context = weights @ V               # {tuple(ht.context[0].shape)}\n"
        f"(weights - outputs.attentions[{layer}][0, {head}]).abs().max()  # {ht.max_diff:.3g}",
    )
    output_step(ht, 0, pieces, pieces, weights_title=t("attn_weights") + " (attn_core)", key_prefix="rm_")


STEP_LABEL = {"rm_st_mask": "dec.st_mask"} if pre.causal else {}  # a decoder's mask is the causal one
STEP_UI = {  # each step of the head taken apart (explorer.controls.RM_STEPS), drawn by one function
    "rm_st_qkv": qkv_ui,
    "rm_st_scores": scores_ui,
    "rm_st_mask": mask_ui,
    "rm_st_softmax": softmax_ui,
    "rm_st_output": output_ui,
}


def apart_ui(ht: pt.HeadTrace, layer: int, head: int) -> None:
    """The head recomputed through attn_core's steps, checked against the model's own weights (presenting: the
    check, the step's choice and its formula and code folded away, the step's chart on the first screen)."""
    st.subheader(t("rm_apart"))
    st.caption(
        causal.apart_intro(pre, ht.weights, layer, head) if pre.causal else t("rm_apart_intro", l=layer, h=head)
    )
    explain = formula_slot.expander(t("present_formula")) if presenting else st
    checked = explain if presenting else st.container()  # presenting: the check is folded with the formula
    if ht.max_diff < 1e-5:
        checked.success(t("rm_diff_ok", d=ht.max_diff), icon=":material/check_circle:")
    else:
        st.error(t("rm_diff_bad", d=ht.max_diff), icon=":material/warning:")  # on view: the check failed
    checked.metric(t("rm_diff"), f"{ht.max_diff:.3g}")
    language = lang()  # the labels' language, fixed when drawn (the widget formats them after the run too)
    step_names = lambda s: t(STEP_LABEL.get(s, s), language=language)
    step = draw(PAGE["rm_step"], box if presenting else st, horizontal=True, format_func=step_names)
    STEP_UI[step](ht, layer, head, explain)


def downloads_ui(ht: pt.HeadTrace, layer: int, head: int) -> None:
    st.download_button(
        t("rm_download"),
        lambda: json.dumps(pt.to_dict(pre, ht, run), ensure_ascii=False),
        f"head_L{layer}_H{head}.json",
        "application/json",
        key="rm_dl_json",
        on_click="ignore",
    )
    if pre.causal:
        st.caption(t("dec.no_notebook"))
    else:
        takehome.offer_model(spec, settings.sentence, pad_to, layer, head)  # this head as a notebook


def head_ui(predicting: bool) -> None:
    """Layer/head choice and everything that depends on it (a fragment unless predicting: it
    reruns alone when they change): controls, then the engine's results, then the drawing."""
    c1, c2, c3 = (box if presenting else st).columns(3)  # presenting: with the settings, folded away
    layer = draw(PAGE["rm_layer"], c1, high=pre.layers - 1)
    head = draw(PAGE["rm_head"], c2, high=pre.heads - 1)
    floor = widgets.slider(c3, t("min_weight"), 0.0, 0.5, 0.05, 0.01, key="rm_floor")
    ht = real.head(spec, settings.sentence, pad_to, layer, head)
    focus = None
    if predicting:  # predict, then reveal, for the trained head
        n = enc.n_real
        focus = focus_select(st.columns([1, 2])[0], labels[:n])
        question = ("model", spec, settings.sentence, pad_to, layer, head, focus)
        row = ht.model_attn[focus, :n].tolist()
        predict_then_reveal(row, question, pieces[focus], pieces[:n])  # stops until answered
    if presenting:  # one section at a time, walked with Back / Next
        narrations = {
            "overview": t(
                "present.rm_overview", name=md(pre.name), layers=pre.layers, heads=pre.heads, l=layer, h=head
            ),
            "compare": t("present.rm_compare", l=layer, h=head),
            "apart": t("present.rm_apart", d=f"{ht.max_diff:.2g}"),
        }
        titles = {"overview": t("rm_overview"), "compare": t("rm_compare"), "apart": t("rm_apart")}
        part = present.parts(PAGE["rm_part"], box, walk_row, titles, narrations)
        with present.part_box():
            if part == "overview":
                overview_ui(layer, head)
            elif part == "compare":
                rnd = real.random_head(spec, settings.sentence, pad_to, layer, settings.seed)
                compare_ui(layer, head, ht, rnd, floor)
            else:
                apart_ui(ht, layer, head)
        return
    overview_ui(layer, head)  # it holds the asked-about head: after the answer
    later.below_first_screen("model", lambda: below_overview(ht, layer, head, floor, focus))


def below_overview(ht: pt.HeadTrace, layer: int, head: int, floor: float, focus: int | None) -> None:
    """The head under the overview (``later``: on a tab's first run, once the overview is on screen)."""
    rnd = real.random_head(spec, settings.sentence, pad_to, layer, settings.seed)
    compare_ui(layer, head, ht, rnd, floor)
    apart_ui(ht, layer, head)
    qk_view.model_section(ht, spec, layer, head, labels, enc.n_real, (PAGE["qk_colour"], PAGE["rm_qk_probes"]), focus)
    downloads_ui(ht, layer, head)
    why_view.why_ui(spec, settings.sentence, pad_to, pre.layers, pre.heads, layer, head, enc.n_real)


# Predict, then reveal: the overview holds the asked-about head, so it waits for the answer, and
# a change of layer or head reruns the whole page (a fragment's rerun could not take it back).
# Presenting, the layer and head are drawn with the settings, outside any fragment: the whole page reruns.
if draw(PAGE["predict"], box if presenting else st):
    head_ui(True)
elif presenting:
    head_ui(False)
else:
    st.fragment(head_ui)(False)
if not presenting:  # a second sentence, a word changed: what moved (a fragment: its pickers rerun only it)
    st.fragment(pair_view.model_section)(spec, settings.sentence)

"""Inside the model: ablate heads, mask tokens, patch and prune the trained encoder; what each head does."""

import zlib

import streamlit as st

from attn_core import AttentionConfigError
from attn_core import models as pt
from attn_core.interpret import ablate, prune, roles
from explorer import charts
from explorer import figures as fig
from explorer.base import tables, widgets
from explorer.base.i18n import error_text, t
from explorer.base.safe import md, md_t
from explorer.boot import run_through_app
from explorer.charts.views import chart
from explorer.controls.state import current_settings
from explorer.jobs import waiting
from explorer.model import inside, inside_view, match_view, pair_view, pick, real

run_through_app()  # before anything is drawn; see explorer/boot.py

waiting.warm()  # a worker loads the model while the page is read
st.title(t("page.inside"))
intro = st.empty()  # what reads the sentence and what is measured, said once the model chosen below is known
settings = current_settings()
name = pick.choose(st.expander(t("dec.model_box")))
try:
    pre = real.model(name)
except pt.ModelUnavailable as err:
    st.error(t("rm_unavailable", msg=md(" ".join(error_text(err)))), icon=":material/warning:")
    st.stop()
if pre is None:  # still loading in the background: never block the page
    real.wait_on_page(name)
if pre.causal:
    intro.caption(t("dec.in_intro", name=md(pre.name), layers=pre.layers, heads=pre.heads))
else:
    intro.caption(t("in_intro"))


def bad(err: AttentionConfigError) -> None:
    st.warning(t("invalid", msg=md(" ".join(error_text(err)))), icon=":material/warning:")


sentence = settings.sentence
try:
    enc = pt.encode(pre, sentence)
except AttentionConfigError as err:
    bad(err)
    st.stop()
pieces = list(enc.pieces)
st.caption(t("your_sentence"))
st.text(sentence)
if enc.truncated:
    st.warning(t("rm_truncated", n=enc.n_total, max=pre.max_positions), icon=":material/content_cut:")
if enc.unk and enc.unk_share >= pt.UNK_NOTICE:
    st.warning(t("rm_unk", unk=enc.unk, n=enc.n_real - enc.specials), icon=":material/help:")
if pre.causal:  # a decoder: everything is measured on the next token
    inside_view.page(name, pre, sentence, enc)
    pair_view.inside_section(name, sentence)  # a minimal pair, folded away; heads matched with another model
    match_view.section(name)
    st.stop()
if enc.n_real <= 3:
    st.info(t("in_one_piece"), icon=":material/info:")

second = widgets.text(st, t("in_second"), key="in_second", max_chars=1000).strip() or None
MODE_LABELS = {"zero": t("in_mode_zero"), "uniform": t("in_mode_uniform"), "mean": t("in_mode_mean")}
mode = widgets.radio(  # a label the browser sent that is not an option: the first mode
    st,
    t("in_mode"),
    list(MODE_LABELS),
    format_func=lambda m: MODE_LABELS.get(m, str(m)),
    horizontal=True,
    key="in_mode",
)
c1, c2 = st.columns(2)
head_names = [f"{layer}:{head}" for layer, head in ablate.all_heads(pre)]
chosen = widgets.multiselect(c1, t("in_heads"), head_names, key="in_heads", placeholder="0:1, 3:4 …")
mask_key = f"in_mask_{zlib.crc32(' '.join(pieces).encode())}"  # a new sentence starts with nothing masked
masked = widgets.multiselect(
    c2, t("in_mask"), list(range(len(pieces))), format_func=lambda i: f"{i} {pieces[i]}", key=mask_key
)
st.caption(t("in_mask_note"))
try:
    heads = ablate.parse_heads(",".join(str(h) for h in chosen), pre.layers, pre.heads)
    masked = ablate.parse_tokens(",".join(str(i) for i in masked), len(pieces))
    result = inside.intervention(name, sentence, heads, mode, masked, second)
except AttentionConfigError as err:
    bad(err)
    st.stop()
if len(heads) == pre.layers * pre.heads:
    st.info(t("in_all_heads"), icon=":material/info:")
m1, m2, m3 = st.columns(3)
m1.metric(t("in_cosine"), f"{result['cosine']:.6f}")
if result["pair_cosine"] is not None:
    m2.metric(
        t("in_pair"), f"{result['pair_cosine']:.4f}", f"{result['pair_cosine'] - result['pair_cosine_original']:+.4f}"
    )
m3.metric(t("in_changed"), f"{result['changed']:.3g}")
st.caption(t("in_cosine_note"))
labels = fig.labels(pieces)
if result["attentions"] is not None:
    st.subheader(t("in_after"))
    chart(
        charts.small_multiples(
            result["attentions"].numpy(),
            labels=labels,
            row_name=t("rm_layer"),
            col_name=t("head"),
        ),
        "in_after",
    )
else:
    st.caption(t("in_after_long", n=len(pieces)))

st.subheader(t("in_importance"))
st.caption(t("in_importance_note"))
try:  # a sentence too long for the 72 ablated passes is refused here at once, not by the job
    ablate.check_length(pre, enc)
    if second is not None:
        ablate.check_length(pre, pt.encode(pre, second))
except AttentionConfigError as err:
    bad(err)
    imp_job = None
    waiting.ask("inside_imp", {})
else:
    imp_request = inside.on(name, inside.importance(sentence, mode, masked, second))
    imp_job = waiting.ask("inside_imp", {"importance": imp_request})["importance"]
if imp_job is not None and waiting.status(imp_job):
    imp = imp_job.result
    z = imp["importance"]
    chart(
        charts.head_grid(
            z,
            title=t("in_importance_title"),
        ),
        "in_imp",
    )
    if "pair" in imp:
        chart(
            charts.head_grid(
                imp["pair"],
                title=t("in_pair_title"),
            ),
            "in_pair",
        )

st.subheader(t("in_patch"))
st.caption(t("in_patch_note"))
if second is None:
    st.info(t("in_patch_need"), icon=":material/info:")
    waiting.ask("inside_patch", {})
else:
    pm_job = waiting.ask("inside_patch", {"patching": inside.on(name, inside.patching(sentence, second))})["patching"]
    if waiting.status(pm_job):
        pm = pm_job.result
        if pm["identical"]:
            st.info(t("in_patch_same"), icon=":material/info:")
        else:
            st.caption(t("in_patch_base", d=pm["base_distance"]))
            chart(
                charts.head_grid(
                    pm["restored"],
                    title=t("in_patch_title"),
                    colorscale="RdBu",
                    zmid=0,
                ),
                "in_patch",
            )

st.subheader(t("in_prune"))
st.caption(t("in_prune_note", n=prune.PRUNE_SENTENCES))
pr_job = None
if widgets.toggle(st, t("in_prune_go"), key="in_prune_go"):
    pr_job = waiting.ask("inside_prune", {"pruning": inside.on(name, inside.pruning())})["pruning"]
else:
    waiting.ask("inside_prune", {})
if pr_job is not None and waiting.status(pr_job):
    pr = pr_job.result
    curve = charts.line(
        [round(100 * x) for x in pr["removed"]],
        {t("in_prune_series"): pr["cosine"]},
        title=t("in_prune_title"),
        x_title=t("in_prune_x"),
        y_title="cosine",
    )
    curve.add_vline(x=100 * prune.MICHEL_BERT_MNLI, line_dash="dash", annotation_text=t("in_michel"))
    chart(curve, "in_prune")
    st.caption(t("in_michel_note"))

st.subheader(t("in_roles"))
st.caption(t("in_roles_note"))
roles_job = None
if widgets.toggle(st, t("in_roles_go"), key="in_roles_go"):
    roles_job = waiting.ask("inside_roles", {"head_stats": inside.on(name, inside.head_stats())})["head_stats"]
else:
    waiting.ask("inside_roles", {})
if roles_job is not None and waiting.status(roles_job):
    stats = roles_job.result
    rel_names = {
        "coref": t("in_rel_coref"),
        "nsubj": t("in_rel_nsubj"),
        "dobj": t("in_rel_dobj"),
        "det": t("in_rel_det"),
        "amod": t("in_rel_amod"),
        "pobj": t("in_rel_pobj"),
        "prev": t("in_rel_prev"),
        "next": t("in_rel_next"),
    }
    rows = stats["relations"]
    tables.dataframe(
        {
            t("in_col_rel"): [rel_names.get(r, r) for r in rows],
            t("in_col_head"): [f"{v['layer']}:{v['head']}" for v in rows.values()],
            t("in_col_acc"): [round(100 * v["accuracy"], 1) for v in rows.values()],
            t("in_col_base"): [round(100 * v["baseline"], 1) for v in rows.values()],
            t("in_col_offset"): [v["offset"] for v in rows.values()],
            t("in_col_n"): [f"{v['n_select']} / {v['n_score']}" for v in rows.values()],
        },
        hide_index=True,
    )
    cols = st.columns(4)
    for i, (rel, v) in enumerate(rows.items()):
        cols[i % 4].link_button(
            t("in_open", rel=rel_names.get(rel, rel), l=v["layer"], h=v["head"]),
            f"/model?rm_layer={v['layer']}&rm_head={v['head']}",
        )
    st.caption(t("in_clark", det=94.3, det_b=51.7, dobj=86.8, dobj_b=40.0, coref=65, coref_b=27, layers=pre.layers))
    heads = stats["heads"]
    positional = [f"{h['layer']}:{h['head']} ({h['positional']:+d})" for h in heads if h["positional"] is not None]
    syntactic = [
        f"{h['layer']}:{h['head']} ({', '.join(rel_names.get(r, r) for r in h['syntactic'])})"
        for h in heads
        if h["syntactic"]
    ]
    st.markdown(md_t("in_voita", pos=", ".join(positional) or "—", syn=", ".join(syntactic) or "—"))
    sep = [[heads[layer * pre.heads + h]["sep"] for h in range(pre.heads)] for layer in range(pre.layers)]
    cls = [[heads[layer * pre.heads + h]["cls"] for h in range(pre.heads)] for layer in range(pre.layers)]
    a, b = st.columns(2)
    with a:
        chart(
            charts.head_grid(
                sep,
                title=t("in_sep_title"),
            ),
            "in_sep",
        )
    with b:
        chart(
            charts.head_grid(
                cls,
                title=t("in_cls_title"),
            ),
            "in_cls",
        )
    sink = stats["sink_test"]
    s1, s2, s3 = st.columns(3)
    s1.metric(t("in_sink_sep"), f"{sink['sep']:.2e}")
    s2.metric(t("in_sink_content"), f"{sink['content']:.2e}")
    s3.metric(t("in_sink_moved"), f"{sink['moved']:.3f}")
    st.caption(t("in_sink_note"))
    roles_file = roles.corpus.PROBE_FILE.name
    st.caption(t("in_probe_note", n=stats["sentences"]["select"] + stats["sentences"]["score"], file=roles_file))
pair_view.inside_section(name, sentence)  # a minimal pair, folded away; heads matched with another model
match_view.section(name)

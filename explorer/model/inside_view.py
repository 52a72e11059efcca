"""The Inside the model page on a decoder: ablate heads and mask tokens, measured on the next token (the
log-probability of the model's top token; a logit difference between two tokens the learner names, as in
the indirect-object studies), the ablation and patching maps, and the decoder's head roles."""

from __future__ import annotations

import zlib
from urllib.parse import urlencode

import streamlit as st

from attn_core import AttentionConfigError
from attn_core.interpret import ablate
from explorer import charts
from explorer.base import tables, widgets
from explorer.base.i18n import error_text, t
from explorer.base.safe import md
from explorer.charts.views import chart
from explorer.jobs import waiting
from explorer.model import formation
from explorer.model import next_token as nt

MAX_TOKEN_CHARS = 40


def bad(err: AttentionConfigError) -> None:
    st.warning(t("invalid", msg=md(" ".join(error_text(err)))), icon=":material/warning:")


def pair_ui(pre) -> tuple[str, str] | None:
    """The two tokens whose logit difference is measured (None: not named, or not single tokens: said)."""
    st.caption(t("dec.pair_note"))
    c1, c2 = st.columns(2)
    a = widgets.text(c1, t("dec.token_a"), key="in_tok_a", max_chars=MAX_TOKEN_CHARS, placeholder=" Mary")
    b = widgets.text(c2, t("dec.token_b"), key="in_tok_b", max_chars=MAX_TOKEN_CHARS, placeholder=" John")
    if not a and not b:
        return None
    if not a or not b:
        st.warning(t("dec.pair_both"), icon=":material/warning:")
        return None
    try:
        return nt.check_pair(pre, a, b)
    except AttentionConfigError as err:
        bad(err)
        return None


def choices_ui(pre, pieces: list[str]) -> tuple[str, tuple, tuple]:
    """The ablation mode, the heads to ablate and the tokens to mask (checked by the engine)."""
    labels = {"zero": t("in_mode_zero"), "uniform": t("in_mode_uniform"), "mean": t("in_mode_mean")}
    mode = widgets.radio(
        st, t("in_mode"), list(labels), format_func=lambda m: labels.get(m, str(m)), horizontal=True, key="in_mode"
    )
    c1, c2 = st.columns(2)
    names = [f"{layer}:{head}" for layer, head in ablate.all_heads(pre)]
    chosen = widgets.multiselect(c1, t("in_heads"), names, key="in_heads", placeholder="0:1, 3:2 …")
    mask_key = f"in_mask_{zlib.crc32(' '.join(pieces).encode())}"  # a new prompt starts with nothing masked
    masked = widgets.multiselect(
        c2, t("in_mask"), list(range(len(pieces))), format_func=lambda i: f"{i} {pieces[i]}", key=mask_key
    )
    heads = ablate.parse_heads(",".join(str(h) for h in chosen), pre.layers, pre.heads)
    return mode, heads, ablate.parse_tokens(",".join(str(i) for i in masked), len(pieces))


def metrics_ui(r: dict) -> None:
    """The top token's log-probability (and the pair's logit difference) before and after."""
    m1, m2, m3 = st.columns(3)
    m1.metric(t("dec.top"), repr(r["top_piece"]))
    m2.metric(t("dec.logprob"), f"{r['logprob']:.4f}", f"{r['logprob'] - r['logprob_original']:+.4f}")
    if "logit_diff" in r:
        m3.metric(t("dec.logit_diff"), f"{r['logit_diff']:.4f}", f"{r['logit_diff'] - r['logit_diff_original']:+.4f}")
    st.caption(t("dec.metrics_note", before=f"{r['logprob_original']:.4f}"))


def heads_map(z, title: str, key: str, pre, **kw) -> None:
    chart(charts.head_grid(z, title=title, **kw), key)


def importance_ui(name: str, pre, enc, sentence: str, choice: tuple, pair) -> None:
    st.subheader(t("in_importance"))
    st.caption(t("dec.importance_note"))
    try:  # a prompt too long for the ablated passes is refused here at once, not by the job
        ablate.check_length(pre, enc)
    except AttentionConfigError as err:
        bad(err)
        waiting.ask("inside_imp", {})
        return
    mode, _, masked = choice
    job = waiting.ask("inside_imp", {"importance": nt.importance(name, sentence, mode, masked, pair)})["importance"]
    if not waiting.status(job):
        return
    r = job.result
    heads_map(r["logprob_drop"], t("dec.drop_title", top=nt.piece(pre, r["top_token"])), "in_imp", pre)
    if "logit_diff" in r:
        title = t("dec.pair_title", a=md(pair[0]), b=md(pair[1]), d=r["logit_diff_original"])
        heads_map(r["logit_diff"], title, "in_pair", pre, colorscale="RdBu", zmid=r["logit_diff_original"])


def patching_ui(name: str, pre, sentence: str, second: str | None, pair) -> None:
    st.subheader(t("in_patch"))
    st.caption(t("dec.patch_note"))
    if second is None:
        st.info(t("in_patch_need"), icon=":material/info:")
        waiting.ask("inside_patch", {})
        return
    job = waiting.ask("inside_patch", {"patching": nt.patching(name, sentence, second, pair)})["patching"]
    if not waiting.status(job):
        return
    r = job.result
    if r["identical"]:
        st.info(t("dec.patch_same"), icon=":material/info:")
        return
    what = t("dec.logit_diff") if r["measure"] == "logit_diff" else t("dec.logprob")
    st.caption(t("dec.patch_base", what=what, clean=r["clean"], corrupted=r["corrupted"]))
    heads_map(r["restored"], t("in_patch_title"), "in_patch", pre, colorscale="RdBu", zmid=0)


ROLE_KEYS = ("previous_token", "duplicate_token", "induction", "first_token")


def trained_induction(name: str) -> dict | None:
    """The shipped decoder's training record on induction: the best head's score after training and at
    initialisation, and whether one formed (None for another model, or without the record)."""
    d = formation.shipped_record(name)
    try:
        best = max(v for row in d["scores"]["induction"] for v in row)
        init = max(v for row in d["scores_at_init"]["induction"] for v in row)
        return {"formed": bool(d["induction_formed"]), "best": best, "init": init, "steps": d["config"]["steps"]}
    except (KeyError, TypeError, ValueError):
        return None


def roles_ui(name: str, pre) -> None:
    st.subheader(t("in_roles"))
    st.caption(t("dec.roles_note"))
    found = trained_induction(name)
    if found:  # the record's finding, quoted: the lesson a teacher would look for
        key = "dec.induction_formed" if found["formed"] else "dec.no_induction"
        st.info(t(key, best=f"{found['best']:.3f}", init=f"{found['init']:.3f}", steps=found["steps"]))
        formation.formation_ui(name)
    job = None
    if widgets.toggle(st, t("in_roles_go"), key="in_roles_go"):
        job = waiting.ask("inside_roles", {"head_stats": nt.roles(name)})["head_stats"]
    else:
        waiting.ask("inside_roles", {})
    if job is None or not waiting.status(job):
        return
    r = job.result
    best = r["best"]
    tables.dataframe(
        {
            t("dec.col_role"): [t(f"dec.role.{k}") for k in ROLE_KEYS],
            t("in_col_head"): [f"{best[k]['layer']}:{best[k]['head']}" for k in ROLE_KEYS],
            t("dec.col_score"): [round(best[k]["score"], 3) for k in ROLE_KEYS],
        },
        hide_index=True,
    )
    cols = st.columns(4)
    for i, k in enumerate(ROLE_KEYS):
        b = best[k]
        url = "/model?" + urlencode({"model": name, "rm_layer": b["layer"], "rm_head": b["head"]})
        cols[i].link_button(t("in_open", rel=t(f"dec.role.{k}"), l=b["layer"], h=b["head"]), url)
    a, b = st.columns(2)
    for i, k in enumerate(ROLE_KEYS):
        with (a, b)[i % 2]:
            heads_map(r["scores"][k], t(f"dec.role.{k}"), f"in_role_{k}", pre, zrange=(0.0, 1.0))
    st.caption(t("dec.roles_set", texts=r["texts"], n=r["repeats"], T=r["repeat_len"], seed=r["seed"]))
    composition_ui(r)


def composition_ui(r: dict) -> None:
    """Which earlier head the best induction head reads: K-composition beside the causal check (its induction
    score with each earlier head zeroed), the head that matters most first."""
    c = r.get("composition")
    if not c or not c["rows"]:
        return
    st.markdown(f"**{t('dec.comp_title', l=c['layer'], h=c['head'])}**")
    prev = r["scores"]["previous_token"]
    rows = c["rows"]
    tables.dataframe(
        {
            t("in_col_head"): [f"{x['layer']}:{x['head']}" for x in rows],
            t("dec.role.previous_token"): [round(prev[x["layer"]][x["head"]], 3) for x in rows],
            t("dec.comp_k"): [round(x["k_composition"], 3) for x in rows],
            t("dec.comp_without"): [round(x["induction_without"], 3) for x in rows],
            t("dec.comp_drop"): [round(x["drop"], 3) for x in rows],
        },
        hide_index=True,
    )
    top = rows[0]
    facts = dict(l=c["layer"], h=c["head"], pl=top["layer"], ph=top["head"], score=f"{c['induction']:.2f}")
    facts |= dict(without=f"{top['induction_without']:.2f}", k=f"{top['k_composition']:.2f}")
    facts |= dict(base=f"{c['baseline']:.2f}", prev=f"{prev[top['layer']][top['head']]:.2f}")
    st.markdown(t("dec.comp_sentence", **facts))
    st.caption(t("dec.comp_note"))


def page(name: str, pre, sentence: str, enc) -> None:
    """Everything below the prompt, for a decoder."""
    if enc.n_real < 2:
        st.info(t("dec.one_token"), icon=":material/info:")
    pieces = list(enc.pieces)
    second = widgets.text(st, t("dec.second"), key="in_second", max_chars=1000).strip() or None
    pair = pair_ui(pre)
    try:
        choice = choices_ui(pre, pieces)
        mode, heads, masked = choice
        r = nt.intervention(name, sentence, heads, mode, masked, pair)
    except AttentionConfigError as err:
        bad(err)
        st.stop()
    if len(heads) == pre.layers * pre.heads:
        st.info(t("in_all_heads"), icon=":material/info:")
    metrics_ui(r)
    importance_ui(name, pre, enc, sentence, choice, pair)
    patching_ui(name, pre, sentence, second, pair)
    roles_ui(name, pre)

"""The Explain page's sections, drawn from plain results (``explorer.explain.runs``)."""

from __future__ import annotations

import math

import streamlit as st

from attn_core.explain.explain import METHODS
from attn_core.explain.faithfulness import KS
from attn_core.explain.methods import FLOW_MAX
from attn_core.explain.references import IG_STEPS, SHAPLEY_MAX
from explorer import charts
from explorer import figures as fig
from explorer.base import tables
from explorer.base.i18n import t
from explorer.base.safe import md, md_t
from explorer.charts.views import chart

REF_KEYS = ("loo", "ig", "shapley")
# catalogue keys spelled out (the catalogue test finds every key used by its literal name)
NAMES = {
    "raw": "ex_m_raw",
    "rollout": "ex_m_rollout",
    "flow": "ex_m_flow",
    "norm": "ex_m_norm",
    "value_zeroing": "ex_m_value_zeroing",
    "loo": "ex_m_loo",
    "ig": "ex_m_ig",
    "shapley": "ex_m_shapley",
}
NOTICES = {
    "few_pieces": "ex_notice_few_pieces",
    "many_unk": "ex_notice_many_unk",
    "flow_capped": "ex_notice_flow_capped",
    "shapley_words": "ex_notice_shapley_words",
    "identical": "ex_notice_identical",
}
REMOVAL_NAMES = {"delete": "ex_rm_delete", "mask": "ex_rm_mask", "attention": "ex_rm_attention"}
REMOVAL_NOTES = {"delete": "ex_rm_delete_note", "mask": "ex_rm_mask_note", "attention": "ex_rm_attention_note"}
DECODER_NOTES = {"delete": "ex_rm_delete_note_dec", "attention": "ex_rm_attention_note_dec"}
NO_CORR = {"constant": "ex_no_corr_constant", "too_few": "ex_no_corr_too_few"}
CURVES = {"deletion": "ex_deletion", "insertion": "ex_insertion"}
CHOICES = (
    "ex_choice_raw",
    "ex_choice_rollout",
    "ex_choice_flow",
    "ex_choice_norm",
    "ex_choice_value_zeroing",
    "ex_choice_loo",
    "ex_choice_ig",
    "ex_choice_shapley",
    "ex_choice_curves",
    "ex_choice_correlation",
)
CHOICES_DEC = (  # a decoder's: what is explained is the log-probability of its next token, read at the last position
    "ex_choice_raw_dec",
    "ex_choice_rollout_dec",
    "ex_choice_flow_dec",
    "ex_choice_norm_dec",
    "ex_choice_value_zeroing_dec",
    "ex_choice_loo_dec",
    "ex_choice_ig_dec",
    "ex_choice_shapley_dec",
    "ex_choice_curves_dec",
    "ex_choice_correlation_dec",
)


def name(key: str) -> str:
    """A method's or reference's name in the UI's language."""
    return t(NAMES[key])


def players_text(words: list[str]) -> str:
    """Shapley's players as the page counts them (the tokenizer's words, punctuation apart), one by one."""
    return " · ".join(f"“{w}”" for w in words)


def shapley_limit(words: list[str]) -> str | None:
    """Why a sentence gets no exact Shapley values, counting and naming the players the values would have
    (one per tokenizer word, punctuation apart); None when it has at most ``SHAPLEY_MAX``."""
    if len(words) <= SHAPLEY_MAX:
        return None
    return t("ex_notice_shapley_words", n=len(words), limit=SHAPLEY_MAX, words=players_text(words))


def show_notices(notes: list[dict]) -> None:
    for note in notes:
        params = {k: v for k, v in note.items() if k != "code"}
        if isinstance(params.get("words"), list):
            params["words"] = players_text(params["words"])
        st.info(t(NOTICES[note["code"]], **params), icon=":material/info:")


def normalised(values) -> list[float]:
    """Each row scaled to its largest absolute value (the methods have different units)."""
    top = max((abs(v) for v in values), default=0.0)
    return [v / top if top > 0 else 0.0 for v in values]


def last_layer(result: dict) -> dict:
    """Each method's values at the last layer, of those that have arrived (``explorer.explain.runs``)."""
    if "methods" in result:
        return result["methods"]
    return {k: v[-1] for k, v in result.get("layers", {}).items() if v is not None}


def overview(result: dict, labels: list[str]) -> None:
    """Every method and reference that has arrived, one row each (the rest join as they arrive)."""
    rows, z = [], []
    values = last_layer(result)
    for key in METHODS:
        if values.get(key) is not None:
            rows.append(name(key))
            z.append(normalised(values[key]))
    for key in ("loo", "ig"):
        if key in result.get("references", {}):
            rows.append(name(key))
            z.append(normalised(result["references"][key]))
    figure = charts.heatmap(z, labels, rows, title=t("ex_overview"), x_title="token", colorscale="RdBu", zmid=0)
    chart(figure, "ex_overview")
    st.caption(t("ex_overview_note"))


def layer_view(result: dict, labels: list[str], layer: int) -> None:
    rows, z = [], []
    for key in METHODS:
        per = result["layers"].get(key)
        if per is not None:
            rows.append(name(key))
            z.append(normalised(per[layer]))
    title = t("ex_layer_title", l=layer + 1)
    chart(
        charts.heatmap(z, labels, rows, title=title, x_title="token", colorscale="RdBu", zmid=0),
        "ex_layers",
    )


def corr_text(c: dict | None) -> str:
    if c is None:
        return "—"
    if c["spearman"] is None:
        return t(NO_CORR[c["reason"]])
    text = f"ρ {c['spearman']:+.2f}, τ {c['kendall']:+.2f}"
    if c.get("interval"):
        lo, hi = c["interval"]
        text += f" [{lo:+.2f}, {hi:+.2f}]"
    return text


def correlation_table(correlation: dict, refs: tuple[str, ...]) -> None:
    data = {t("ex_method"): [name(m) for m in correlation]}
    for ref in refs:
        data[name(ref)] = [corr_text(correlation[m].get(ref)) for m in correlation]
    tables.dataframe(data, hide_index=True)


def specials_table(specials: dict, decoder: bool = False) -> None:
    """Each method's share on the first and the last piece ([CLS] and [SEP]; a decoder's first piece, often a
    sink, and its last, the one that predicts)."""

    def pct(v):
        return "—" if v is None else f"{100 * v:.1f} %"

    first, last = (t("ex_first_piece"), t("ex_last_piece")) if decoder else ("[CLS]", "[SEP]")
    data = {
        t("ex_method"): [name(k) for k in specials],
        first: [pct(specials[k]["cls"]) for k in specials],
        last: [pct(specials[k]["sep"]) for k in specials],
    }
    tables.dataframe(data, hide_index=True)


def loo_view(result: dict, labels: list[str]) -> None:
    refs = result["references"]
    removal = t(REMOVAL_NAMES[result["removal"]])
    if "loo_direct" not in refs:  # a decoder: its prediction is read at one position, no pooled share
        figure = charts.bars(refs["loo"], labels, title=t("ex_loo_title_dec", removal=removal))
        chart(figure, "ex_loo")
        st.caption(t("ex_loo_note_dec"))
        return
    series = {t("ex_loo_total"): refs["loo"], t("ex_loo_direct"): refs["loo_direct"]}
    chart(
        charts.grouped_bars(series, labels, title=t("ex_loo_title", removal=removal)),
        "ex_loo",
    )
    st.caption(t("ex_loo_note"))


def kept_text(result: dict) -> str:
    """A decoder's special pieces that integrated gradients' baseline keeps ("" when the prompt has none)."""
    return ", ".join(md(p) for p in result.get("baseline", {}).get("kept", []))


def ig_view(result: dict, labels: list[str]) -> None:
    chart(
        charts.bars(result["references"]["ig"], labels, title=t("ex_ig_title", steps=result["ig_steps"])),
        "ex_ig",
    )
    err = result["ig_completeness_error"]
    st.metric(t("ex_ig_error"), f"{100 * err:.3f} %")
    if "next_token" not in result:
        st.caption(t("ex_ig_note", total=result["ig_sum"], delta=result["ig_delta"]))
        return
    token = md(result["next_token"]["text"])
    note = t("ex_ig_note_dec", token=token, total=result["ig_sum"], delta=result["ig_delta"])
    kept = kept_text(result)
    st.caption(note + (" " + t("ex_ig_note_kept_dec", kept=kept) if kept else ""))


def curves_view(result: dict) -> None:
    curves = result["curves"]
    y_title = t("ex_curve_y_dec") if "next_token" in result else "1 − cos"
    c1, c2 = st.columns(2)
    for col, kind in ((c1, "deletion"), (c2, "insertion")):
        with col:
            series = {name(k): v[kind] for k, v in curves.items()}
            figure = charts.line(list(KS), series, title=t(CURVES[kind]), x_title="k %", y_title=y_title)
            chart(figure, f"ex_{kind}")
    data = {
        t("ex_method"): [name(k) for k in curves],
        t("ex_deletion_area"): [round(v["deletion_area"], 4) for v in curves.values()],
        t("ex_insertion_area"): [round(v["insertion_area"], 4) for v in curves.values()],
    }
    tables.dataframe(data, hide_index=True)
    st.caption(t("ex_curves_note_dec" if "next_token" in result else "ex_curves_note"))


def shapley_view(shap: dict) -> None:
    chart(
        charts.bars(shap["values"], fig.labels(shap["words"]), title=t("ex_shapley_title")),
        "ex_shapley",
    )
    check = shap["check"]
    st.caption(t("ex_shapley_check", total=check["sum"], v_all=check["v_all"], v_none=check["v_none"]))
    data = {
        t("ex_method"): [name(m) for m in shap["correlation"]],
        name("shapley"): [corr_text(c) for c in shap["correlation"].values()],
    }
    tables.dataframe(data, hide_index=True)


def next_token_note(result: dict) -> None:
    """What a decoder's explanations explain: the log-probability of its top next token."""
    nt = result["next_token"]
    p = math.exp(nt["logp"])
    st.markdown(md_t("ex_dec_target", token=nt["text"], logp=f"{nt['logp']:.3f}", p=f"{p:.3f}"))


def choices(pre, result: dict) -> None:
    """What each method computes, true of the model ``pre``: an encoder's sentence embedding, a decoder's
    log-probability of the next token ``result`` names (its heads, its baseline token, its special pieces)."""
    with st.expander(t("ex_choices"), icon=":material/rule:"):
        if "next_token" not in result:
            for key in CHOICES:
                st.markdown(t(key))
            return
        base = result.get("baseline", {})
        values = {
            "heads": pre.heads,
            "flow_max": FLOW_MAX,
            "steps": IG_STEPS,
            "limit": SHAPLEY_MAX,
            "token": md(result["next_token"]["text"]),
            "base": md(base.get("token", "")),
        }
        for key in CHOICES_DEC:
            text = t(key, **values)
            if key == "ex_choice_ig_dec" and kept_text(result):
                text += " " + t("ex_ig_kept_dec", kept=kept_text(result))
            st.markdown(text)

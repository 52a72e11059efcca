"""The Explain page's pair section (why two sentences are similar) and the corpus table."""

from __future__ import annotations

import streamlit as st

from attn_core.explain.table import facts
from explorer import charts
from explorer import figures as fig
from explorer.base import tables
from explorer.base.i18n import STRINGS, t
from explorer.charts.views import chart
from explorer.explain.views import REMOVAL_NAMES, corr_text, name, show_notices


def pair_view(p: dict) -> None:
    show_notices(p["notices"])
    st.metric(t("ex_pair_cosine"), f"{p['pair_cosine']:.4f}")
    la, lb = fig.labels(p["tokens_a"]), fig.labels(p["tokens_b"])
    att = p["pair_attribution"]
    c1, c2 = st.columns(2)
    for col, side, labels, key in ((c1, "a", la, "ex_pair_ig_a"), (c2, "b", lb, "ex_pair_ig_b")):
        with col:
            chart(charts.bars(att[side], labels, title=t(key)), key)
            st.caption(t("ex_pair_complete", err=100 * att["completeness_error"][side], delta=att[f"delta_{side}"]))
    title = t("ex_pair_pairs")
    chart(
        charts.heatmap(
            p["token_pairs"],
            lb,
            la,
            title=title,
            x_title="b",
            y_title="a",
            colorscale="RdBu",
            zmid=0,
        ),
        "ex_pair_pairs",
    )
    st.caption(t("ex_pair_pairs_note", cos=p["pair_cosine"]))
    st.markdown(t("ex_pair_attention"))
    c1, c2 = st.columns(2)
    for col, side, labels, key in ((c1, "a", la, "ex_pair_roll_a"), (c2, "b", lb, "ex_pair_roll_b")):
        with col:
            chart(charts.bars(p["attention_alone"][side], labels, title=t(key)), key)
            st.caption(t("ex_pair_agree", text=corr_text(p["agreement"][side])))


def pair_shapley_view(s: dict) -> None:
    c1, c2 = st.columns(2)
    for col, side, key in ((c1, "a", "ex_pair_shapley_a"), (c2, "b", "ex_pair_shapley_b")):
        with col:
            part = s[side]
            if part is None:
                st.info(t("ex_pair_shapley_long"))
                continue
            chart(charts.bars(part["values"], fig.labels(part["words"]), title=t(key)), key)
            st.caption(t("ex_shapley_check", total=sum(part["values"]), v_all=part["v_all"], v_none=part["v_none"]))


def cell_text(c: dict) -> str:
    if c["mean"] is None:
        return "—"
    return f"{c['mean']:+.2f} ± {c['sd']:.2f}"


def cell(text: str) -> str:
    """A published figure's cell in the UI's language (the catalogue's ``ex_pubcell.`` table, found by its
    English); a name (DistilBERT, BERT) shows as it is."""
    for key, (en, _zh) in STRINGS.items():
        if key.startswith("ex_pubcell.") and en == text:
            return t(key)
    return text


def table_view(table: dict | None) -> None:
    if table is None:
        st.info(t("ex_table_missing"))
        return
    st.caption(
        t(
            "ex_table_intro",
            n=len(table["sentences"]),
            removal=t(REMOVAL_NAMES[table["removal"]]),
            steps=table["ig_steps"],
        )
    )
    layers = [t("ex_layer_n", l=i + 1) for i in range(table["layers"])]
    for ref in table["references"]:
        st.markdown(f"**{t('ex_table_against', ref=name(ref))}**")
        data = {t("ex_method"): [name(m) for m in table["methods"]]}
        for i, col in enumerate(layers):
            data[col] = [cell_text(table["table"][m][ref][i]) for m in table["methods"]]
        tables.dataframe(data, hide_index=True)
    st.markdown(f"**{t('ex_published')}**")
    keys = {
        "source": "ex_pub_source",
        "model": "ex_pub_model",
        "task": "ex_pub_task",
        "methods": "ex_pub_methods",
        "reference": "ex_pub_reference",
        "spearman": "ex_pub_spearman",
    }
    tables.dataframe(
        {t(key): [cell(row[k]) for row in table["published"]] for k, key in keys.items()}, hide_index=True
    )
    st.markdown(reading(table))
    with st.expander(t("ex_corpus")):
        tables.dataframe({t("ex_sentence"): table["sentences"]}, hide_index=True)


def reading(table: dict) -> str:
    """The paragraph under the table, written from its numbers."""
    f = facts(table)
    if f["best"] is None:
        return t("ex_reading_none")
    parts = [
        t(
            "ex_reading_rank",
            n=f["n"],
            l=f["layers"],
            best=name(f["best"]),
            b=f["best_rho"],
            worst=name(f["worst"]),
            w=f["worst_rho"],
        )
    ]
    if f["attention_only"] is not None:
        parts.append(t("ex_reading_attention", v=f["attention_only"]))
    if f["whole_layer"] is not None:
        key = "ex_reading_whole_more" if f["whole_layer"] > (f["attention_only"] or 0) else "ex_reading_whole_less"
        parts.append(t(key, v=f["whole_layer"]))
    if f["rollout_ig"] is not None:
        parts.append(t("ex_reading_rollout", v=f["rollout_ig"]))
    if f["raw_first"] is not None and f["raw_last"] is not None:
        parts.append(t("ex_reading_layers", a=f["raw_first"], b=f["raw_last"], l=f["layers"]))
    parts.append(t("ex_reading_caution"))
    return " ".join(parts)

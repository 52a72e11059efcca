"""Is attention an explanation? Attention-based explanations of the trained model's sentence
embedding (a decoder's: the log-probability of its top next token) beside references that do not
come from attention, how far they agree, how faithful each is, why two sentences are similar, and
the corpus table. The model is picked as on Real model and Inside (``?model=NAME``)."""

import streamlit as st

from attn_core import AttentionConfigError
from attn_core import models as pt
from attn_core.explain import pair as P
from attn_core.explain.pair import EXAMPLES
from attn_core.explain.references import SHAPLEY_MAX
from attn_core.explain.sentence import removals
from explorer import figures as fig
from explorer.base import session, widgets
from explorer.base.i18n import error_text, lang, t
from explorer.base.safe import md
from explorer.boot import run_through_app
from explorer.controls import later
from explorer.controls.state import current_settings
from explorer.explain import runs
from explorer.explain.more import pair_shapley_view, pair_view, table_view
from explorer.explain.views import (
    DECODER_NOTES,
    REF_KEYS,
    REMOVAL_NAMES,
    REMOVAL_NOTES,
    choices,
    correlation_table,
    curves_view,
    ig_view,
    layer_view,
    loo_view,
    next_token_note,
    overview,
    shapley_limit,
    shapley_view,
    show_notices,
    specials_table,
)
from explorer.jobs import waiting
from explorer.model import pair_view as minimal_pairs
from explorer.model import pick, real

run_through_app()  # before anything is drawn; see explorer/boot.py

waiting.warm()  # a worker loads the model while the page is read
st.title(t("page.explain"))
MODEL = pick.choose(st.expander(t("dec.model_box")))
try:
    pre = real.model(MODEL)
except pt.ModelUnavailable as err:
    st.error(t("rm_unavailable", msg=md(error_text(err)[0])), icon=":material/warning:")
    st.stop()
if pre is None:  # still loading in the background: never block the page
    real.wait_on_page(MODEL)
DECODER = bool(pre.causal)  # explained: the log-probability of its top next token, read at the last position
st.caption(t("ex_dec_intro", model=md(MODEL)) if DECODER else t("ex_intro"))


PAIR_NAMES = {"negation": "ex_pair_negation", "roles": "ex_pair_roles", "predicates": "ex_pair_predicates"}


def bad(err: AttentionConfigError) -> None:
    st.warning(t("invalid", msg=md(" ".join(error_text(err)))), icon=":material/warning:")


def labeller(keys: dict):
    """A format_func in the language of the run that draws the widget (its labels must not change later)."""
    language = lang()
    return lambda value: t(keys[value], language=language) if value in keys else str(value)


def sentence_section() -> None:
    text = current_settings().sentence  # the sidebar's sentence: one sentence on every page
    st.caption(t("your_sentence"))
    st.text(text)
    removal = widgets.radio(
        st,
        t("ex_removal"),
        removals(pre),
        default="attention",
        horizontal=True,
        key="ex_removal",
        format_func=labeller(REMOVAL_NAMES),
    )
    st.caption(t((DECODER_NOTES if DECODER else REMOVAL_NOTES)[removal]))
    try:
        first = runs.cheap(MODEL, text)  # one forward pass: drawn at once
    except AttentionConfigError as err:
        bad(err)
        asked({})
        return
    words = len(first["word_texts"])
    wanted = {"explain": runs.explanation(text, removal, MODEL)}
    shap_asked = (text, removal) if MODEL == pt.BUNDLED else (text, removal, MODEL)
    if words <= SHAPLEY_MAX and tuple(session.get("ex_shapley_for") or ()) == shap_asked:
        wanted["shapley"] = runs.shapley(text, removal, MODEL)
    jobs = asked(wanted)
    job = jobs["explain"]
    result = {**first, "removal": removal, **job.result}
    done = waiting.status(job)
    show_notices([n for n in first["notices"] if n["code"] != "shapley_words"])  # the Shapley section says it
    if DECODER:
        next_token_note(first)
    labels = fig.labels(first["tokens"])
    choices(pre, first)
    overview(result, labels)
    later.below_first_screen("explain", lambda: below_overview(result, labels, done, first, shap_asked, jobs))


def below_overview(result: dict, labels: list[str], done: bool, first: dict, shap_asked: tuple, jobs: dict) -> None:
    """The sentence tab under its overview (``later``: on a tab's first run, once the overview is on screen)."""
    layer = widgets.slider(st, t("ex_layer"), 1, pre.layers, pre.layers, 1, key="ex_layer") - 1
    layer_view(result, labels, layer)
    st.subheader(t("ex_refs"))
    if "ig" in result.get("references", {}):
        loo_view(result, labels)
        ig_view(result, labels)
    elif "loo" in result.get("references", {}):
        loo_view(result, labels)
        waiting.pending()
    else:
        waiting.pending()
    st.subheader(t("ex_agree"))
    st.caption(t("ex_agree_note"))
    if done:
        correlation_table(result["correlation"], tuple(r for r in REF_KEYS if r != "shapley"))
        st.caption(t("ex_specials_dec" if DECODER else "ex_specials"))
        specials_table(result["specials"], DECODER)
    else:
        waiting.pending()
    st.subheader(t("ex_faithful"))
    if done:
        curves_view(result)
    else:
        waiting.pending()
    shapley_part(first["word_texts"], shap_asked, jobs.get("shapley"))


def asked(wanted: dict) -> dict:
    """This session's jobs on the sentence tab (what it asked for before and no longer does is left)."""
    return waiting.ask("explain", wanted)


def shapley_part(players: list[str], shap_asked: tuple, job) -> None:
    """``players``: the tokenizer's words, punctuation apart, the ones the Shapley values are computed for."""
    st.subheader(t("ex_shapley"))
    st.caption(t("ex_shapley_intro", limit=SHAPLEY_MAX))
    refused = shapley_limit(players)
    if refused:
        st.info(refused)
        return
    if st.button(t("ex_shapley_button", n=2 ** len(players)), key="ex_shapley_go"):
        session.put("ex_shapley_for", list(shap_asked))
        st.rerun()  # asked for with the other jobs of this run
    if job is not None and waiting.status(job) and job.result.get("shapley") is not None:
        shapley_view(job.result["shapley"])


def pair_section() -> None:
    if DECODER:  # two sentences are compared by their embeddings: an encoder's
        st.info(t("ex_pair_decoder", model=md(MODEL)), icon=":material/info:")
        waiting.ask("pair", {})
        return
    st.caption(t("ex_pair_intro"))
    keys = list(EXAMPLES)
    example = widgets.selectbox(
        st, t("ex_pair_example"), keys, format_func=labeller(PAIR_NAMES), key="ex_pair_example"
    )
    a0, b0 = EXAMPLES[example]
    c1, c2 = st.columns(2)
    a = widgets.text(c1, t("ex_pair_a"), a0, max_chars=2000, key=f"ex_a_{example}")
    b = widgets.text(c2, t("ex_pair_b"), b0, max_chars=2000, key=f"ex_b_{example}")
    try:
        P.items(pre, a, b)  # tokenising only: a bad sentence is answered at once
    except AttentionConfigError as err:
        bad(err)
        waiting.ask("pair", {})
        return
    wanted = {"pair": runs.pair(a, b, MODEL)}
    if tuple(session.get("ex_pair_shapley_for") or ()) == (a, b):
        wanted["pair_shapley"] = runs.pair_shapley(a, b, "attention", MODEL)
    jobs = waiting.ask("pair", wanted)
    if waiting.status(jobs["pair"]):
        pair_view(jobs["pair"].result)
    st.markdown(f"**{t('ex_shapley')}**")
    if st.button(t("ex_pair_shapley_button"), key="ex_pair_shapley_go"):
        session.put("ex_pair_shapley_for", [a, b])
        st.rerun()
    if "pair_shapley" in jobs and waiting.status(jobs["pair_shapley"]):
        pair_shapley_view(jobs["pair_shapley"].result)


one, two, corpus = st.tabs([t("ex_tab_sentence"), t("ex_tab_pair"), t("ex_tab_table")])
with one:
    sentence_section()


def pair_tab() -> None:
    """A pair of sentences, and a minimal pair: what moved, what matters (``later`` on a tab's first run: a tab not
    shown first drew its five charts in the first screen's batch)."""
    pair_section()
    minimal_pairs.explain_section(MODEL, current_settings().sentence)


with two:
    later.below_first_screen("explain", pair_tab, part="pair")
with corpus:
    if DECODER:
        st.info(t("ex_table_encoder", model=md(MODEL)), icon=":material/info:")
    table_view(runs.table())

"""Next token: a decoder's next-token distribution and how a token is drawn from it (temperature, top-k, top-p,
a seed, greedy), generation token by token with the KV cache, every position's prediction, the logit lens, and
what each head writes into the vocabulary."""

import streamlit as st

from attn_core import AttentionConfigError
from explorer import real, takehome
from explorer.boot import run_through_app
from explorer.controls import PAGE, draw
from explorer.i18n import error_text, t
from explorer.nexttoken import copying, generation, heads, runs, settings, views
from explorer.safe import md
from explorer.state import current_settings

run_through_app()  # before anything is drawn; see explorer/boot.py

st.title(t("page.next_token"))
st.caption(t("nt_intro"))


def refuse(err: AttentionConfigError) -> None:
    """The engine's message in the UI's language; the page stops here, its settings still there to change."""
    message, fix = error_text(err)
    st.warning(f"{md(message)} {md(fix)}", icon=":material/warning:")
    st.stop()


offered = runs.offered()
settings.read_model_link(offered)
if not offered:
    refuse(runs.no_decoder())
name = draw(settings.MODEL, st, options=offered, default=offered[0], format_func=str)
if runs.other_load_running():  # transformers' lazy imports are not safe in two threads: after the server's load
    real.wait_on_page(real.pt.BUNDLED)
try:
    m = runs.decoder(name)
except AttentionConfigError as err:
    refuse(err)
limit = runs.max_new(m)
settings.read_link(m.vocab, limit)
said = st.container()  # why the link's refused values were refused: filled once the controls have dropped them
prompt = draw(settings.PROMPT, st)
temperature, top_k, top_p, greedy = settings.draw_sampling(st, m.vocab)
max_new = draw(settings.MAX_NEW, st, high=limit)
for message, fix in settings.link_messages():
    said.warning(f"{md(message)} {md(fix)}", icon=":material/link_off:")
seed = current_settings().seed  # the sidebar's seed: one ?seed= per link
st.caption(t("nt_seed", seed=seed, name=md(m.name), family=m.family, layers=m.layers, heads=m.heads, vocab=m.vocab))
choice = settings.Choice(name, prompt, temperature, top_k, top_p, seed, greedy)
try:
    p = runs.prediction(choice)
except AttentionConfigError as err:
    refuse(err)
if p["cut"]:
    cut = dict(n=p["n_total"], max=m.max_positions, cut=p["cut"], text=md(p["cut_text"][:200]))
    st.warning(t("nt_cut", **cut), icon=":material/content_cut:")
st.caption(
    t("nt_tokens", n=len(p["labels"])) + " " + " · ".join(md(x) for x in p["labels"]) + " " + t("nt_labels_key")
)

predicting = draw(PAGE["predict"], st)
views.distribution_ui(p, choice, predicting)
views.positions_ui(p)
st.fragment(generation.generation_ui)(choice, int(max_new), limit)
views.lens_ui(choice)
st.fragment(heads.heads_ui)(choice, m.layers, m.heads, p["chosen"]["id"], p["chosen"]["label"])
st.fragment(copying.copying_ui)(choice, predicting)
takehome.offer_next_token(choice)

"""Next token: a decoder's next-token distribution and how a token is drawn from it (temperature, top-k, top-p,
a seed, greedy), generation token by token with the KV cache, every position's prediction, the logit lens, and
what each head writes into the vocabulary."""

import streamlit as st

from attn_core import AttentionConfigError
from explorer.base.i18n import error_text, t
from explorer.base.safe import md
from explorer.boot import run_through_app
from explorer.classroom import takehome
from explorer.controls import PAGE, draw, later, present
from explorer.controls.state import current_settings
from explorer.model import pair_view, pick, real
from explorer.nexttoken import copying, generation, heads, runs, settings, views

run_through_app()  # before anything is drawn; see explorer/boot.py

presenting = present.on()  # ?present=1: the sections walked one at a time, the settings folded away
if presenting:
    walk_row, box = st.container(), st.expander(t("present_settings"))
else:
    title, toggle = st.columns([5, 1], vertical_alignment="bottom")
    title.title(t("page.next_token"))
    with toggle:
        present.toggle()
    st.caption(t("nt_intro"))
    box = st.container()


def refuse(err: AttentionConfigError) -> None:
    """The engine's message in the UI's language; the page stops here, its settings still there to change."""
    message, fix = error_text(err)
    st.warning(f"{md(message)} {md(fix)}", icon=":material/warning:")
    st.stop()


offered = runs.offered()
if not offered:
    refuse(runs.no_decoder())
name = pick.choose(box, default=offered[0])  # the model pages' one picker: a pick made on another page follows
try:
    m = real.model(name)  # the server's one loader, in the background
except AttentionConfigError as err:
    refuse(err)
if m is None:  # still loading: never block the page
    real.wait_on_page(name)
if not m.causal:  # an encoder predicts no next token: said, with the decoders to pick
    settings.offer_decoders(name, offered)
    st.stop()
limit = runs.max_new(m)
settings.read_link(m.vocab, limit)
said = st.container()  # why the link's refused values were refused: filled once the controls have dropped them
prompt = draw(settings.PROMPT, box)
temperature, top_k, top_p, greedy = settings.draw_sampling(box, m.vocab)
max_new = draw(settings.MAX_NEW, box, high=limit)
for message, fix in settings.link_messages():
    said.warning(f"{md(message)} {md(fix)}", icon=":material/link_off:")
seed = current_settings().seed  # the sidebar's seed: one ?seed= per link
box.caption(t("nt_seed", seed=seed, name=md(m.name), family=m.family, layers=m.layers, heads=m.heads, vocab=m.vocab))
choice = settings.Choice(name, prompt, temperature, top_k, top_p, seed, greedy)
try:
    p = runs.prediction(choice)
except AttentionConfigError as err:
    refuse(err)
if p["cut"]:
    cut = dict(n=p["n_total"], max=m.max_positions, cut=p["cut"], text=md(p["cut_text"][:200]))
    st.warning(t("nt_cut", **cut), icon=":material/content_cut:")
box.caption(
    t("nt_tokens", n=len(p["labels"])) + " " + " · ".join(md(x) for x in p["labels"]) + " " + t("nt_labels_key")
)

predicting = draw(PAGE["predict"], box)
TITLES = {"dist": "nt_dist", "positions": "nt_positions", "generate": "nt_generate", "lens": "nt_lens"}
TITLES |= {"heads": "nt_heads", "copy": "nt_copy"}  # each section narrates itself in presenter mode
part = present.parts(PAGE["nt_part"], box, walk_row, {k: t(v) for k, v in TITLES.items()}) if presenting else None


def lower() -> None:
    """Everything under the distribution's bars (``later``: on a tab's first run, once the bars are on screen)."""
    if part in (None, "positions"):
        views.positions_ui(p)
    if part in (None, "generate"):
        st.fragment(generation.generation_ui)(choice, int(max_new), limit)
    if part in (None, "lens"):
        views.lens_ui(choice)
    if part in (None, "heads"):
        st.fragment(heads.heads_ui)(choice, m.layers, m.heads, p["chosen"]["id"], p["chosen"]["label"])
    if part in (None, "copy"):
        st.fragment(copying.copying_ui)(choice, predicting)
    if not presenting:  # a minimal pair: both predictions, and the heads whose removal closes their gap
        st.fragment(pair_view.next_token_section)(name, prompt)
        takehome.offer_next_token(choice)


with present.part_box() if presenting else st.container():
    if part in (None, "dist"):
        views.distribution_ui(p, choice, predicting, box if presenting else None)
    later.below_first_screen("next_token", lower)

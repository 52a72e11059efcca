"""Vision: an image cut into patches that attend to each other, ViT's global attention, Swin's shifted windows,
and a tiny model of each trained live on the 8 × 8 digits (Play, Pause, Step: the Lab's runs, shared, in worker
processes), its heads read on a held-out digit or your own picture."""

import streamlit as st

from attn_core import AttentionConfigError
from attn_core.vision.model import SIDE, VisionConfig
from explorer.boot import run_through_app
from explorer.controls import PAGE, draw
from explorer.i18n import error_text, t
from explorer.lab import refresh
from explorer.safe import md
from explorer.vision import live, view

run_through_app()  # before anything is drawn; see explorer/boot.py

st.title(t("page.vision"))
st.caption(t("vision.intro"))
c1, c2, c3, c4 = st.columns(4)
model = draw(PAGE["vi_model"], c1, horizontal=True)
patch = draw(PAGE["vi_patch"], c2)
side = SIDE // patch
window = draw(PAGE["vi_window"], c3, options=[m for m in (1, 2, 4, 8) if side % m == 0], default=min(2, side))
shift = draw(PAGE["vi_shift"], c4)
c5, c6 = st.columns(2)
index = draw(PAGE["vi_image"], c5)
query = draw(PAGE["vi_query"], c6, options=range(side * side), default=0, format_func=view.query_label(side))
config = VisionConfig(model=model, patch=patch, window=window, shift=shift, steps=600)
try:
    config.check()
except AttentionConfigError as err:
    st.warning(t("invalid", msg=md(" ".join(error_text(err)))), icon=":material/warning:")
    st.stop()
image, label = view.held_out(index)
st.caption(t("vision.held_out", i=index, d=label))
view.patches_ui(image, config)
view.windows_ui(config, query)
st.subheader(t("vision.trained_title"))
st.caption(t("vision.trained_intro", steps=config.steps))
compare = draw(PAGE["vi_compare"], st)  # ViT and Swin trained at the same budget, side by side
configs = live.kinds(config, compare)
live.controls_ui(configs)
# redrawn alone while a run moves (every second, less often while many learners watch runs: explorer/lab/refresh.py),
# and not at all otherwise (a class on this page)
polling = live.moving(configs)
st.fragment(run_every=refresh.interval_s() if polling else None)(live.live)(configs, image, query, polling)
view.upload_ui(live.latest_model(config), config, query)

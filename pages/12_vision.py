"""Vision: an image cut into patches that attend to each other, ViT's global attention, Swin's shifted windows,
and a tiny model of each trained live on the 8 × 8 digits (Play, Pause, Step: the Lab's runs, shared, in worker
processes), its heads read on a held-out digit or your own picture."""

import streamlit as st

from attn_core import AttentionConfigError
from attn_core.vision.model import SIDE, VisionConfig
from explorer.base.i18n import error_text, t
from explorer.base.safe import md
from explorer.boot import run_through_app
from explorer.controls import PAGE, draw, present
from explorer.lab import refresh
from explorer.vision import live, view

run_through_app()  # before anything is drawn; see explorer/boot.py

presenting = present.on()  # ?present=1: the sections walked one at a time, the settings folded away
if presenting:
    walk_row, box = st.container(), st.expander(t("present_settings"))
else:
    title, toggle = st.columns([5, 1], vertical_alignment="bottom")
    title.title(t("page.vision"))
    with toggle:
        present.toggle()
    st.caption(t("vision.intro"))
    box = st.container()
c1, c2, c3, c4 = box.columns(4)
model = draw(PAGE["vi_model"], c1, horizontal=True)
patch = draw(PAGE["vi_patch"], c2)
side = SIDE // patch
window = draw(PAGE["vi_window"], c3, options=[m for m in (1, 2, 4, 8) if side % m == 0], default=min(2, side))
shift = draw(PAGE["vi_shift"], c4)
c5, c6 = box.columns(2)
index = draw(PAGE["vi_image"], c5)
query = draw(PAGE["vi_query"], c6, options=range(side * side), default=0, format_func=view.query_label(side))
config = VisionConfig(model=model, patch=patch, window=window, shift=shift, steps=600)
try:
    config.check()
except AttentionConfigError as err:
    st.warning(t("invalid", msg=md(" ".join(error_text(err)))), icon=":material/warning:")
    st.stop()
image, label = view.held_out(index)
rows, cols = config.grid
L = rows * cols
if presenting:  # with the settings, folded away
    compare = draw(PAGE["vi_compare"], box)
NARRATION = {
    "patches": t("present.vi_patches", L=L, p=patch, pairs=f"{L * L:,}"),
    "windows": t("present.vi_windows", m=window, s=window // 2 if shift else 0)
    if model == "swin"
    else t("present.vi_windows_vit", L=L),
    "trained": t("present.vi_trained"),
    "upload": t("present.vi_upload"),
}
TITLES = {"patches": "vision.patches_title", "windows": "vision.windows_title", "trained": "vision.trained_title"}
TITLES["upload"] = "vision.upload_title"
titles = {k: t(v) for k, v in TITLES.items()}
part = present.parts(PAGE["vi_part"], box, walk_row, titles, NARRATION) if presenting else None
with present.part_box() if presenting else st.container():
    if part in (None, "patches"):
        st.caption(t("vision.held_out", i=index, d=label))
        view.patches_ui(image, config)
    if part in (None, "windows"):
        view.windows_ui(config, query)
    if part in (None, "trained"):
        st.subheader(t("vision.trained_title"))
        st.caption(t("vision.trained_intro", steps=config.steps))
        if not presenting:
            compare = draw(PAGE["vi_compare"], st)  # ViT and Swin trained at the same budget, side by side
        configs = live.kinds(config, compare)
        live.controls_ui(configs)
        # redrawn alone while a run moves (every second, less often while many learners watch runs:
        # explorer/lab/refresh.py), and not at all otherwise (a class on this page)
        polling = live.moving(configs)
        st.fragment(run_every=refresh.interval_s() if polling else None)(live.live)(configs, image, query, polling)
    if part in (None, "upload"):
        view.upload_ui(live.latest_model(config), config, query)

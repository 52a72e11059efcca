"""The Vision page's parts: an image cut into patches, Swin's windows and their mask, the receptive field, the
cost, and the heads of a tiny model (trained in ``explorer.vision.live``'s runs) drawn on a held-out digit or on
the learner's own picture. A snapshot's weights come from its run; the model is rebuilt once per configuration
and step (``trained``)."""

from __future__ import annotations

import io
import threading
from collections import OrderedDict

import streamlit as st
import torch

from attn_core import AttentionConfigError
from attn_core import vision as V
from attn_core.vision.model import SIDE, VisionConfig, VisionModel, digits

from .. import figures as fig
from .. import tables
from ..i18n import error_text, t
from ..safe import md
from ..views import chart

MAX_UPLOAD_BYTES = 5 * 2**20
MAX_PIXELS = 4096 * 4096  # decoding a larger picture is refused before it is decoded (a decompression bomb)
PATCHES_224 = (32, 16, 8, 4)


def grid_labels(n: int) -> list[str]:
    return [str(i) for i in range(n)]


def grid_chart(z, title: str, key: str, *, weights: bool = False, colorscale: str = "Viridis") -> None:
    rows, cols = len(z), len(z[0])
    chart(
        fig.heatmap(
            z,
            grid_labels(cols),
            grid_labels(rows),
            style=fig.run_style(),
            title=title,
            x_title="column",
            y_title="row",
            weights=weights,
            colorscale=colorscale,
        ),
        key,
    )


def patches_ui(image: torch.Tensor, c: VisionConfig) -> None:
    rows, cols = c.grid
    st.subheader(t("vision.patches_title"))
    st.caption(t("vision.patches_intro", p=c.patch, rows=rows, cols=cols, L=rows * cols, d=c.patch * c.patch))
    grid_chart(image.tolist(), t("vision.image_title", p=c.patch), "vi_image_chart", colorscale="Greys")
    table = {
        t("vision.col_patch"): [f"{p} × {p}" for p in PATCHES_224],
        t("vision.col_tokens"): [(224 // p) ** 2 for p in PATCHES_224],
        t("vision.col_pairs"): [f"{((224 // p) ** 2) ** 2:,}" for p in PATCHES_224],
    }
    st.caption(t("vision.table_224"))
    tables.dataframe(table, hide_index=True)


def windows_ui(c: VisionConfig, query: int) -> None:
    rows, cols = c.grid
    st.subheader(t("vision.windows_title"))
    st.caption(t("vision.windows_intro", m=c.window, s=c.window // 2))
    if c.model == "vit":  # every patch sees every patch: nothing to draw but the cost
        st.info(t("vision.vit_global", L=rows * cols), icon=":material/info:")
        return
    shift = c.window // 2 if c.shift else 0
    a, b = st.columns(2)
    for col, s, name in ((a, 0, "plain"), (b, shift, "shifted")):
        win = V.window_ids(c.grid, c.window, s)
        with col:
            grid_chart(win.reshape(rows, cols).tolist(), t(f"vision.win_{name}", s=s), f"vi_win_{name}")
    mask = V.window_mask(c.grid, c.window, shift)
    chart(
        fig.heatmap(
            mask.float().tolist(),
            grid_labels(rows * cols),
            grid_labels(rows * cols),
            style=fig.run_style(),
            title=t("vision.mask_title", s=shift),
            x_title="key",
            y_title="query",
            zrange=(0.0, 1.0),
        ),
        "vi_mask",
    )
    st.caption(t("vision.mask_note", n=int(mask.sum()), L=rows * cols, all=(rows * cols) ** 2))
    masks = [V.window_mask(c.grid, c.window, shift if i % 2 else 0) for i in range(3)]
    cols3 = st.columns(3)
    for k, col in enumerate(cols3, start=1):
        reach = V.receptive_field(masks[:k])[query].float().reshape(rows, cols)
        with col:
            grid_chart(reach.tolist(), t("vision.reach_title", k=k, n=int(reach.sum())), f"vi_reach_{k}")
    f = V.flops((56, 56), 7, 96)
    ratio = f"{f['global'] / f['windowed']:.1f}"
    st.caption(t("vision.swin_t", g=f"{f['global']:,}", w=f"{f['windowed']:,}", r=ratio))


_MODELS: OrderedDict[tuple, VisionModel] = OrderedDict()  # the last few rebuilt (each ~30k parameters)
_MODELS_LOCK = threading.Lock()
KEEP_MODELS = 8


def trained(key: tuple, state: dict) -> VisionModel:
    """A snapshot's model rebuilt from its weights (tensors or plain lists), once per ``key`` (the configuration's
    items, then ``("at_step", step)``; the last few kept)."""
    with _MODELS_LOCK:
        if key in _MODELS:
            _MODELS.move_to_end(key)
            return _MODELS[key]
    model = VisionModel(VisionConfig(**{k: v for k, v in key if k != "at_step"}))
    model.load_state_dict({k: torch.as_tensor(v, dtype=torch.float32) for k, v in state.items()})
    model.eval()
    with _MODELS_LOCK:
        _MODELS[key] = model
        while len(_MODELS) > KEEP_MODELS:
            _MODELS.popitem(last=False)
    return model


def attention_ui(model: VisionModel, image: torch.Tensor, c: VisionConfig, query: int, key: str) -> None:
    rows, cols = c.grid
    with torch.no_grad():
        logits, weights = model(image[None])
    probs = torch.softmax(logits[0], -1)
    st.markdown(t("vision.predicted", d=int(probs.argmax()), p=f"{float(probs.max()):.2f}"))
    for layer, w in enumerate(weights):
        heads = st.columns(c.heads)
        for h, col in enumerate(heads):
            with col:
                z = w[0, h, query].reshape(rows, cols).tolist()
                grid_chart(z, t("vision.attn_title", l=layer, h=h, q=query), f"{key}_{layer}_{h}", weights=True)
    rolled = V.rollout([w[0] for w in weights])[query].reshape(rows, cols).tolist()
    grid_chart(rolled, t("vision.rollout_title", n=len(weights), q=query), f"{key}_rollout", weights=True)
    st.caption(t("vision.rollout_note", q=query))


def held_out(index: int) -> tuple[torch.Tensor, int]:
    _, _, xv, yv = digits(0)
    return xv[index], int(yv[index])


def upload_image(data: bytes) -> torch.Tensor:
    """A picture's bytes as an 8 × 8 digit-like image (0..1, light strokes on dark); refused: not an image,
    too large, truncated."""
    from PIL import Image, UnidentifiedImageError

    if len(data) > MAX_UPLOAD_BYTES:
        raise AttentionConfigError("image", "vision_upload_size", mib=MAX_UPLOAD_BYTES // 2**20)
    try:
        img = Image.open(io.BytesIO(data))  # reads the header only
    except Image.DecompressionBombError:
        raise AttentionConfigError("image", "vision_upload_pixels", w="?", h="?") from None
    except (UnidentifiedImageError, OSError, ValueError):
        raise AttentionConfigError("image", "vision_upload_bad") from None
    with img:
        if img.width * img.height > MAX_PIXELS:
            raise AttentionConfigError("image", "vision_upload_pixels", w=img.width, h=img.height)
        try:
            small = img.convert("L").resize((SIDE, SIDE), Image.Resampling.BILINEAR)
        except (OSError, ValueError, Image.DecompressionBombError):  # truncated, or not decodable whole
            raise AttentionConfigError("image", "vision_upload_bad") from None
    x = torch.tensor(list(small.getdata()), dtype=torch.float32).reshape(SIDE, SIDE) / 255.0
    return 1.0 - x if float(x.mean()) > 0.5 else x  # dark strokes on light paper: inverted, as the digits are


def upload_ui(model: VisionModel | None, c: VisionConfig, query: int) -> None:
    st.subheader(t("vision.upload_title"))
    file = st.file_uploader(t("vision.upload"), type=["png", "jpg", "jpeg"], key="vi_upload")
    if file is None:
        return
    try:
        image = upload_image(file.getvalue())
    except AttentionConfigError as err:
        st.warning(t("invalid", msg=md(" ".join(error_text(err)))), icon=":material/warning:")
        return
    grid_chart(image.tolist(), t("vision.upload_shown"), "vi_upload_chart", colorscale="Greys")
    if model is not None:
        attention_ui(model, image, c, query, "vi_upload_attn")

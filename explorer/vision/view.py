"""The Vision page's parts: an image cut into patches, Swin's windows and their mask, the receptive field, the
cost, and a tiny model trained in a background job (``vision_train``) whose heads are drawn on a held-out digit
or on the learner's own picture. Plain values across sessions; the trained weights come back as lists and the
model is rebuilt once per configuration (``trained``)."""

from __future__ import annotations

import io
import threading
from collections import OrderedDict
from dataclasses import replace

import streamlit as st
import torch

from attn_core import AttentionConfigError
from attn_core import vision as V
from attn_core.vision.model import SIDE, VisionConfig, VisionModel, digits

from .. import figures as fig
from ..i18n import error_text, t
from ..jobs import waiting
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
    st.dataframe(table, hide_index=True)


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


def request(c: VisionConfig) -> tuple[str, dict]:
    return "vision_train", {"vision": {k: getattr(c, k) for k in c.__dataclass_fields__}}


_MODELS: OrderedDict[tuple, VisionModel] = OrderedDict()  # the last few rebuilt (each ~30k parameters)
_MODELS_LOCK = threading.Lock()
KEEP_MODELS = 8


def trained(key: tuple, state: dict) -> VisionModel:
    """The trained model rebuilt from its weights (plain lists), once per configuration (the last few kept)."""
    with _MODELS_LOCK:
        if key in _MODELS:
            _MODELS.move_to_end(key)
            return _MODELS[key]
    model = VisionModel(VisionConfig(**dict(key)))
    model.load_state_dict({k: torch.tensor(v) for k, v in state.items()})
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


def trained_ui(c: VisionConfig, image: torch.Tensor, query: int, compare: bool = False) -> VisionModel | None:
    """The trained model's curve and heads; ``compare``: the other kind (ViT or Swin) trained at the same budget
    beside it, both curves on one chart."""
    st.subheader(t("vision.trained_title"))
    st.caption(t("vision.trained_intro", steps=c.steps))
    kinds = [c] + ([replace(c, model="swin" if c.model == "vit" else "vit")] if compare else [])
    jobs = waiting.ask("vision", {k.model: request(k) for k in kinds})
    done = [waiting.status(jobs[k.model]) for k in kinds]  # each draws its own progress while it computes
    if not all(done):
        waiting.pending()
        return None
    results = {k.model: jobs[k.model].result for k in kinds}
    curve = results[c.model]["curve"]
    series = {
        (t(f"vision.model.{m}") if compare else t("vision.val_acc")): [p["val_acc"] for p in r["curve"]]
        for m, r in results.items()
    }
    r = results[c.model]
    chart(
        fig.line(
            [p["step"] for p in curve],
            series,
            style=fig.run_style(),
            title=t("vision.curve_title", acc=f"{r['final']['val_acc']:.3f}", n=r["final"]["val_n"]),
            x_title="step",
        ),
        "vi_curve",
    )
    if compare:
        compare_note(kinds, results)
    model = trained(tuple(request(c)[1]["vision"].items()), r["state"])
    attention_ui(model, image, c, query, "vi_attn")
    return model


def compare_note(kinds: list[VisionConfig], results: dict) -> None:
    """The budget both kinds share (steps, batch, parameters) and what differs: the pairs a layer scores."""
    params = {k.model: sum(p.numel() for p in VisionModel(k).parameters()) for k in kinds}
    pairs = {k.model: int(sum(int(k.mask(layer).sum()) for layer in range(k.layers))) for k in kinds}
    c = kinds[0]
    st.caption(
        t(
            "vision.compare_note",
            steps=c.steps,
            batch=c.batch,
            params=f"{params['vit']:,} / {params['swin']:,}",
            vit=f"{results['vit']['final']['val_acc']:.3f}",
            swin=f"{results['swin']['final']['val_acc']:.3f}",
            pairs_vit=f"{pairs['vit']:,}",
            pairs_swin=f"{pairs['swin']:,}",
        )
    )


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

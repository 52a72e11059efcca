"""The Vision page's parts: an image cut into patches, Swin's windows and their mask, the receptive field, the
cost, and the heads of a tiny model (trained in ``explorer.vision.live``'s runs) drawn on a held-out digit or on
the learner's own picture. A snapshot's weights come from its run; the model is rebuilt once per configuration
and step (``trained``)."""

from __future__ import annotations

import threading
from collections import OrderedDict

import streamlit as st
import torch

from attn_core import AttentionConfigError
from attn_core import vision as V
from attn_core.vision.model import VisionConfig, VisionModel, digits
from attn_core.vision.picture import MAX_BYTES, read_digit
from explorer import charts
from explorer import figures as fig
from explorer.base import tables
from explorer.base.i18n import error_text, t
from explorer.base.safe import md
from explorer.charts.views import chart
from explorer.vision import guard

PATCHES_224 = (32, 16, 8, 4)


def grid_labels(n: int) -> list[str]:
    return [str(i) for i in range(n)]


def patch_lines(pixels: int, patch: int, colour: str) -> list[dict]:
    """The borders between patches of ``patch`` pixels on a ``pixels`` × ``pixels`` heatmap (cells centred on
    0, 1, …): a line at every k·patch − ½ inside the picture, across and down."""
    at = [k * patch - 0.5 for k in range(1, -(-pixels // patch)) if k * patch < pixels]
    line = dict(color=colour, width=2)
    down = [dict(type="line", x0=x, x1=x, y0=-0.5, y1=pixels - 0.5, line=line) for x in at]
    across = [dict(type="line", x0=-0.5, x1=pixels - 0.5, y0=y, y1=y, line=line) for y in at]
    return down + across


def grid_chart(
    z, title: str, key: str, *, colorscale: str = "Viridis", patch: int | None = None, alt: str | None = None
) -> None:
    """A map over the image's pixels or its patches (row and column axes); ``patch``: the borders of the
    patches drawn over the pixels; ``alt``: the sentence under the chart (else the heatmap's own)."""
    rows, cols = len(z), len(z[0])
    style = fig.run_style()
    figure = fig.heatmap(
        z,
        grid_labels(cols),
        grid_labels(rows),
        style=style,
        title=title,
        x_title="column",
        y_title="row",
        colorscale=colorscale,
    )
    if patch:
        figure.update_layout(shapes=list(figure.layout.shapes) + patch_lines(cols, patch, style.colour("accent")))
    if alt is not None:
        figure.update_layout(meta={**(figure.layout.meta or {}), "alt": alt})
    chart(figure, key)


def patch_name(token: int, grid: tuple[int, int]) -> dict:
    """A patch's number and its place in the grid, for a sentence (``q``/``k`` and the row and column)."""
    row, col = V.cell(token, grid)
    return {"n": token, "r": row, "c": col}


def query_label(side: int):
    """The query select box's labels: a patch's number and its (row, column) in a side × side grid (made now, in
    this run's language, not when the box asks)."""
    labels = []
    for q in range(side * side):
        p = patch_name(q, (side, side))
        labels.append(t("vision.query_option", q=p["n"], r=p["r"], c=p["c"]))
    return labels.__getitem__


def peak_alt(z: torch.Tensor, query: int, grid: tuple[int, int], key: str) -> str:
    """The sentence under a map of one patch's weights over the grid: which patch (row, column) holds the most."""
    k = int(z.flatten().argmax())
    q, top = patch_name(query, grid), patch_name(k, grid)
    return t(
        key,
        q=q["n"],
        qr=q["r"],
        qc=q["c"],
        k=top["n"],
        kr=top["r"],
        kc=top["c"],
        w=f"{float(z.flatten()[k]):.2f}",
    )


def patches_ui(image: torch.Tensor, c: VisionConfig) -> None:
    rows, cols = c.grid
    st.subheader(t("vision.patches_title"))
    st.caption(t("vision.patches_intro", p=c.patch, rows=rows, cols=cols, L=rows * cols, d=c.patch * c.patch))
    title = t("vision.image_title", p=c.patch)
    grid_chart(image.tolist(), title, "vi_image_chart", colorscale="Greys", patch=c.patch)
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
        charts.heatmap(
            mask.float().tolist(),
            grid_labels(rows * cols),
            grid_labels(rows * cols),
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
                z = w[0, h, query].reshape(rows, cols)
                alt = peak_alt(z, query, c.grid, "vision.attn_alt")
                grid_chart(z.tolist(), t("vision.attn_title", l=layer, h=h, q=query), f"{key}_{layer}_{h}", alt=alt)
    rolled = V.rollout([w[0] for w in weights])[query].reshape(rows, cols)
    alt = peak_alt(rolled, query, c.grid, "vision.rollout_alt")
    grid_chart(rolled.tolist(), t("vision.rollout_title", n=len(weights), q=query), f"{key}_rollout", alt=alt)
    st.caption(t("vision.rollout_note") + " " + t(f"vision.rollout_reach.{c.model}", q=query))


def held_out(index: int) -> tuple[torch.Tensor, int]:
    _, _, xv, yv = digits(0)
    return xv[index], int(yv[index])


def upload_image(data: bytes) -> torch.Tensor:
    """A picture's bytes as the model reads it: an 8 × 8 digit made as the training digits were
    (``attn_core.vision.picture``)."""
    return read_digit(data)


MIB = MAX_BYTES // 2**20


def css_string(text: str) -> str:
    """``text`` as a CSS string: quoted, its backslashes, quotes and ``<`` escaped, on one line."""
    body = text.replace("\\", "\\\\").replace('"', '\\"').replace("<", "\\3c ").replace("\n", " ")
    return f'"{body}"'


def uploader_css() -> str:
    """The uploader's own words hidden and ours in their place: Streamlit's "200MB per file"-style line goes (the
    limit is in our label, the app's own) and its button's "Upload" is said in the UI's language (our catalogue's
    text, quoted for CSS); its icon stays."""
    where = ".st-key-vi_upload [data-testid='stFileUploaderDropzone']"
    label = f"{where} button [data-testid='stMarkdownContainer'] p"
    return (
        "<style>"
        f"{where} [data-testid='stFileUploaderDropzoneInstructions'] {{ display: none; }}"
        f"{label} {{ font-size: 0; }}"
        f"{label}::after {{ content: {css_string(t('vision.upload_button'))}; font-size: 1rem; }}"
        "</style>"
    )


def unreadable(err: AttentionConfigError) -> None:
    """A picture refused (in the page, or once read): the engine's error for it, in the UI's language."""
    st.warning(t("vision.upload_invalid", msg=md(" ".join(error_text(err)))), icon=":material/warning:")


def upload_ui(model: VisionModel | None, c: VisionConfig, query: int) -> None:
    st.subheader(t("vision.upload_title"))
    st.html(uploader_css())
    file = st.file_uploader(t("vision.upload", mib=MIB), type=list(guard.TYPES), key="vi_upload", max_upload_size=MIB)
    refused = guard.guard("vi_upload", None if file is None else file.file_id)
    if refused is not None:
        unreadable(refused)
    if file is None:
        return
    try:
        image = upload_image(file.getvalue())
    except AttentionConfigError as err:
        unreadable(err)
        return
    grid_chart(image.tolist(), t("vision.upload_shown"), "vi_upload_chart", colorscale="Greys", patch=c.patch)
    if model is not None:
        attention_ui(model, image, c, query, "vi_upload_attn")

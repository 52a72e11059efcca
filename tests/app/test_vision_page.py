"""The Vision page under AppTest: the masks and the receptive field it draws are the engine's, the trained model
arrives from its background job and its held-out accuracy is the job's, an uploaded picture is read or refused
with a message in the UI's language."""

from __future__ import annotations

import io
import json

import pytest
import torch
from background import until_done

from attn_core import vision as V

PAGE = "pages/12_vision.py"


def charts(at) -> dict[str, dict]:
    out = {}
    for c in at.get("plotly_chart"):
        spec = json.loads(c.proto.spec)
        out[spec.get("layout", {}).get("title", {}).get("text", "")] = spec
    return out


def z_of(spec: dict) -> torch.Tensor:
    from test_decoder_pages import z_of as decode

    return decode(spec)


def chart(at, part: str) -> dict:
    found = [s for title, s in charts(at).items() if part in title]
    assert found, f"no chart titled '{part}' in {list(charts(at))}"
    return found[0]


def test_the_swin_mask_and_receptive_field_are_the_engines(app):
    at = app(PAGE, {"vi_model": "swin", "vi_patch": "1", "vi_window": "4", "vi_query": "9"})
    assert not at.exception
    mask = z_of(chart(at, "The L × L mask"))
    assert torch.equal(mask.bool(), V.window_mask((8, 8), 4, 2))
    for k in (1, 2, 3):
        masks = [V.window_mask((8, 8), 4, 2 if i % 2 else 0) for i in range(k)]
        want = V.receptive_field(masks)[9].float().reshape(8, 8)
        assert torch.equal(z_of(chart(at, f"After {k} layer(s)")), want)
    assert any("196" in str(v) for v in at.dataframe[0].value.iloc[:, 1].tolist())  # 224 / 16 = 14 → 196 tokens


def test_the_trained_model_arrives_and_reads_the_held_out_digit(app):
    at = until_done(app(PAGE, {"vi_model": "vit", "vi_patch": "2"}), timeout=900)
    curve = chart(at, "Held-out accuracy while training")
    acc = curve["data"][0]["y"][-1]
    assert acc >= 0.9, curve["data"][0]["y"]
    assert any("The model reads it as" in m.value for m in at.markdown)
    attn = z_of(chart(at, "Layer 0, head 0"))
    assert attn.shape == (4, 4) and abs(float(attn.sum()) - 1.0) < 1e-4  # one query's weights over the grid
    # the rollout drawn is the engine's, on the model the page rebuilt from the job and the image it shows
    from explorer.vision import view

    (model,) = [m for k, m in view._MODELS.items() if dict(k)["model"] == "vit" and dict(k)["patch"] == 2]
    image, _ = view.held_out(int(at.session_state["vi_image"]))
    with torch.no_grad():
        _, weights = model(image[None])
    want = V.rollout([w[0] for w in weights])[int(at.session_state["vi_query"])].reshape(4, 4)
    rolled = z_of(chart(at, "Rollout over 2 layers"))
    assert torch.allclose(rolled, want, rtol=1e-4, atol=1e-6)
    assert abs(float(rolled.sum()) - 1.0) < 1e-4


def _png(size=(32, 32), colour=255) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("L", size, colour).save(buf, "PNG")
    return buf.getvalue()


@pytest.mark.parametrize(
    "data,said",
    [
        (b"not an image at all", "not a PNG or JPEG"),
        (_png()[:40], "not a PNG or JPEG"),  # truncated
        (_png((20000, 20000), 0), "too many to decode"),
    ],
)
def test_a_hostile_upload_is_refused_with_a_message(data, said):
    from attn_core import AttentionConfigError
    from explorer.vision.view import upload_image

    with pytest.raises(AttentionConfigError) as err:
        upload_image(data)
    assert said in " ".join(err.value.args) or said in str(err.value)


def test_an_upload_becomes_an_8_by_8_digit_like_image():
    from explorer.vision.view import upload_image

    x = upload_image(_png((64, 64), 255))  # white paper: inverted to dark
    assert x.shape == (8, 8) and float(x.max()) <= 1e-6


def test_vit_and_swin_compared_at_the_same_budget(app):
    at = until_done(app(PAGE, {"vi_model": "swin", "vi_patch": "2", "vi_window": "2", "vi_compare": "1"}), timeout=900)
    assert not at.exception, [e.value for e in at.exception]
    curve = chart(at, "Held-out accuracy while training")
    names = [d["name"] for d in curve["data"]]
    assert names == ["Swin (windows)", "ViT (global)"]  # the page's own model first
    from attn_core.vision.model import VisionConfig
    from explorer.jobs import heavy
    from explorer.vision import view

    for d, kind in zip(curve["data"], ("swin", "vit"), strict=True):
        c = VisionConfig(model=kind, patch=2, window=2, shift=True, steps=600)
        job = heavy.HEAVY.get(heavy.key_of(*view.request(c)))
        assert job is not None and job.done
        assert d["y"] == [p["val_acc"] for p in job.result["curve"]]
    note = " ".join(c.value for c in at.caption if "Same budget" in c.value)
    assert "600 steps of 64 digits" in note and "Swin" in note
    # 16 patches, 2 layers. Swin, windows of 2 × 2: layer 0 has 4 windows of 4 patches (64 pairs); layer 1 rolls the
    # 4 × 4 grid by 1, and a window that wraps holds patches of 2 or 4 regions, masked from each other: one window
    # of 4 patches in one region (16), two of 2 + 2 (8 each), one of 1 + 1 + 1 + 1 (4): 36.
    vit_pairs, swin_pairs = 2 * 16 * 16, 64 + 16 + 8 + 8 + 4
    assert f"ViT scores {vit_pairs:,} query–key pairs, Swin {swin_pairs:,}" in note

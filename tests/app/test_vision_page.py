"""The Vision page under AppTest: the masks and the receptive field it draws are the engine's; Play trains the
model in a shared run (``explorer.vision.runs``) and the page draws that run's held-out accuracy and the heads of
its latest snapshot, Step pauses it at a snapshot; an uploaded picture is read or refused with a message in the
UI's language."""

from __future__ import annotations

import io
import json
import time

import pytest
import torch

from attn_core import AttentionConfigError
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


@pytest.fixture
def runs():
    from explorer.vision.runs import VISION_RUNS

    yield VISION_RUNS
    for run in list(VISION_RUNS.runs.values()):
        VISION_RUNS.stop(run)


def trained(at, runs, *cfgs, until=lambda r: not r.active, timeout=900.0):
    """Wait for the runs of ``cfgs`` that the page's session started (watched meanwhile, as the page's poll does),
    then rerun the page."""

    def mine():
        return [runs.runs.get(c) for c in cfgs]  # looked up without watching

    deadline = time.monotonic() + timeout
    while not all(r is not None and until(r) for r in mine()) and time.monotonic() < deadline:
        for r in filter(None, mine()):
            for session in list(r.watchers):
                runs.get(r.cfg, session)
        time.sleep(0.2)
    assert all(r is not None and until(r) for r in mine()), [(r.state, r.message) for r in filter(None, mine())]
    return at.run()


def captions(at) -> list[str]:
    return [c.value.replace("\\", "") for c in at.caption]  # as shown: Markdown's escapes dropped


def patch_said(z: torch.Tensor, query: int, cols: int, rollout: bool) -> str:
    """The sentence a map of ``query``'s weights over the grid should carry, from the map itself: the query's and the
    strongest patch's number, row and column (token t sits at row t // cols, column t % cols)."""
    k = int(z.flatten().argmax())
    w = f"{float(z.flatten()[k]):.2f}"
    q_at, k_at = f"(row {query // cols}, column {query % cols})", f"patch {k} (row {k // cols}, column {k % cols})"
    if rollout:
        return f"Patch {query}'s output {q_at} comes most from {k_at}: {w}."
    return f"Patch {query} {q_at} attends most to {k_at}: weight {w}."


def test_play_trains_the_model_live_and_its_heads_read_the_held_out_digit(app, runs):
    at = app(PAGE, {"vi_model": "vit", "vi_patch": "2", "vi_query": "9"})
    assert at.button(key="vi_play") and any("Press Play" in i.value for i in at.info)
    assert not [c for c in charts(at) if "Held-out accuracy" in c]  # nothing trains before Play
    from attn_core.vision.model import VisionConfig
    from explorer.vision import view

    cfg = VisionConfig(model="vit", patch=2, steps=600)
    at = trained(at.button(key="vi_play").click().run(), runs, cfg)
    assert not at.exception, [e.value for e in at.exception]
    run = runs.runs.get(cfg)
    assert run is not None and run.state == "done"
    curve = chart(at, "Held-out accuracy while training")
    assert curve["data"][0]["y"] == [s.val_acc for s in run.snaps]  # the run's own numbers, as they came
    assert curve["data"][0]["x"] == list(range(50, 601, 50)) and curve["data"][0]["y"][-1] >= 0.9
    assert any("The model reads it as" in m.value for m in at.markdown)
    attn = z_of(chart(at, "Layer 0, head 0"))
    assert attn.shape == (4, 4) and abs(float(attn.sum()) - 1.0) < 1e-4  # one query's weights over the grid
    # the rollout drawn is the engine's, on the model the page rebuilt from the last snapshot and the image it shows
    (model,) = [m for k, m in view._MODELS.items() if dict(k)["model"] == "vit" and dict(k).get("at_step") == 600]
    image, _ = view.held_out(int(at.session_state["vi_image"]))
    with torch.no_grad():
        _, weights = model(image[None])
    want = V.rollout([w[0] for w in weights])[int(at.session_state["vi_query"])].reshape(4, 4)
    rolled = z_of(chart(at, "Rollout over 2 layers"))
    assert torch.allclose(rolled, want, rtol=1e-4, atol=1e-6)
    assert abs(float(rolled.sum()) - 1.0) < 1e-4
    # under each map, the patches named by their place in the grid (never a grid number read as a token: "'2'
    # attends most to '2'"); the rollout's note speaks of ViT's attention, not of Swin's windows
    said = captions(at)
    for layer in (0, 1):
        for head in (0, 1):
            z = z_of(chart(at, f"Layer {layer}, head {head}: where patch 9"))
            assert patch_said(z, 9, 4, rollout=False) in said, said
    assert patch_said(rolled, 9, 4, rollout=True) in said, said
    assert not [c for c in said if "' attends most to '" in c]
    note = [c for c in said if "Attention rollout" in c]
    assert note and "ViT's global attention" in note[0] and "Swin" not in note[0]


def test_step_pauses_at_a_snapshot_whose_heads_the_page_draws(app, runs):
    at = app(PAGE, {"vi_model": "swin", "vi_patch": "1", "vi_window": "4", "vi_query": "9"})
    from attn_core.vision.model import VisionConfig

    cfg = VisionConfig(model="swin", patch=1, window=4, steps=600)
    at = trained(
        at.button(key="vi_step").click().run(), runs, cfg, until=lambda r: r.state not in ("queued", "running")
    )
    assert not at.exception, [e.value for e in at.exception]
    run = runs.runs.get(cfg)
    assert run.state == "paused" and run.snaps[-1].step < 600
    curve = chart(at, "Held-out accuracy while training")
    assert curve["data"][0]["x"] == [s.step for s in run.snaps]
    assert any(f"paused at step {run.snaps[-1].step} of 600" in m.value for m in at.markdown)
    assert any(f"The heads at step {run.snaps[-1].step} of 600" in c.value for c in at.caption)
    # Swin's first layer at that step: patch 9 attends only within its 4 × 4 window (a model trained this far)
    attn = z_of(chart(at, "Layer 0, head 0: where patch 9"))
    allowed = V.window_mask((8, 8), 4, 0)[9].reshape(8, 8)
    assert float(attn[~allowed].abs().max()) == 0.0 and abs(float(attn.sum()) - 1.0) < 1e-4
    at.button(key="vi_reset").click().run()  # the session leaves the run: the last watcher stops it
    assert run.state == "stopped" and any("Press Play" in i.value for i in at.info)


def test_a_hostile_link_gives_a_notice_and_the_page_still_trains(app, runs):
    at = app(PAGE, {"vi_query": "nan", "vi_patch": "7", "vi_image": "1e400", "vi_compare": "<b>"})
    assert not at.exception, [e.value for e in at.exception]
    shown = " ".join(w.value for w in at.warning)
    assert "cannot be used for" in shown and "vi\\_query" in shown
    assert at.button(key="vi_play")


def _png(size=(32, 32), colour=255) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("L", size, colour).save(buf, "PNG")
    return buf.getvalue()


# Made when the test runs, not when pytest collects the file (in every worker: the bomb's PNG costs 1.6 s of CPU)
HOSTILE_UPLOADS = {
    "text": lambda: b"not an image at all",
    "truncated": lambda: _png()[:40],
    "bomb": lambda: _png((20000, 20000), 0),  # 400 million pixels in a small file
}


@pytest.mark.parametrize(
    "kind,said",
    [("text", "not a PNG or JPEG"), ("truncated", "not a PNG or JPEG"), ("bomb", "too many to decode")],
)
def test_a_hostile_upload_is_refused_with_a_message(kind, said):
    from attn_core import AttentionConfigError
    from explorer.vision.view import upload_image

    with pytest.raises(AttentionConfigError) as err:
        upload_image(HOSTILE_UPLOADS[kind]())
    assert said in " ".join(err.value.args) or said in str(err.value)


def test_an_upload_becomes_an_8_by_8_digit_like_image():
    from PIL import Image, ImageDraw

    from explorer.vision.view import upload_image

    page = Image.new("L", (300, 200), 255)  # white paper, a dark stroke: inverted, cut to it and centred
    ImageDraw.Draw(page).line([(250, 20), (250, 180)], fill=0, width=20)
    buf = io.BytesIO()
    page.save(buf, "PNG")
    x = upload_image(buf.getvalue())
    assert x.shape == (8, 8) and float(x.max()) == 1.0
    assert bool((x[:, 3:5] > 0.5).all()) and float(x[:, :2].max()) == 0.0  # a stroke down the middle
    with pytest.raises(AttentionConfigError) as err:
        upload_image(_png((64, 64), 255))  # blank paper: no digit to read
    assert err.value.code == "vision_upload_blank"


def test_the_image_shows_its_patch_grid(app):
    """The picture "cut into P × P patches" is drawn with the patches' borders: a line between pixel k·P − 1 and
    k·P, across and down (cells sit at 0..7)."""
    for patch in (2, 4):
        at = app(PAGE, {"vi_model": "vit", "vi_patch": str(patch)})
        assert not at.exception
        shapes = chart(at, f"The image, cut into {patch} × {patch} patches")["layout"].get("shapes", [])
        lines = [s for s in shapes if s["type"] == "line"]
        want = [k * patch - 0.5 for k in range(1, 8 // patch)]
        assert sorted(s["x0"] for s in lines if s["x0"] == s["x1"]) == want
        assert sorted(s["y0"] for s in lines if s["y0"] == s["y1"]) == want
        assert all(s["y0"] == -0.5 and s["y1"] == 7.5 for s in lines if s["x0"] == s["x1"])  # top to bottom


def test_vit_and_swin_compared_at_the_same_budget(app, runs):
    at = app(PAGE, {"vi_model": "swin", "vi_patch": "2", "vi_window": "2", "vi_compare": "1"})
    from attn_core.vision.model import VisionConfig

    cfgs = {kind: VisionConfig(model=kind, patch=2, window=2, shift=True, steps=600) for kind in ("swin", "vit")}
    at = trained(at.button(key="vi_play").click().run(), runs, *cfgs.values())
    assert not at.exception, [e.value for e in at.exception]
    curve = chart(at, "Held-out accuracy while training")
    names = [d["name"] for d in curve["data"]]
    assert names == ["Swin (windows)", "ViT (global)"]  # the page's own model first
    for d, kind in zip(curve["data"], ("swin", "vit"), strict=True):
        run = runs.runs.get(cfgs[kind])
        assert run is not None and run.state == "done"  # two runs, one of each kind
        assert d["y"] == [s.val_acc for s in run.snaps]
    rollout = [c for c in captions(at) if "Attention rollout" in c]  # the page's own model's: Swin's
    assert rollout and "Swin's windows" in rollout[0] and "ViT" not in rollout[0]
    note = " ".join(c.value for c in at.caption if "Same budget" in c.value)
    assert "600 steps of 64 digits" in note and "Swin" in note
    # 16 patches, 2 layers. Swin, windows of 2 × 2: layer 0 has 4 windows of 4 patches (64 pairs); layer 1 rolls the
    # 4 × 4 grid by 1, and a window that wraps holds patches of 2 or 4 regions, masked from each other: one window
    # of 4 patches in one region (16), two of 2 + 2 (8 each), one of 1 + 1 + 1 + 1 (4): 36.
    vit_pairs, swin_pairs = 2 * 16 * 16, 64 + 16 + 8 + 8 + 4
    assert f"ViT scores {vit_pairs:,} query–key pairs, Swin {swin_pairs:,}" in note


@pytest.mark.parametrize(("lang", "button", "limit"), [("en", "Upload", "up to 5 MiB"), ("zh", "上传", "最多 5 MiB")])
def test_the_uploader_says_the_apps_limit_in_the_pages_language(app, lang, button, limit):
    """The uploader takes no more than the app reads (its own limit and the server's, not Streamlit's 200 MB), its
    label says so in the page's language, and Streamlit's English words on it (the "200MB per file" line, the
    "Upload" button) are hidden and ours shown in their place."""
    import os
    import tomllib

    from attn_core.vision.picture import MAX_BYTES

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(root, ".streamlit", "config.toml"), "rb") as f:
        server = tomllib.load(f)["server"]
    assert server["maxUploadSize"] == MAX_BYTES // 2**20 == 5  # MiB, as Streamlit counts it
    at = app(PAGE, {"lang": lang})
    (uploader,) = at.get("file_uploader")
    assert uploader.proto.max_upload_size_mb == 5 and limit in uploader.proto.label
    css = " ".join(h.proto.body for h in at.get("html") if "stFileUploader" in h.proto.body)
    assert "stFileUploaderDropzoneInstructions'] { display: none; }" in css
    assert f'content: "{button}"' in css


@pytest.mark.parametrize(
    ("lang", "said", "not_said"),
    [("en", "This picture cannot be read:", "These settings"), ("zh", "无法读取这张图片", "当前设置")],
)
def test_an_upload_is_read_on_the_page_and_a_bad_one_said_as_a_picture_not_a_setting(app, lang, said, not_said):
    from PIL import Image, ImageDraw

    from attn_core.vision.picture import read_digit

    at = app(PAGE, {"lang": lang})
    at.get("file_uploader")[0].upload("digit.png", b"not an image at all", "image/png")
    at.run()
    shown = " ".join(w.value for w in at.warning)
    assert said in shown and not_said not in shown, shown
    page = Image.new("L", (400, 300), 255)
    ImageDraw.Draw(page).line([(300, 40), (340, 260)], fill=0, width=16)
    buf = io.BytesIO()
    page.save(buf, "PNG")
    at.get("file_uploader")[0].set_value(("digit.png", buf.getvalue(), "image/png"))
    at.run()
    assert not at.exception and not [w for w in at.warning if said in w.value]
    drawn = [s for title, s in charts(at).items() if title.startswith(("Your picture", "你的图片"))]
    assert drawn and torch.allclose(z_of(drawn[0]), read_digit(buf.getvalue()), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "sent", ["size", "type", None, "", "SIZE", "../size", 1, ["size"], {"reason": "size"}, "x" * 5000]
)
def test_only_a_known_reason_from_the_uploaders_check_is_taken(sent):
    """What the page's script sends back when it stops a file is data: "size" and "type" name the engine's errors
    for that picture; any other value is ignored."""
    from attn_core.vision.picture import MAX_BYTES
    from explorer.vision.guard import refusal

    err = refusal(sent)
    if sent == "size":
        assert err.code == "vision_upload_size" and err.params["mib"] == MAX_BYTES // 2**20 == 5
    elif sent == "type":
        assert err.code == "vision_upload_bad"
    else:
        assert err is None

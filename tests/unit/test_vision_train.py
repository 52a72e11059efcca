"""The tiny ViT and Swin-style models (attn_core.vision.model) on the 8 × 8 digits, and the ``vision`` command."""

from __future__ import annotations

import json
import os

import pytest
import torch
from cli_run import in_process, interpreter

from attn_core.vision import window_mask
from attn_core.vision.model import VisionConfig, VisionModel, digits, train

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_the_digits_split_is_seeded_and_disjoint():
    a, b = digits(0), digits(0)
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    xt, yt, xv, yv = a
    assert (len(yt), len(yv)) == (1437, 360) and xt.shape[1:] == (8, 8) and float(xt.max()) <= 1.0
    seen = {tuple(x.flatten().tolist()) for x in xt}
    assert sum(tuple(x.flatten().tolist()) in seen for x in xv) < 10  # held out (a few digits repeat exactly)


def test_swin_layers_attend_within_their_windows_and_vit_everywhere():
    x = digits(0)[0][:4]
    swin = VisionModel(VisionConfig(model="swin", patch=1, window=4, layers=2))
    with torch.no_grad():
        _, weights = swin(x)
    for layer, w in enumerate(weights):
        allowed = window_mask((8, 8), 4, 2 if layer % 2 else 0)
        assert float(w[..., ~allowed].abs().max()) == 0.0  # no weight outside the (shifted) window
        assert torch.allclose(w.sum(-1), torch.ones_like(w.sum(-1)))
    with torch.no_grad():
        _, weights = VisionModel(VisionConfig(model="vit", patch=2))(x)
    assert bool((weights[0] > 0).all())


@pytest.mark.parametrize("model", ["vit", "swin"])
def test_the_trained_model_reaches_90_percent_held_out(model):
    r = train(VisionConfig(model=model, steps=600, seed=0))
    assert r["final"]["val_acc"] >= 0.90, r["curve"]
    assert r["curve"][0]["val_acc"] < r["final"]["val_acc"]


def test_the_vision_command(tmp_path, capsys):
    def cli(*args):
        return in_process(capsys, ["vision", *args])

    # the first through a real interpreter, the others in this process
    rc, out, _ = interpreter(["vision", "--model", "swin", "--patch", "1", "--window", "4", "--shift", "--json"])
    d = json.loads(out)
    assert rc == 0 and d["grid"] == [8, 8] and d["tokens"] == 64
    assert torch.equal(torch.tensor(d["mask"]), window_mask((8, 8), 4, 2))
    assert d["flops"]["windowed"] < d["flops"]["global"]
    rc, out, _ = cli("--model", "vit", "--size", "224", "--patch", "16", "--json")
    assert json.loads(out)["tokens"] == 196
    rc, out, _ = cli("--model", "vit", "--patch", "2", "--train", "--steps", "50", "--seed", "3", "--json")
    d = json.loads(out)
    assert rc == 0 and d["curve"][-1]["step"] == 50 and 0.0 <= d["final"]["val_acc"] <= 1.0
    too_big, untiled = ["--size", "224", "--patch", "4"], ["--size", "30", "--patch", "4"]
    for bad in (too_big, untiled, ["--model", "swin", "--window", "3"]):
        rc, _, err = cli(*bad)
        assert rc == 2 and "Traceback" not in err and err.startswith("error:"), (bad, err)

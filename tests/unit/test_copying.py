"""Copying what came before (attn_core.interpret.copying) against an independent computation: transformers' own
forward of the model (its attentions and its loss), and each head ablated by zeroing that head's columns of the
output projection in a copy of the model's weights (no hook of ours involved). Tiny random GPT-2 and Llama-style
decoders (nexttoken_tiny), so every family is covered."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch
from tolerance import assert_close

from attn_core import models
from attn_core.interpret import copying as cp

TINY = Path(__file__).resolve().parent / "nexttoken_tiny.py"


def _tiny_module():
    spec = importlib.util.spec_from_file_location("nexttoken_tiny", TINY)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


TINY_MODULE = _tiny_module()


@pytest.fixture(scope="module", params=["gpt2", "llama"])
def tiny(request, tmp_path_factory):
    return models.load(TINY_MODULE.build(request.param, tmp_path_factory.mktemp("copying")))


def test_sources_and_copy_queries_by_hand():
    ids = [0, 5, 6, 7, 5, 6, 9, 5]
    assert cp.sources(ids) == [-1, -1, -1, -1, 2, 3, -1, 5]
    # t=4 (token 5, seen at 1; next 6 == ids[2]): copies; t=5 (token 6 seen at 2; next 9 != ids[3]=7): does not
    assert cp.copy_queries(ids) == [(4, 1)]


def _own_losses(hf, ids: list[int]) -> torch.Tensor:
    x = torch.tensor([ids])
    with torch.no_grad():
        logits = hf(input_ids=x).logits[0].double()
    return torch.nn.functional.cross_entropy(logits[:-1], x[0, 1:], reduction="none")


def test_numbers_against_transformers_own_forward(tiny):
    m = tiny
    ids = cp.repeated_prompt(m, "random", seed=11, n=10)
    assert ids[1:11] == ids[11:21] and len(ids) == 21
    f = cp.copying(m, ids)
    pairs = cp.copy_queries(ids)
    assert [tuple(p) for p in f["copies"]] == pairs and len(pairs) >= 9
    with torch.no_grad():
        att = torch.stack(m.hf(input_ids=torch.tensor([ids]), output_attentions=True).attentions)[:, 0].double()
    loss = _own_losses(m.hf, ids)
    t = torch.tensor([p[0] for p in pairs])
    j = torch.tensor([p[1] for p in pairs])
    keys = torch.tensor([ids.index(ids[q]) + 1 for q in t.tolist()])  # random halves: the one earlier occurrence
    assert_close(torch.tensor(f["stripe"]), att[:, :, t, keys].mean(-1))
    assert_close(torch.tensor(f["second"]), loss[t])
    assert_close(torch.tensor(f["first"]), loss[j])
    layer, head = f["head"]
    assert_close(torch.tensor(f["weights"]), att[layer, head])
    for lay in range(m.layers):
        for h in range(m.heads):
            own = _own_losses(TINY_MODULE.without_head(m, lay, h), ids)[t].mean()
            assert_close(torch.tensor(f["ablated"][lay][h]), own)


def test_a_broken_ablation_is_caught(tiny):
    """The check above fails when the wrong head is zeroed (the one-off mistake an index makes)."""
    m = tiny
    ids = cp.repeated_prompt(m, "random", seed=11, n=10)
    f = cp.copying(m, ids)
    t = torch.tensor([p[0] for p in cp.copy_queries(ids)])
    wrong = _own_losses(TINY_MODULE.without_head(m, 0, 1), ids)[t].mean()
    assert abs(f["ablated"][0][0] - float(wrong)) > 1e-4


def test_prompt_kinds_and_refusals(tiny):
    m = tiny
    ids = cp.repeated_prompt(m, "repeat", text="the cat sat")
    half = (len(ids) - 1) // 2
    assert ids[1 : 1 + half] == ids[1 + half :]
    assert cp.repeated_prompt(m, "prompt", text="the cat sat")[1:] == ids[1 : 1 + half]
    assert len(cp.repeated_prompt(m, "random", seed=1, n=10_000)) <= min(cp.MAX_TOKENS, m.max_positions)
    from attn_core import AttentionConfigError

    with pytest.raises(AttentionConfigError):
        cp.repeated_prompt(m, "backwards", text="x")
    with pytest.raises(AttentionConfigError):
        cp.repeated_prompt(m, "repeat", text="")
    with pytest.raises(AttentionConfigError):
        cp.copying(m, [0, 1])

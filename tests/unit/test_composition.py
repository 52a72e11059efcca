"""Which earlier head an induction head reads (attn_core.interpret.composition) against an independent computation
from transformers' own weights and forward: K-composition from the raw projection matrices and norm gains, and the
causal drop with the earlier head removed from a copy of the model's output projection (no hook of ours)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch
from tolerance import assert_close

from attn_core import models
from attn_core.interpret import composition as comp
from attn_core.interpret.decoder import repeated_tokens

TINY = Path(__file__).resolve().parent / "nexttoken_tiny.py"


def _tiny_module():
    spec = importlib.util.spec_from_file_location("nexttoken_tiny", TINY)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


TINY_MODULE = _tiny_module()


@pytest.fixture(scope="module", params=["gpt2", "llama"])
def tiny(request, tmp_path_factory):
    return models.load(TINY_MODULE.build(request.param, tmp_path_factory.mktemp("composition")))


def _raw(m, layer: int):
    """(W_q, W_k, W_v as (H·d or kv·d, d_model), W_O (d_model, H·d), the attention norm's gain) read from the
    transformers modules by their own names."""
    if m.family == "gpt2":
        block = m.hf.transformer.h[layer]
        w = block.attn.c_attn.weight.detach().T  # Conv1D (in, 3 out) -> (3 out, in)
        dm = m.d_model
        return w[:dm], w[dm : 2 * dm], w[2 * dm :], block.attn.c_proj.weight.detach().T, block.ln_1.weight.detach()
    block = m.hf.model.layers[layer]
    a = block.self_attn
    W = (a.q_proj.weight, a.k_proj.weight, a.v_proj.weight, a.o_proj.weight, block.input_layernorm.weight)
    return tuple(x.detach() for x in W)


def _own_k_composition(m, l2: int, h2: int, l1: int, h1: int) -> float:
    d, group = m.d_head, m.heads // m.kv_heads
    q, k, _, _, g2 = _raw(m, l2)
    _, _, v, o, g1 = _raw(m, l1)
    kv2, kv1 = h2 // group, h1 // group
    qk = (q[h2 * d : (h2 + 1) * d] * g2).T @ (k[kv2 * d : (kv2 + 1) * d] * g2)
    ov = o[:, h1 * d : (h1 + 1) * d] @ (v[kv1 * d : (kv1 + 1) * d] * g1)
    return float(torch.linalg.norm(qk @ ov) / (torch.linalg.norm(qk) * torch.linalg.norm(ov)))


def _own_induction(hf, ids: torch.Tensor, T: int, layer: int, head: int) -> float:
    with torch.no_grad():
        att = hf(input_ids=ids, output_attentions=True).attentions[layer][:, head].double()
    q = torch.arange(T + 1, 2 * T + 1)
    return float(att[:, q, q - T + 1].mean())


def test_against_transformers_weights_and_forward(tiny):
    m = tiny
    layer, head = m.layers - 1, 1
    r = comp.composition(m, layer, head)
    ids, T = repeated_tokens(m)
    assert len(r["rows"]) == layer * m.heads
    assert_close(torch.tensor(r["induction"]), torch.tensor(_own_induction(m.hf, ids, T, layer, head)))
    for row in r["rows"]:
        own = _own_k_composition(m, layer, head, row["layer"], row["head"])
        assert_close(torch.tensor(row["k_composition"]), torch.tensor(own))
        without = _own_induction(TINY_MODULE.without_head(m, row["layer"], row["head"]), ids, T, layer, head)
        assert_close(torch.tensor(row["induction_without"]), torch.tensor(without))
        assert_close(torch.tensor(row["drop"]), torch.tensor(r["induction"] - without))
    drops = [row["drop"] for row in r["rows"]]
    assert drops == sorted(drops, reverse=True)
    assert 0 < r["baseline"] < 1


def test_the_check_catches_the_wrong_head(tiny):
    """Computed for another earlier head, the independent K-composition differs: the test above can fail."""
    m = tiny
    r = comp.composition(m, m.layers - 1, 1)
    row = r["rows"][0]
    other = (row["head"] + 1) % m.heads
    assert abs(row["k_composition"] - _own_k_composition(m, m.layers - 1, 1, row["layer"], other)) > 1e-4


def test_scores_are_scale_free_and_bounded():
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(8, 8, generator=g), torch.randn(8, 8, generator=g)
    assert comp.score(a, b) == pytest.approx(comp.score(3 * a, 0.5 * b), rel=1e-5)
    assert 0 < comp.score(a, b) <= 1 + 1e-6
    assert comp.score(torch.eye(8), torch.eye(8)) == pytest.approx(8**0.5 / 8, rel=1e-6)


def test_the_roles_job_names_the_best_induction_heads_reads(tiny):
    from attn_core.interpret import decoder

    roles = decoder.head_roles(tiny, texts=["the cat sat on the mat", "once upon a time there was a cat"])
    found = comp.of_roles(tiny, roles)
    best = roles["best"]["induction"]
    if best["layer"] == 0:
        assert found is None
    else:
        assert (found["layer"], found["head"]) == (best["layer"], best["head"])
        assert found["induction"] == pytest.approx(best["score"], rel=1e-4, abs=1e-6)

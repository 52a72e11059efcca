"""The teaching path against PyTorch's own attention, and the invariants it must keep."""

from dataclasses import replace

import pytest
import torch
import torch.nn.functional as F

from attn_core import Settings, run_trace
from attn_core.errors import AttentionConfigError
from attn_core.masks import MASK_MODES

SENT = "the quick brown fox jumps over the lazy dog again"
MASK_CASES = [
    dict(mask="none"),
    dict(mask="causal"),
    dict(mask="sliding_window", window=1),
    dict(mask="dilated", window=2, dilation=2),
    dict(mask="global_window", window=1, global_tokens=2),
    dict(mask="block", block=3),
    dict(mask="padding", pad_to=13),
    dict(mask="sliding_window", window=2, causal=True),
    dict(mask="block", block=4, causal=True),
]


def test_every_mask_mode_is_covered():
    assert {c["mask"] for c in MASK_CASES} == set(MASK_MODES)


@pytest.mark.parametrize("case", MASK_CASES, ids=lambda c: "-".join(f"{k}{v}" for k, v in c.items()))
def test_scaled_dot_equals_sdpa(case):
    s = Settings(sentence=SENT, d_model=12, d_q=8, d_k=8, d_v=5, heads=2, init="standard", seed=7, **case)
    t = run_trace(s)
    ref = F.scaled_dot_product_attention(t.Q, t.K, t.V, attn_mask=t.mask)
    assert torch.allclose(t.context, ref, atol=1e-5)


@pytest.mark.parametrize(
    "case",
    [dict(mask="none"), dict(mask="causal"), dict(mask="padding", pad_to=12), dict(mask="sliding_window", window=2)],
)
@pytest.mark.parametrize("heads,d_model", [(1, 8), (4, 16), (3, 12)])
def test_standard_layout_equals_nn_multiheadattention(case, heads, d_model):
    s = Settings(sentence=SENT, d_model=d_model, heads=heads, layout="standard", init="standard", seed=3, **case)
    t = run_trace(s)
    w = t.weights
    mha = torch.nn.MultiheadAttention(d_model, heads, batch_first=True)
    with torch.no_grad():
        mha.in_proj_weight.copy_(
            torch.cat(
                [w.W_q.reshape(d_model, d_model), w.W_k.reshape(d_model, d_model), w.W_v.reshape(d_model, d_model)]
            )
        )
        mha.in_proj_bias.copy_(torch.cat([w.b_q.reshape(-1), w.b_k.reshape(-1), w.b_v.reshape(-1)]))
        mha.out_proj.weight.copy_(w.W_o)
        mha.out_proj.bias.copy_(w.b_o)
    x = t.x.unsqueeze(0)
    out, attn = mha(x, x, x, attn_mask=~t.mask, need_weights=True, average_attn_weights=False)
    assert torch.allclose(t.output, out[0], atol=1e-5)
    assert torch.allclose(t.attn, attn[0], atol=1e-5)


def test_cross_attention_equals_nn_multiheadattention():
    s = Settings(
        sentence="a b c", source="one two three four five", d_model=8, heads=2, layout="standard", init="standard"
    )
    t = run_trace(s)
    assert t.attn.shape == (2, 3, 5)
    w = t.weights
    mha = torch.nn.MultiheadAttention(8, 2, batch_first=True)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([w.W_q.reshape(8, 8), w.W_k.reshape(8, 8), w.W_v.reshape(8, 8)]))
        mha.in_proj_bias.copy_(torch.cat([w.b_q.reshape(-1), w.b_k.reshape(-1), w.b_v.reshape(-1)]))
        mha.out_proj.weight.copy_(w.W_o)
        mha.out_proj.bias.copy_(w.b_o)
    out, _ = mha(t.x.unsqueeze(0), t.x_source.unsqueeze(0), t.x_source.unsqueeze(0))
    assert torch.allclose(t.output, out[0], atol=1e-5)


def test_residual_layer_norm():
    s = Settings(sentence=SENT, d_model=8, heads=2, layout="standard", init="standard", residual_norm=True)
    t = run_trace(s)
    assert torch.allclose(t.output, F.layer_norm(t.x + t.projected, (8,)), atol=1e-6)


@pytest.mark.parametrize("case", MASK_CASES, ids=lambda c: "-".join(f"{k}{v}" for k, v in c.items()))
def test_rows_sum_to_one_and_masked_weights_are_exactly_zero(case):
    t = run_trace(Settings(sentence=SENT, heads=2, **case))
    w = t.attn
    assert torch.equal(w[:, ~t.mask], torch.zeros_like(w[:, ~t.mask]))
    sums = w.sum(-1)
    assert torch.allclose(sums[~t.empty_rows], torch.ones_like(sums[~t.empty_rows]), atol=1e-5)
    assert torch.isfinite(w).all() and torch.isfinite(t.output).all()


def test_fully_masked_rows_are_zero_and_flagged_never_nan():
    # cross-attention, block mask: queries past the last key block have nothing to attend to
    t = run_trace(
        Settings(sentence="a b c d e f g h", source="x y", mask="block", block=2, d_model=8, d_q=4, d_k=4, d_v=4)
    )
    assert t.empty_rows[0].tolist() == [False, False, True, True, True, True, True, True]
    assert torch.equal(t.attn[0, 2:], torch.zeros(6, 2))
    assert torch.isfinite(t.context).all() and torch.isfinite(t.softmax.row_max).all()


def test_large_unscaled_scores_stay_finite():
    t = run_trace(Settings(sentence=SENT, score="dot", d_model=512, d_q=512, d_k=512, d_v=8, temperature=0.01))
    assert t.scaled_scores.abs().max() > 1e4  # a saturating softmax
    assert torch.isfinite(t.attn).all() and torch.allclose(t.attn.sum(-1), torch.ones(1, 10))


def test_causal_outputs_do_not_see_the_future():
    a = run_trace(Settings(sentence="one two three four five six", mask="causal", pos="sinusoidal"))
    b = run_trace(Settings(sentence="one two three seven eight nine", mask="causal", pos="sinusoidal"))
    # same vocabulary ids differ, so compare on a shared prefix of embeddings: build from x directly
    assert a.tokens.words[:3] == b.tokens.words[:3]
    xa, xb = a.x.clone(), a.x.clone()
    xb[3:] = torch.randn(3, xb.shape[1])
    from attn_core import steps

    def ctx(x):
        w = a.weights
        q, k, v = steps.project(x, w.W_q), steps.project(x, w.W_k), steps.project(x, w.W_v)
        return steps.staged_softmax(q @ k.transpose(-1, -2) * a.scale, a.mask).weights @ v

    assert torch.allclose(ctx(xa)[:, :3], ctx(xb)[:, :3], atol=1e-6)
    assert not torch.allclose(ctx(xa)[:, 3:], ctx(xb)[:, 3:])


def test_permuting_tokens_permutes_outputs_without_positions():
    a = run_trace(Settings(sentence="alpha beta gamma delta", heads=2, init="standard"))
    b = run_trace(Settings(sentence="delta gamma alpha beta", heads=2, init="standard"))
    perm = [a.tokens.words.index(w) for w in b.tokens.words]
    assert torch.allclose(b.output, a.output[perm], atol=1e-5)
    c = run_trace(Settings(sentence="delta gamma alpha beta", heads=2, init="standard", pos="sinusoidal"))
    assert not torch.allclose(c.output, a.output[perm], atol=1e-3)


def test_additive_score_allows_different_query_and_key_sizes():
    t = run_trace(Settings(score="additive", d_q=5, d_k=9))
    a = t.weights.additive
    q, k = t.Q[0], t.K[0]
    manual = torch.tanh((q @ a.W_a[0].T)[:, None, :] + (k @ a.U_a[0].T)[None, :, :]) @ a.v[0]
    assert torch.allclose(t.scores[0], manual, atol=1e-5)


def test_dropout_is_seeded_and_scaled():
    s = Settings(dropout=0.5, heads=2)
    t1, t2 = run_trace(s), run_trace(s)
    assert torch.equal(t1.attn, t2.attn)
    kept = t1.attn != 0
    assert torch.allclose(t1.attn[kept], 2 * t1.softmax.weights[kept])


def test_param_count_of_standard_layout_matches_the_formula_and_torch():
    from attn_core import param_count

    s = Settings(d_model=64, heads=8, layout="standard", init="standard")
    n = param_count(s)
    assert n["formula_4d2"] == 4 * 64 * 64
    assert n["total"] == sum(p.numel() for p in torch.nn.MultiheadAttention(64, 8).parameters())
    assert n["total"] - n["biases"] == n["formula_4d2"]


@pytest.mark.parametrize(
    "changes,field,text",
    [
        (dict(d_q=10), "d_k", "Set d_q equal to d_k"),
        (dict(layout="standard", d_model=10, heads=3), "heads", "divides 10"),
        (dict(d_model=0), "d_model", "between"),
        (dict(heads=100), "heads", "between"),
        (dict(temperature=0.0), "temperature", "between"),
        (dict(mask="sliding_window", window=0), "window", "window"),
        (dict(mask="block", block=0), "block", "block"),
        (dict(residual_norm=True), "residual_norm", "standard layout"),
        (dict(sentence="   "), "sentence", "Type at least one word"),
        (dict(kernel="linformer", proj_k=50), "proj_k", "between 1 and 6"),
        (dict(kernel="nope"), "kernel", "Choose one of"),
    ],
)
def test_bad_settings_raise_a_specific_error(changes, field, text):
    with pytest.raises(AttentionConfigError, match=text) as info:
        run_trace(replace(Settings(), **changes))
    assert info.value.field == field


def test_peak_weight_with_and_without_scaling():
    from attn_core.tutorial import preset

    tr = run_trace(preset())
    assert tr.peak_weight(0, 1) == pytest.approx(0.4917, abs=1e-4, rel=1e-5)  # the tutorial's 'is' -> 'dessert'
    raw = tr.scores[0, 1]
    assert tr.peak_weight(0, 1, scaled=False) == pytest.approx(float(torch.softmax(raw, -1).max()), abs=1e-6)
    assert tr.peak_weight(0, 1, scaled=False) > 0.9  # unscaled, the softmax saturates
    assert tr.peak_weight(0, 1) < 0.5
    causal = run_trace(replace(preset(), mask="causal"))
    assert causal.peak_weight(0, 0, scaled=False) == 1.0  # the first query sees only itself

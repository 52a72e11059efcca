"""The Lab trains the attention Step by step explains: its layers' weights are ``steps.attend``'s on the
same weights (checked against a hand-written attention, not against attend itself), attend is batched
and differentiable, and the position schemes of ``attn_core.positions`` are the rotation and the bias
their papers write (built here by hand, element by element)."""

import math

import pytest
import torch
from tolerance import assert_close

from attn_core import masks, positions, steps
from attn_core.kernels import KERNELS
from attn_core.lab import TASKS, LabConfig, LabModel, validate
from attn_core.positions import SCHEMES


def rotation(L: int, d: int) -> torch.Tensor:
    """RoFormer's R_p for every position p: (L, d, d) block-diagonal 2 x 2 rotations by p·θ_i,
    θ_i = 10000^(-2i/d), written out with math.cos / math.sin."""
    R = torch.zeros(L, d, d)
    for p in range(L):
        for i in range(d // 2):
            a = p * 10000.0 ** (-2 * i / d)
            c, s = math.cos(a), math.sin(a)
            R[p, 2 * i, 2 * i], R[p, 2 * i, 2 * i + 1] = c, -s
            R[p, 2 * i + 1, 2 * i], R[p, 2 * i + 1, 2 * i + 1] = s, c
    return R


def alibi_bias(H: int, L: int, S: int) -> torch.Tensor:
    """Press et al.: -m_h·|i - j| with m_h = 2^(-8(h+1)/H), one element at a time."""
    out = torch.zeros(H, L, S)
    for h in range(H):
        for i in range(L):
            for j in range(S):
                out[h, i, j] = -(2 ** (-8 * (h + 1) / H)) * abs(i - j)
    return out


def hand_attention(layer, x: torch.Tensor) -> torch.Tensor:
    """The Lab layer's attention weights written out: projections, R_p applied to each query and key,
    the score, 1/√d_k and 1/temperature, ALiBi, the pattern or mask, a softmax over allowed keys;
    a linear variant's φ(q)·φ(k) rows normalised (φ = elu + 1, causal: keys j <= i)."""
    c, kern = layer.c, KERNELS[layer.c.kernel]
    L = x.shape[1]
    Q = torch.einsum("blm,hdm->bhld", x, layer.W_q)
    K = torch.einsum("blm,hdm->bhld", x, layer.W_k)
    if c.pos == "rope":
        R = rotation(L, c.d_k)
        Q, K = torch.einsum("pde,bhpe->bhpd", R, Q), torch.einsum("pde,bhpe->bhpd", R, K)
    if not kern.softmax:
        a = (torch.nn.functional.elu(Q) + 1) @ (torch.nn.functional.elu(K) + 1).transpose(-2, -1)
        if layer.causal or kern.always_causal:
            a = a.tril()
        return a / a.sum(-1, keepdim=True)
    if c.score == "additive":
        wq = torch.einsum("bhld,had->bhla", Q, layer.W_a)
        uk = torch.einsum("bhsd,had->bhsa", K, layer.U_a)
        raw = (torch.tanh(wq[:, :, :, None] + uk[:, :, None]) * layer.v_a[None, :, None, None]).sum(-1)
    else:
        raw = Q @ K.transpose(-2, -1)
    s = raw * ((1 / math.sqrt(c.d_k) if c.score == "scaled_dot" else 1.0) / c.temperature)
    if c.pos == "alibi":
        s = s + alibi_bias(c.heads, L, L)
    if kern.pattern is not None:
        allowed = kern.pattern(L, L, layer.causal, window=c.window)
    else:
        allowed = masks.build_mask(c.mask, L, L, window=c.window, also_causal=layer.causal)
    return torch.softmax(s.masked_fill(~allowed, float("-inf")), -1)


CASES = [
    {"task": "reverse"},
    {"task": "shift", "pos": "rope", "heads": 2},
    {"task": "shift", "pos": "alibi", "heads": 3, "kernel": "sliding_window", "window": 1},
    {"task": "sort", "score": "additive", "heads": 2, "d_k": 6},
    {"task": "reverse", "score": "dot", "mask": "causal", "temperature": 2.0},
    {"task": "repeat", "pos": "rope", "layers": 2},  # a causal task
    {"task": "reverse", "kernel": "linear_elu"},
    {"task": "repeat", "kernel": "causal_linear", "pos": "learned"},
]


@pytest.mark.parametrize("changes", CASES, ids=[",".join(f"{k}={v}" for k, v in c.items()) for c in CASES])
def test_the_labs_attention_is_attend_on_its_weights_and_the_written_out_formula(changes):
    c = validate(LabConfig(**changes))
    torch.manual_seed(0)
    model = LabModel(c)
    x = torch.randn(5, c.length, c.d_model)
    kern = KERNELS[c.kernel]

    def variant(Q, K, scale):  # a linear variant's matrix for one example (H, L, d): the kernel's own
        return kern.weights(Q[None], K[None], causal=c.kernel == "causal_linear" or TASKS[c.task].causal, scale=scale)[
            0
        ]

    for layer in model.layers:
        w, V = layer.weights(x)
        assert w.shape == (5, c.heads, c.length, c.length)
        assert_close(w, hand_attention(layer, x), rtol=2e-6, atol=2e-7)
        for b in range(5):  # attend on one example (L, d_model) at a time: the batched call is the same
            one = steps.attend(
                x[b],
                x[b],
                layer,
                layer.allowed(c.length),
                score=c.score,
                temperature=c.temperature,
                positions=SCHEMES[c.pos],
                effective=None if kern.softmax else variant,
            )
            assert_close(one.weights, w[b], rtol=1e-6, atol=1e-7)
            assert_close(one.V, V[b], rtol=1e-6, atol=1e-7)


def test_rope_is_the_rotation_and_scores_depend_on_the_offset_only():
    torch.manual_seed(1)
    x = torch.randn(2, 3, 7, 8)  # (B, H, L, d)
    R = rotation(7, 8)
    assert_close(positions.rope(x), torch.einsum("pde,bhpe->bhpd", R, x), rtol=1e-6, atol=1e-7)
    q, k = torch.randn(8), torch.randn(8)
    rq, rk = positions.rope(q.expand(7, 8)), positions.rope(k.expand(7, 8))  # the same q, k at every position
    s = rq @ rk.T  # s[m, n] = q R_mᵀ R_n k = q R_(n-m) k
    for off in range(-6, 7):
        diag = torch.diagonal(s, off)
        assert_close(diag, diag[0].expand_as(diag), rtol=1e-5, atol=1e-6)


def test_alibi_is_the_papers_bias_and_attend_adds_it_to_the_scaled_scores():
    torch.testing.assert_close(positions.alibi(4, 5, 6), alibi_bias(4, 5, 6), atol=0, rtol=0)
    torch.manual_seed(2)
    weights = type("W", (), {})()
    weights.W_q, weights.W_k, weights.W_v = torch.randn(4, 3, 6), torch.randn(4, 3, 6), torch.randn(4, 2, 6)
    weights.b_q = weights.b_k = weights.b_v = weights.additive = None
    x = torch.randn(5, 6)
    mask = torch.ones(5, 5, dtype=torch.bool)
    plain = steps.attend(x, x, weights, mask, positions=SCHEMES["none"])
    biased = steps.attend(x, x, weights, mask, positions=SCHEMES["alibi"])
    torch.testing.assert_close(biased.scores, plain.scores, atol=0, rtol=0)  # the raw scores are untouched
    assert_close(biased.scaled, plain.scaled + alibi_bias(4, 5, 5), rtol=1e-6, atol=1e-7)
    expected = torch.softmax(plain.scaled + alibi_bias(4, 5, 5), -1)
    assert_close(biased.softmax.weights, expected, rtol=1e-6, atol=1e-7)


def test_attend_is_batched_and_its_gradients_are_the_hand_written_ones():
    torch.manual_seed(3)
    H, d, dm, L, S = 2, 4, 6, 5, 7
    weights = type("W", (), {})()
    weights.W_q = torch.randn(H, d, dm, requires_grad=True)
    weights.W_k, weights.W_v = torch.randn(H, d, dm), torch.randn(H, 3, dm)
    weights.b_q, weights.b_k, weights.b_v = torch.randn(H, d), None, torch.randn(H, 3)
    weights.additive = None
    x, x_kv = torch.randn(3, L, dm), torch.randn(3, S, dm)
    mask = torch.rand(L, S) > 0.3
    mask[0] = False  # an empty row: zeros, no NaN, in the weights and in the gradients
    a = steps.attend(x, x_kv, weights, mask, positions=SCHEMES["rope"])
    for b in range(3):
        one = steps.attend(x[b], x_kv[b], weights, mask, positions=SCHEMES["rope"])
        for name in ("Q", "K", "V", "scores", "scaled"):
            torch.testing.assert_close(getattr(a, name)[b], getattr(one, name), atol=1e-5, rtol=1e-6)
        assert_close(a.softmax.weights[b], one.softmax.weights, rtol=1e-6, atol=1e-7)
    target = torch.randn(3, H, L, S)
    (grad,) = torch.autograd.grad((a.weights * target).sum(), weights.W_q)
    Wq = weights.W_q.detach().clone().requires_grad_(True)  # the same loss, written out
    Q = torch.einsum("blm,hdm->bhld", x, Wq) + weights.b_q[:, None]
    K = torch.einsum("bsm,hdm->bhsd", x_kv, weights.W_k)
    RL, RS = rotation(L, d), rotation(S, d)
    Q, K = torch.einsum("pde,bhpe->bhpd", RL, Q), torch.einsum("pde,bhpe->bhpd", RS, K)
    s = (Q @ K.transpose(-2, -1) / math.sqrt(d)).masked_fill(~mask, float("-inf"))
    ref = torch.softmax(s, -1).nan_to_num(0.0)
    (expected,) = torch.autograd.grad((ref * target).sum(), Wq)
    assert a.weights[:, :, 0].abs().max() == 0 and torch.isfinite(grad).all()
    torch.testing.assert_close(grad, expected, atol=1e-5, rtol=1e-5)


def test_every_scheme_says_where_it_acts_and_the_trace_offers_the_embedding_ones():
    from attn_core.config import POSITIONS

    assert tuple(n for n, s in SCHEMES.items() if s.trace) == POSITIONS
    for s in SCHEMES.values():
        acts = {"embeddings": s.table is not None, "queries_keys": s.rotate is not None, "scores": s.bias is not None}
        assert [k for k, v in acts.items() if v] == ([s.where] if s.where != "nowhere" else []), s.name
    pe = positions.input_table("sinusoidal", 4, 6, seed=0)
    assert pe[3, 0] == pytest.approx(math.sin(3)) and pe[3, 5] == pytest.approx(math.cos(3 / 10000 ** (4 / 6)))
    assert positions.input_table("rope", 4, 6, seed=0).abs().max() == 0  # it adds nothing to the embeddings

"""attn_core.explain against oracles: Abnar & Zuidema's rollout (rewritten here from their code),
an independent max-flow (networkx), the transformers model itself (hidden states, attention masks,
a hooked value projection), brute-force Shapley values, and the invariants (completeness, sums,
bounds, determinism)."""

import itertools
import math

import networkx as nx
import numpy as np
import pytest
import torch
from tolerance import assert_close

from attn_core import models as pt
from attn_core.errors import AttentionConfigError
from attn_core.explain import correlation as C
from attn_core.explain import encoder as E
from attn_core.explain import internals, methods, references
from attn_core.explain.explain import explain
from attn_core.explain.pair import pair
from attn_core.explain.sentence import make_item, removed


@pytest.fixture(scope="module")
def pre():
    return pt.load()


def compute_joint_attention(att_mat, add_residual=True):
    """Abnar & Zuidema (2020)'s rollout, as in their paper's code: add the identity, renormalise the
    rows, multiply the layers from the first up."""
    if add_residual:
        aug = att_mat + np.eye(att_mat.shape[1])[None, ...]
        aug = aug / aug.sum(axis=-1)[..., None]
    else:
        aug = att_mat
    joint = np.zeros(aug.shape)
    joint[0] = aug[0]
    for i in np.arange(1, joint.shape[0]):
        joint[i] = aug[i].dot(joint[i - 1])
    return joint


def random_attention(rng, layers, n):
    W = rng.random((layers, n, n)) ** 3
    return W / W.sum(-1, keepdims=True)


def test_rollout_equals_compute_joint_attention_on_random_matrices():
    rng = np.random.default_rng(0)
    for layers, n in ((1, 3), (2, 5), (6, 12)):
        W = random_attention(rng, layers, n)
        np.testing.assert_allclose(methods.rollout_matrices(W), compute_joint_attention(W), atol=1e-6, rtol=1e-5)
        np.testing.assert_allclose(methods.rollout(W), compute_joint_attention(W)[-1].mean(0), atol=1e-6, rtol=1e-5)


def test_rollout_on_a_two_layer_toy_by_hand():
    W1 = np.array([[1.0, 0.0], [1.0, 0.0]])  # both read piece 0
    W2 = np.array([[0.0, 1.0], [0.0, 1.0]])  # both read piece 1
    # A1 = [[1, 0], [.5, .5]], A2 = [[.5, .5], [0, 1]]; A2 A1 = [[.75, .25], [.5, .5]]
    np.testing.assert_allclose(methods.rollout_matrices(np.stack([W1, W2]))[1], [[0.75, 0.25], [0.5, 0.5]], atol=1e-12)
    np.testing.assert_allclose(methods.rollout(np.stack([W1, W2])), [0.625, 0.375], atol=1e-12)


def networkx_flow(W, depth):
    """Max-flow from each input to each output in Abnar & Zuidema's layered graph, with networkx."""
    A = 0.5 * W + 0.5 * np.eye(W.shape[-1])
    n = W.shape[-1]
    g = nx.DiGraph()
    for layer in range(depth):
        for i in range(n):
            for j in range(n):
                g.add_edge((layer, j), (layer + 1, i), capacity=float(A[layer][i, j]))
    return np.array([[nx.maximum_flow_value(g, (0, j), (depth, i)) for j in range(n)] for i in range(n)])


def test_flow_equals_an_independent_max_flow_on_small_graphs():
    rng = np.random.default_rng(1)
    for layers, n in ((1, 3), (2, 4), (3, 5)):
        W = random_attention(rng, layers, n)
        np.testing.assert_allclose(methods.flow_matrix(W), networkx_flow(W, layers), atol=1e-5, rtol=1e-5)


def peaked_attention(rng, layers, n):
    """Attention with many exact zeros and a few large weights: bottlenecks that make the max-flow
    differ from a sum of edges (and leave pieces that no path reaches)."""
    W = rng.dirichlet(np.full(n, 0.2), size=(layers, n))
    W[W < 0.05] = 0.0
    W[..., 0] += 1e-9  # no empty row
    return W / W.sum(-1, keepdims=True)


def test_batched_flow_equals_networkx_at_every_depth_on_deeper_peaked_graphs():
    """flow_matrix lays one input's graphs to every output side by side in one scipy call: each
    copy's flow must still be that pair's own max-flow, checked against networkx at each depth."""
    rng = np.random.default_rng(7)
    for layers, n in ((4, 6), (6, 7)):
        W = peaked_attention(rng, layers, n)
        for depth in range(1, layers + 1):
            expected = networkx_flow(W, depth)
            got = methods.flow_matrix(W, depth)
            np.testing.assert_allclose(got, expected, atol=1e-6, rtol=1e-5)
        assert np.abs(expected - methods.rollout_matrices(W)[-1]).max() > 1e-3  # flow is not rollout here


def test_batched_flow_equals_one_max_flow_per_pair_exactly_at_the_pages_size():
    """At the page's size (6 layers, up to FLOW_MAX pieces) the batched flows are the very integers
    that one scipy max-flow per (input, output) pair gives."""
    rng = np.random.default_rng(8)
    W = peaked_attention(rng, 6, 24)
    for depth in (2, 3, 6):
        np.testing.assert_array_equal(methods.flow_matrix(W, depth), methods.flow_matrix_pairwise(W, depth))


def test_flow_differs_from_first_layer_attention_on_two_layers():
    """Layer 1 lets piece 1 pass everything; layer 2 reads only piece 0: flow sees the bottleneck."""
    W1 = np.array([[0.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 1.0, 0.0]])
    W2 = np.array([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    W = np.stack([W1, W2])
    two = methods.flow(W)
    one = methods.flow(W[:1])
    first_layer = methods.residual(W1).mean(0)
    assert np.abs(two - one).max() > 0.1 and np.abs(two - first_layer).max() > 0.1
    np.testing.assert_allclose(two, networkx_flow(W, 2).mean(0), atol=1e-5, rtol=1e-5)


def test_a_single_super_sink_only_sees_the_first_layer():
    """Why flow keeps depth: to one super-sink, each input's flow is 0.5 * layer 1's column sum + 0.5."""
    W = random_attention(np.random.default_rng(2), 4, 6)
    np.testing.assert_allclose(methods.super_sink_flow(W), 0.5 * W[0].sum(0) + 0.5, atol=1e-5, rtol=1e-5)
    assert np.abs(methods.flow(W) - methods.super_sink_flow(W) / 6).max() > 1e-3


def test_the_encoder_rerun_equals_the_model(pre):
    enc = pt.encode(pre, "The animal didn't cross the street because it was too tired")
    run = pt.forward(pre, enc)
    item = make_item(pre, "The animal didn't cross the street because it was too tired")
    p = references.full(pre, item)
    for layer in range(pre.layers + 1):
        assert_close(p.hidden[layer][0], run.hidden[layer], rtol=1e-4, atol=1e-5)
    assert_close(torch.stack(p.attentions)[:, 0], run.attentions, rtol=1e-5, atol=1e-6)


def hf_embedding(pre, ids, mask):
    with torch.inference_mode():
        out = pre.model(input_ids=torch.tensor([ids]), attention_mask=torch.tensor([mask]))
    h = out.last_hidden_state[0]
    m = torch.tensor(mask, dtype=torch.float32)[:, None]
    return (h * m).sum(0) / m.sum()


def test_each_removal_equals_the_model_run_that_way(pre):
    item = make_item(pre, "She forgot her umbrella at the station")
    e = references.full(pre, item).pooled[0]
    loo = {r: references.loo(pre, item, r, references.full(pre, item)) for r in ("delete", "mask", "attention")}
    i = 4
    ids = list(item.ids)
    by = {
        "delete": hf_embedding(pre, ids[:i] + ids[i + 1 :], [1] * (item.n - 1)),
        "mask": hf_embedding(pre, ids[:i] + [item.mask_id] + ids[i + 1 :], [1] * item.n),
        "attention": hf_embedding(pre, ids, [1] * i + [0] + [1] * (item.n - i - 1)),
    }
    for removal, other in by.items():
        assert loo[removal][i] == pytest.approx(1 - float(E.cosine(e, other)), abs=1e-5), removal


def test_value_zeroing_with_one_layer_equals_a_direct_recomputation(pre):
    """Zero piece j's value rows with a hook on the model's own value projection and run its layer."""
    item = make_item(pre, "The cat slept on the warm windowsill")
    p = references.full(pre, item)
    mine = internals.vz_matrix(pre, p.hidden[0][0], 0)
    block = pre.model.encoder.layer[0]
    x = p.hidden[0]
    with torch.inference_mode():
        base = block(x)
        base = base[0] if isinstance(base, tuple) else base
        for j in range(item.n):
            handle = block.attention.self.value.register_forward_hook(
                lambda m, a, out, j=j: out.index_fill(1, torch.tensor([j]), 0.0)
            )
            try:
                got = block(x)
            finally:
                handle.remove()
            got = got[0] if isinstance(got, tuple) else got
            direct = 1 - torch.nn.functional.cosine_similarity(got[0], base[0], dim=-1)
            np.testing.assert_allclose(mine[:, j], direct.clamp_min(0).double().numpy(), atol=1e-5, rtol=1e-5)
    one_layer = internals.normalise_rows(mine).mean(0)
    np.testing.assert_allclose(internals.value_zeroing(pre, p)[0], one_layer, atol=1e-9)


def test_attention_norms_equal_each_pieces_own_contribution_run_alone(pre):
    """‖Σ_h α^h_ij f^h(x_j)‖: the model's attention output (less its bias) when only piece j's value is kept."""
    item = make_item(pre, "A small bird sang outside my window")
    p = references.full(pre, item)
    layer = 2
    N = internals.norm_matrix(pre, p, layer)
    sa = pre.model.encoder.layer[layer].attention.self
    dense = pre.model.encoder.layer[layer].attention.output.dense
    x = p.hidden[layer][0]
    with torch.inference_mode():
        v = sa.value(x)  # (n, d_model), heads side by side
        probs = p.attentions[layer][0]  # (H, n, n)
        H, dh = pre.heads, pre.d_head
        for j in (0, 3, item.n - 1):
            only = torch.zeros_like(v)
            only[j] = v[j]
            ctx = torch.cat([probs[h] @ only[:, h * dh : (h + 1) * dh] for h in range(H)], dim=-1)
            direct = (ctx @ dense.weight.T).norm(dim=-1)
            np.testing.assert_allclose(N[:, j], direct.double().numpy(), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("text", ["The cat slept on the warm windowsill", "I do not like cold weather"])
def test_integrated_gradients_completeness_under_one_percent(pre, text):
    item = make_item(pre, text)
    target = references.full(pre, item).pooled[0]
    ig = references.integrated_gradients(pre, item.ids, target)
    assert ig["delta"] > 0.05  # 1 − cos(e(baseline), e(x)) is not tiny
    assert abs(ig["sum"] - ig["delta"]) < 0.01 * ig["delta"]
    assert ig["error"] < 0.01
    assert ig["attr"][0] == 0 and ig["attr"][-1] == 0  # [CLS] and [SEP] are the baseline's too


def brute_shapley(v, m):
    """Shapley values by enumerating every order of the m players."""
    phi = np.zeros(m)
    for order in itertools.permutations(range(m)):
        mask = 0
        for p in order:
            phi[p] += v[mask | (1 << p)] - v[mask]
            mask |= 1 << p
    return phi / math.factorial(m)


def test_shapley_equals_brute_force_on_toys():
    rng = np.random.default_rng(3)
    for m in (1, 3, 5):
        v = rng.normal(size=2**m)
        np.testing.assert_allclose(references.shapley_from_values(v, m), brute_shapley(v, m), atol=1e-12)
    # two words that each make the other redundant: leave-one-out sees nothing, Shapley halves the credit
    v = np.array([0.0, 1.0, 1.0, 1.0])
    np.testing.assert_allclose(references.shapley_from_values(v, 2), [0.5, 0.5])
    assert v[3] - v[2] == 0 and v[3] - v[1] == 0


def test_shapley_of_the_model_sums_to_v_all_minus_v_none(pre):
    item = make_item(pre, "The dog bit the man")
    target = references.full(pre, item).pooled[0]
    s = references.shapley(pre, item, "attention", target)
    assert s["v_all"] == pytest.approx(1.0, abs=1e-5, rel=1e-5)
    assert s["sum"] == pytest.approx(s["v_all"] - s["v_none"], abs=1e-9)
    v = references.subset_values(pre, item, "attention", target)
    np.testing.assert_allclose(s["words"], brute_shapley(v, item.n_words), atol=1e-9)
    assert (
        references.shapley(
            pre, make_item(pre, "one two three four five six seven eight nine ten eleven"), "attention", target
        )
        is None
    )


def test_correlations_are_bounded_and_a_constant_ranking_has_none():
    rng = np.random.default_rng(4)
    for _ in range(20):
        x, y = rng.normal(size=8), rng.normal(size=8)
        c = C.correlate(x, y)
        assert -1 <= c["spearman"] <= 1 and -1 <= c["kendall"] <= 1
        lo, hi = c["interval"]
        assert -1 <= lo <= hi <= 1
    assert C.correlate([1, 2, 3, 4], [2, 4, 6, 9])["spearman"] == pytest.approx(1.0)
    const = C.correlate([1, 1, 1, 1], [1, 2, 3, 4])
    assert const["spearman"] is None and const["reason"] == "constant"
    assert C.correlate([1, 2], [2, 1])["reason"] == "too_few"


def finite(value) -> bool:
    if isinstance(value, dict):
        return all(finite(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(finite(v) for v in value)
    if isinstance(value, float):
        return math.isfinite(value)
    return True


def test_explain_is_deterministic_and_finite(pre):
    a = explain(pre, "The river flooded the lower fields again")
    b = explain(pre, "The river flooded the lower fields again")
    assert a == b and finite(a)
    assert set(a["methods"]) == {"raw", "rollout", "flow", "norm", "value_zeroing"}
    assert set(a["references"]) >= {"loo", "ig", "shapley"}
    n = len(a["tokens"])
    assert all(len(v) == n for v in a["methods"].values())
    for row in a["correlation"].values():
        for c in row.values():
            assert c["spearman"] is None or -1 <= c["spearman"] <= 1


def test_bad_input_gets_a_message_or_a_notice_never_nan(pre):
    with pytest.raises(AttentionConfigError) as err:
        explain(pre, "!!! ... ?")
    assert err.value.code == "explain_no_words"
    with pytest.raises(AttentionConfigError) as err:
        explain(pre, "word " * 600)
    assert err.value.code == "explain_too_long" and "600" not in err.value.message  # pieces, not words
    with pytest.raises(AttentionConfigError) as err:
        explain(pre, "   ")
    assert err.value.code == "empty_sentence"
    one = explain(pre, "Hello", shapley=True)
    assert finite(one) and {n["code"] for n in one["notices"]} == {"few_pieces"}
    assert all(
        c["spearman"] is None and c["reason"] == "too_few" for r in one["correlation"].values() for c in r.values()
    )
    zh = explain(pre, "我爱北京天安门 ❤❤❤ 😀", shapley=False)
    assert finite(zh) and "many_unk" in {n["code"] for n in zh["notices"]}
    with pytest.raises(AttentionConfigError) as err:
        pair(pre, "I like this film", " ")
    assert err.value.code == "explain_second_empty"
    same = pair(pre, "I like this film", "I like  this film")
    assert same["pair_cosine"] == pytest.approx(1.0, abs=1e-5, rel=1e-5) and same["notices"] == [{"code": "identical"}]
    assert finite(same)


def test_the_pair_split_sums_to_the_cosine_and_ig_is_complete(pre):
    p = pair(pre, "the dog bit the man", "the man bit the dog")
    assert float(np.sum(p["token_pairs"])) == pytest.approx(p["pair_cosine"], abs=1e-6, rel=1e-5)
    att = p["pair_attribution"]
    assert sum(att["a"]) == pytest.approx(att["delta_a"], rel=0.01)
    assert sum(att["b"]) == pytest.approx(att["delta_b"], rel=0.01)


def test_removed_builds_what_it_says(pre):
    item = make_item(pre, "The cat slept")
    ids, keys, w = removed(item, [{2}], "delete")
    assert ids[0].tolist() == [*item.ids[:2], *item.ids[3:], item.pad_id] and keys[0].tolist() == [True] * 4 + [False]
    ids, keys, w = removed(item, [{2}], "attention")
    assert ids[0].tolist() == list(item.ids) and keys[0, 2].item() is False and w[0, 2].item() == 0


def test_pair_shapley_sums_to_the_cosine_less_the_empty_sentences(pre):
    p = pair(pre, "the dog bit the man", "the man bit the dog")
    from attn_core.explain.pair import pair_shapley

    s = pair_shapley(pre, "the dog bit the man", "the man bit the dog")
    for side in ("a", "b"):
        part = s[side]
        assert part["words"] == ["the", "dog", "bit", "the", "man"] if side == "a" else part["words"][1] == "man"
        assert part["v_all"] == pytest.approx(p["pair_cosine"], abs=1e-5, rel=1e-5)
        assert sum(part["values"]) == pytest.approx(part["v_all"] - part["v_none"], abs=1e-9)

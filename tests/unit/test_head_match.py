"""Heads matched across two models (attn_core.interpret.head_match): the distances against scipy's Jensen–Shannon
distance, the matching against a brute force over every one-to-one assignment, a model matched with itself (every
head with itself at distance 0), a model whose heads were permuted in a copy of its weights (the permutation
recovered), Lab snapshots, the encoder roles against ``roles.head_stats``, and the refusals."""

from __future__ import annotations

import copy
import importlib.util
import itertools
import json
import os
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy.spatial.distance import jensenshannon
from tolerance import assert_close

from attn_core import heavy as worker
from attn_core import models
from attn_core.errors import AttentionConfigError
from attn_core.interpret import corpus, roles
from attn_core.interpret import head_match as hm

TINY = Path(__file__).resolve().parent / "nexttoken_tiny.py"


def _tiny_module():
    spec = importlib.util.spec_from_file_location("nexttoken_tiny", TINY)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


TINY_MODULE = _tiny_module()
ITEMS = corpus.load()["sentences"][:8]  # both halves (the set alternates them): enough for a fast check


def _random_attention(g: torch.Generator, heads: int, L: int, causal: bool = False) -> torch.Tensor:
    """(heads, L, L) rows of random distributions (causal: zero above the diagonal), some sharp, some flat."""
    scores = (
        torch.randn(heads, L, L, generator=g, dtype=torch.float64) * torch.linspace(0.5, 4.0, heads)[:, None, None]
    )
    if causal:
        scores = scores.masked_fill(torch.ones(L, L, dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(scores, -1)


def _scipy_distances(att_a, att_b, rows_from: int = 0) -> np.ndarray:
    """Head by head, row by row: scipy's JS distance (base 2), the mean over rows, then over inputs."""
    na, nb = att_a[0].shape[0], att_b[0].shape[0]
    out = np.zeros((na, nb))
    for pa, pb in zip(att_a, att_b, strict=True):
        for i in range(na):
            for j in range(nb):
                rows = range(rows_from, pa.shape[-1])
                out[i, j] += np.mean([jensenshannon(pa[i, r].numpy(), pb[j, r].numpy(), base=2) for r in rows])
    return out / len(att_a)


def _brute_force(d: np.ndarray) -> float:
    """The least total distance over every one-to-one assignment of the smaller side into the larger."""
    na, nb = d.shape
    if na <= nb:
        return min(sum(d[i, c] for i, c in enumerate(cols)) for cols in itertools.permutations(range(nb), na))
    return _brute_force(d.T)


@pytest.mark.parametrize("shape", [(4, 4), (3, 4), (4, 3)])
def test_distances_against_scipy_and_the_matching_against_brute_force(shape):
    g = torch.Generator().manual_seed(sum(shape))
    na, nb = shape
    att_a = [_random_attention(g, na, L) for L in (5, 7)]
    att_b = [_random_attention(g, nb, L) for L in (5, 7)]
    want = _scipy_distances(att_a, att_b)
    r = hm.match_attentions(att_a, att_b)
    assert_close(np.array(r["distance"]), want)
    assert len(r["pairs"]) == min(na, nb)
    assert_close(sum(p["distance"] for p in r["pairs"]), _brute_force(want))
    assert_close(r["mean"], _brute_force(want) / min(na, nb))
    for p in r["pairs"]:
        assert_close(p["distance"], want[p["a"][1], p["b"][1]])
    assert len({tuple(p["a"]) for p in r["pairs"]}) == len({tuple(p["b"]) for p in r["pairs"]}) == min(na, nb)
    assert len(r["unmatched_a"]) == na - min(na, nb) and len(r["unmatched_b"]) == nb - min(na, nb)
    assert (r["same_place_mean"] is None) == (na != nb)
    distances = [p["distance"] for p in r["pairs"]]
    assert distances == sorted(distances)


def test_causal_rows_from_one_leave_the_first_query_out():
    g = torch.Generator().manual_seed(5)
    att_a = [_random_attention(g, 3, 6, causal=True)]
    att_b = [_random_attention(g, 3, 6, causal=True)]
    assert_close(hm.js_distances(att_a, att_b, rows_from=1), _scipy_distances(att_a, att_b, rows_from=1))


def test_a_brute_force_disagreeing_with_the_matching_is_caught():
    """The check above can fail: the matching read in place (head i with head i) is not the least total here."""
    g = torch.Generator().manual_seed(8)
    att_a = [_random_attention(g, 4, 6)]
    att_b = [att_a[0][[2, 0, 3, 1]]]  # B's heads are A's, shuffled
    d = _scipy_distances(att_a, att_b)
    assert float(np.trace(d)) > _brute_force(d) + 0.05
    r = hm.match_attentions(att_a, att_b)
    assert sorted((p["a"][1], p["b"][1]) for p in r["pairs"]) == [(0, 1), (1, 3), (2, 0), (3, 2)]


# --- models -----------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module", params=["gpt2", "llama"])
def tiny_pair(request, tmp_path_factory):
    """A tiny decoder and a copy of it with the heads of every layer permuted (a permutation per layer)."""
    folder = tmp_path_factory.mktemp(f"match_{request.param}")
    m = models.load(TINY_MODULE.build(request.param, folder))
    perms = PERMS[request.param]
    hf = copy.deepcopy(m.hf)
    _permute(hf, request.param, perms, m.d_head)
    permuted = os.path.join(str(folder), "permuted")
    hf.save_pretrained(permuted)
    m.tokenizer.save_pretrained(permuted)
    return m, models.load(permuted), perms


# Llama's grouped-query attention: query heads 2k and 2k + 1 read key/value head k, so a permutation keeps the pairs
PERMS = {"gpt2": [[2, 0, 3, 1], [1, 0, 2, 3], [3, 2, 1, 0]], "llama": [[3, 2, 1, 0], [1, 0, 2, 3], [2, 3, 0, 1]]}


def _blocks(w: torch.Tensor, perm: list[int], d: int, dim: int) -> torch.Tensor:
    """w with its per-head blocks of size d along ``dim`` reordered: new block i is old block perm[i]."""
    idx = torch.cat([torch.arange(p * d, (p + 1) * d) for p in perm])
    return w.index_select(dim, idx)


def _permute(hf, kind: str, perms, d: int) -> None:
    """Reorder the heads of a transformers model in place: in layer l, new head i is old head perms[l][i]."""
    with torch.no_grad():
        for layer, perm in enumerate(perms):
            if kind == "gpt2":
                attn = hf.transformer.h[layer].attn
                W, b = attn.c_attn.weight, attn.c_attn.bias  # Conv1D (in, 3·out): q, k, v side by side
                width = W.shape[1] // 3
                W.copy_(torch.cat([_blocks(W[:, k * width : (k + 1) * width], perm, d, 1) for k in range(3)], 1))
                b.copy_(torch.cat([_blocks(b[k * width : (k + 1) * width], perm, d, 0) for k in range(3)], 0))
                attn.c_proj.weight.copy_(_blocks(attn.c_proj.weight, perm, d, 0))
            else:
                att = hf.model.layers[layer].self_attn
                kv = [perm[2 * k] // 2 for k in range(len(perm) // 2)]
                att.q_proj.weight.copy_(_blocks(att.q_proj.weight, perm, d, 0))
                att.k_proj.weight.copy_(_blocks(att.k_proj.weight, kv, d, 0))
                att.v_proj.weight.copy_(_blocks(att.v_proj.weight, kv, d, 0))
                att.o_proj.weight.copy_(_blocks(att.o_proj.weight, perm, d, 1))


def test_a_model_matched_with_itself(tiny_pair):
    m, _, _ = tiny_pair
    r = hm.match_models(m, m, items=ITEMS)
    d = np.array(r["distance"])
    assert np.all(np.diag(d) == 0.0) and np.all(d + np.eye(len(d)) > 0)
    assert all(p["a"] == p["b"] and p["distance"] == 0.0 for p in r["pairs"])
    assert r["mean"] == 0.0 == r["same_place_mean"] and r["rows_from"] == 1 and r["probes"] == len(ITEMS)
    assert [h["role"] for h in r["heads_a"]] == [p["role_a"] for p in sorted(r["pairs"], key=lambda p: p["a"])]


def test_permuted_heads_are_recovered(tiny_pair):
    m, permuted, perms = tiny_pair
    r = hm.match_models(m, permuted, items=ITEMS)
    got = {tuple(p["b"]): tuple(p["a"]) for p in r["pairs"]}
    want = {(layer, i): (layer, perm[i]) for layer, perm in enumerate(perms) for i in range(len(perm))}
    assert got == want
    assert_close([p["distance"] for p in r["pairs"]], [0.0] * len(want), atol=1e-4)
    assert r["same_place_mean"] > 0.01  # read in place, the heads differ
    # the attentions as transformers computes them: B's head i is A's head perm[i]
    ids = torch.tensor([models.encode(m, " ".join(ITEMS[0]["words"])).ids])
    with torch.no_grad():
        own_a = torch.stack(m.hf(input_ids=ids, output_attentions=True).attentions)[:, 0]
        own_b = torch.stack(permuted.hf(input_ids=ids, output_attentions=True).attentions)[:, 0]
    for layer, perm in enumerate(perms):
        assert_close(own_b[layer], own_a[layer, perm])
    roles_a = {(h["layer"], h["head"]): h["scores"] for h in r["heads_a"]}
    for h in r["heads_b"]:  # each head's roles travel with it
        assert_close(list(h["scores"].values()), list(roles_a[want[(h["layer"], h["head"])]].values()))


def test_a_wrong_permutation_is_caught(tiny_pair):
    """The recovery check fails when the expected permutation is off by one swap."""
    m, permuted, perms = tiny_pair
    r = hm.match_models(m, permuted, items=ITEMS[:4])
    got = {tuple(p["b"]): tuple(p["a"]) for p in r["pairs"]}
    wrong = [list(p) for p in perms]
    wrong[0][0], wrong[0][1] = wrong[0][1], wrong[0][0]
    assert got != {(layer, i): (layer, perm[i]) for layer, perm in enumerate(wrong) for i in range(len(perm))}


def test_different_tokenizers_are_refused(tiny_pair):
    m, _, _ = tiny_pair
    with pytest.raises(AttentionConfigError) as err:
        hm.match_models(models.load(), m, items=ITEMS)
    assert err.value.code == "match_tokenizer" and err.value.field == "b"


def test_the_heavy_job_gives_the_direct_result(tiny_pair, monkeypatch):
    m, permuted, _ = tiny_pair
    monkeypatch.setattr(hm, "probe_items", lambda items=None: list(ITEMS[:4]))  # the worker's own: fewer probes
    (share, part), *rest = list(worker.run(None, "match_heads", {"model": m.path, "other": permuted.path}))
    assert share == 1.0 and not rest
    assert worker.plain(part) == worker.plain(hm.match_models(m, permuted))
    json.dumps(part)


def test_encoder_roles_agree_with_head_stats():
    m = models.load()
    items = corpus.load()["sentences"][:20]
    stats = roles.head_stats(m, items)
    ps = roles.probes(m, items)
    mine = hm.encoder_roles(m, ps, items)
    for h, s in zip(mine, stats["heads"], strict=True):
        assert (h["layer"], h["head"]) == (s["layer"], s["head"])
        positional = {-1: "previous_token", 1: "next_token"}.get(s["positional"], "positional")
        assert (s["positional"] is not None) == (positional in h["roles"])
        assert [r for r in h["roles"] if r in stats["relations"]] == s["syntactic"]
        for k in ("cls", "sep", "punct"):
            assert (s[k] >= hm.SINK_SHARE) == (f"{k}_sink" in h["roles"])
            assert_close(h["scores"][f"{k}_sink"], s[k])


# --- Lab checkpoints ----------------------------------------------------------------------------------------------


def _snapshot(g, layers=2, heads=3, L=8):
    weights = [_random_attention(g, heads, L, causal=True).tolist() for _ in range(layers)]
    scores = [
        [{"prev": 0.9 if h == 0 else 0.1, "induction": 0.2 * h, "first": 0.6, "apart": 0.3} for h in range(heads)]
    ]
    return {"step": 100, "weights": weights, "scores": scores * layers}


def test_lab_snapshots_are_matched_with_their_roles():
    g = torch.Generator().manual_seed(3)
    a = _snapshot(g)
    b = {**a, "weights": [[layer[2], layer[0], layer[1]] for layer in a["weights"]]}  # B's head i: A's perm[i]
    b["scores"] = [[row[2], row[0], row[1]] for row in a["scores"]]
    r = hm.match_lab(a, b, name_a="step 100", name_b="step 900")
    got = {tuple(p["b"]): tuple(p["a"]) for p in r["pairs"]}
    assert got == {(layer, i): (layer, [2, 0, 1][i]) for layer in range(2) for i in range(3)}
    assert all(p["distance"] == 0.0 for p in r["pairs"])
    for p in r["pairs"]:
        assert p["role_a"] == p["role_b"]
        assert p["roles_a"] == (["previous_token", "first_token"] if p["a"][1] == 0 else ["first_token"])
    assert r["a"]["name"] == "step 100" and r["a"]["layers"] == 2 and r["a"]["heads"] == 3
    (_, part), *_ = list(worker.run(object(), "match_lab", {"a": a, "b": b}))
    assert worker.plain(part) == worker.plain(hm.match_lab(a, b))


def test_lab_snapshots_that_cannot_be_matched_are_refused():
    g = torch.Generator().manual_seed(4)
    with pytest.raises(AttentionConfigError) as err:
        hm.match_lab(_snapshot(g, L=8), _snapshot(g, L=9))
    assert err.value.code == "match_shapes"
    with pytest.raises(AttentionConfigError) as err:
        hm.match_lab(_snapshot(g), {"weights": [], "status": "diverged"})
    assert (err.value.code, err.value.field) == ("match_empty", "b")

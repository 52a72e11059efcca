"""Why a head attends (attn_core.why) on every model family: tiny random GPT-2, Llama-style (rotary, grouped-query
attention, RMSNorm, biases) and BERT models built by test_model_families, and the bundled MiniLM.

Oracles: the score recomputed by ``steps.attend`` (take_apart), transformers' own attention probabilities from a
model loaded independently, a forward hook written here for the causal check, and entropies computed in float64
with numpy from transformers' probabilities."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from cli_run import in_process, interpreter
from test_model_families import FAMILIES, TEXT, _build, _hf_run, _oracle
from tolerance import assert_close

from attn_core import AttentionConfigError, why
from attn_core import models as M
from attn_core.why import stream


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    root = tmp_path_factory.mktemp("why")
    return {f: _build(f, root) for f in FAMILIES}


def _run(path):
    m = M.load(path)
    return m, M.forward(m, M.encode(m, TEXT))


@pytest.mark.parametrize("family", FAMILIES)
def test_terms_and_sources_add_up_to_the_score_and_the_row_is_the_models(dirs, family):
    m, run = _run(dirs[family])
    n = run.encoding.n_real
    out = _hf_run(dirs[family], family, run.encoding.ids)
    for layer in range(m.layers):
        head, query = (layer + 1) % m.heads, n - 2
        scaled = M.take_apart(run, M.head_weights(m, layer, head), layer, head).attended.scaled[0]
        table, names, _, _, _ = why.split(m, run, layer, head, query)
        assert names[-1] == why.BIAS and names[0] == "token"
        assert_close(table.sum((0, 1)), scaled[query], msg=f"source table, layer {layer}")  # every key's score
        keys = torch.arange(n) <= query if m.causal else torch.ones(n, dtype=torch.bool)
        row = torch.softmax(table.sum((0, 1)).masked_fill(~keys, float("-inf")), -1)
        assert_close(row, out.attentions[layer][0, head, query], msg=f"softmax of the table, layer {layer}")
        w = why.explain_weight(m, run, layer, head, query, 1)
        assert len(w.terms) == m.d_head
        assert math.isclose(sum(w.terms), float(scaled[query, 1]), rel_tol=1e-5, abs_tol=1e-5 * abs(w.score) + 1e-6)
        assert math.isclose(sum(map(sum, w.table)), w.score, rel_tol=1e-5, abs_tol=1e-6)


@pytest.mark.parametrize("family", FAMILIES)
def test_the_sources_add_up_to_what_attention_reads(dirs, family):
    m, run = _run(dirs[family])
    for layer in range(m.layers):
        parts = why.read_by_attention(m, run, layer)
        assert [k for k in parts if k.startswith("L")] == [f"L{e} {p}" for e in range(layer) for p in ("heads", "MLP")]
        assert_close(sum(parts.values()), run.attn_in[layer], msg=f"layer {layer}")


def test_a_stream_that_does_not_decompose_is_refused(dirs, monkeypatch):
    """The split checks itself: a model whose embeddings miss a part (here: positions dropped) is refused."""
    m, run = _run(dirs["gpt2"])
    fam = stream.family(m)
    monkeypatch.setattr(fam, "embedding_parts", lambda hf, ids: {"token": hf.transformer.wte(ids)})
    with pytest.raises(AttentionConfigError) as err:
        why.read_by_attention(m, run, 1)
    assert err.value.code == "no_split"


def _oracle_weight(path, family, ids, module_of, layer, head, query, key):
    """The weight with ``module_of(model)``'s output zeroed, by a hook on an independently loaded model."""
    model = _oracle(path, family)
    handle = module_of(model).register_forward_hook(lambda mod, args, out: torch.zeros_like(out))
    try:
        return float(_hf_run(path, family, ids).attentions[layer][0, head, query, key])
    finally:
        handle.remove()


REMOVALS = {  # family -> (source, the module whose output removing it zeroes, in transformers' own names)
    "gpt2": [("position", lambda h: h.transformer.wpe), ("L0 MLP", lambda h: h.transformer.h[0].mlp)],
    "llama": [("L0 MLP", lambda h: h.model.layers[0].mlp), ("L0 heads", lambda h: h.model.layers[0].self_attn.o_proj)],
    "bert": [
        ("segment", lambda h: h.embeddings.token_type_embeddings),
        ("L0 MLP", lambda h: h.encoder.layer[0].output.dense),
    ],
}


@pytest.mark.parametrize("family", FAMILIES)
def test_the_causal_check_recomputes_through_the_model(dirs, family):
    from attn_core.why.remove import recomputed_weight

    m, run = _run(dirs[family])
    layer, head, query, key = m.layers - 1, 1, run.encoding.n_real - 1, 2
    for source, module_of in REMOVALS[family]:
        got = recomputed_weight(m, run.encoding, source, layer, head, query, key)
        if source.endswith("heads"):  # the projection's input zeroed is its bias alone: zero the weight, keep the bias
            proj = module_of(_oracle(dirs[family], family))
            handle = proj.register_forward_hook(lambda mod, a, out: mod.bias.expand_as(out))
            try:
                want = float(_hf_run(dirs[family], family, run.encoding.ids).attentions[layer][0, head, query, key])
            finally:
                handle.remove()
        else:
            want = _oracle_weight(dirs[family], family, run.encoding.ids, module_of, layer, head, query, key)
        assert math.isclose(got, want, rel_tol=1e-4, abs_tol=1e-6), source
        assert not math.isclose(got, float(run.attentions[layer, head, query, key]), rel_tol=1e-6), source  # it acted
    # nothing else in this thread, or another, saw a removal: the plain forward is unchanged
    assert_close(M.forward(m, run.encoding).attentions, run.attentions, msg="after the removals")


def test_the_largest_source_is_removed_and_the_prediction_is_the_tables(dirs):
    m, run = _run(dirs["gpt2"])
    w = why.explain_weight(m, run, 2, 3, 6, 2)
    cells = np.array(w.table)
    i = w.names.index(w.removed["source"])
    share = cells[i].sum() + cells[:, i].sum() - cells[i, i]
    assert math.isclose(w.removed["share"], share, rel_tol=1e-5)
    others = [cells[j].sum() + cells[:, j].sum() - cells[j, j] for j in range(len(w.names) - 1)]
    assert abs(share) == pytest.approx(max(map(abs, others)))
    assert 0.0 <= w.removed["predicted"] <= 1.0 and 0.0 <= w.removed["recomputed"] <= 1.0


def test_a_masked_key_and_positions_out_of_range(dirs):
    m, run = _run(dirs["gpt2"])
    later = why.explain_weight(m, run, 0, 0, 1, 4)  # a decoder's query never sees a later key
    assert not later.allowed and later.weight == 0.0 and later.removed is None
    n = run.encoding.n_real
    for q, k in ((n, 0), (-1, 0), (0, n)):
        with pytest.raises(AttentionConfigError) as err:
            why.explain_weight(m, run, 0, 0, q, k)
        assert err.value.code == "no_position"


def _entropy(w: np.ndarray) -> float:
    nz = w[w > 0]
    return float(-(nz * np.log(nz)).sum())


@pytest.mark.parametrize("family", FAMILIES)
def test_the_atlas_against_float64_from_transformers(dirs, family):
    m, run = _run(dirs[family])
    out = _hf_run(dirs[family], family, run.encoding.ids)
    for h in why.atlas(m, run):
        A = out.attentions[h["layer"]][0, h["head"]].double().numpy()
        rows = [_entropy(r) for r in A]
        assert math.isclose(h["entropy"], np.mean(rows), rel_tol=1e-5, abs_tol=1e-6)
        assert math.isclose(h["effective_keys"], np.mean(np.exp(rows)), rel_tol=1e-5)
        assert math.isclose(h["max_weight"], A.max(1).mean(), rel_tol=1e-5)
        assert math.isclose(h["first_token"], A[:, 0].mean(), rel_tol=1e-5)
        assert 0.0 <= h["first_token_value_weighted"] <= 1.0 + 1e-6


def test_the_value_weighted_first_token_share_on_the_bundled_encoder():
    """Kobayashi et al.'s norm-weighted share, from transformers' modules: ‖v_j W_O,hᵀ‖ weighs each key."""
    m = M.load(M.BUNDLED)
    run = M.forward(m, M.encode(m, "The animal didn't cross the street because it was too tired"))
    atlas = why.atlas(m, run)
    layer, head, d = 3, 7, m.d_head
    block = m.hf.encoder.layer[layer].attention
    with torch.no_grad():
        v = block.self.value(run.hidden[layer]).double()[:, head * d : (head + 1) * d]
        W_O = block.output.dense.weight.double()[:, head * d : (head + 1) * d]
    f = (v @ W_O.T).norm(dim=-1).numpy()
    A = run.attentions[layer, head].double().numpy()
    want = np.mean(A[:, 0] * f[0] / (A * f[None, :]).sum(1))
    got = next(h for h in atlas if (h["layer"], h["head"]) == (layer, head))["first_token_value_weighted"]
    assert math.isclose(got, want, rel_tol=1e-5)


def test_uniform_rows_are_counted():
    w = torch.tensor([[0.25, 0.25, 0.25, 0.25], [0.7, 0.1, 0.1, 0.1], [1.0, 0.0, 0.0, 0.0]])
    keys = torch.tensor([[True] * 4, [True] * 4, [True, False, False, False]])
    s = why.row_stats(w, keys)
    assert s["uniform"].tolist() == [True, False, True] and s["n"].tolist() == [4, 4, 1]
    assert math.isclose(float(s["entropy"][0]), math.log(4), rel_tol=1e-6) and float(s["entropy"][2]) == 0.0


def test_the_command_line_contract(dirs, capsys):
    def cli(*args):
        return in_process(capsys, args)

    rc, out, _ = interpreter(  # the first through a real interpreter, the others in this process
        ["why", TEXT, "--model", dirs["llama"], "--layer", "1", "--head", "4", "--query", "5", "--key", "2", "--json"]
    )
    d = json.loads(out)
    assert rc == 0 and set(d) >= {"tokens", "score", "weight", "terms", "sources", "removed"}
    assert math.isclose(sum(d["terms"]), d["score"], rel_tol=1e-5, abs_tol=1e-6)
    assert math.isclose(sum(map(sum, d["sources"]["values"])), d["score"], rel_tol=1e-5, abs_tol=1e-6)
    assert d["sources"]["query"] == d["sources"]["key"] and len(d["terms"]) == 8
    assert set(d["removed"]) >= {"source", "predicted", "recomputed"}
    rc, out, _ = cli("atlas", TEXT, "--model", dirs["bert"], "--json")
    heads = json.loads(out)["heads"]
    assert rc == 0 and len(heads) == 2 * 4
    keys = {"layer", "head", "entropy", "effective_keys", "max_weight", "first_token", "first_token_value_weighted"}
    assert set(heads[0]) >= keys
    rc, _, err = cli(
        "why", TEXT, "--model", dirs["bert"], "--layer", "0", "--head", "0", "--query", "99", "--key", "0"
    )
    assert rc == 2 and "query 99" in err and "Traceback" not in err

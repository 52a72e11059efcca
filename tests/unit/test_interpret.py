"""Interventions on the bundled MiniLM, each checked against an independent computation: the model
itself, a forward hook at another place, or a from-scratch BERT forward written here."""

import json
import math
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F
from cli_run import in_process

from attn_core import models as pt
from attn_core.cli import main
from attn_core.errors import AttentionConfigError
from attn_core.interpret import ablate, corpus, hooks, patch, roles

SENTENCE = "The animal didn't cross the street because it was too tired"


@pytest.fixture(scope="module")
def pre():
    return pt.load("")


def batch(pre, text=SENTENCE):
    b, (enc,) = hooks.batch_of(pre, [text])
    return b, enc


def by_hand(pre, ids, keep, weights_of=None):
    """BERT's forward written out from the model's weights (embeddings excepted), mean-pooled over
    ``keep``; ``weights_of(layer, probs (H, L, L)) -> probs`` may replace a layer's probabilities."""
    m = pre.model
    x = m.embeddings(input_ids=ids[None])[0]
    H, d = pre.heads, pre.d_head
    bias = torch.where(keep, 0.0, float("-inf"))
    for i, layer in enumerate(m.encoder.layer):
        sa, so = layer.attention.self, layer.attention.output
        q, k, v = (
            F.linear(x, lin.weight, lin.bias).view(-1, H, d).transpose(0, 1) for lin in (sa.query, sa.key, sa.value)
        )
        probs = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(d) + bias, -1)
        if weights_of is not None:
            probs = weights_of(i, probs)
        ctx = (probs @ v).transpose(0, 1).reshape(-1, H * d)
        x = F.layer_norm(
            F.linear(ctx, so.dense.weight, so.dense.bias) + x,
            (pre.d_model,),
            so.LayerNorm.weight,
            so.LayerNorm.bias,
            so.LayerNorm.eps,
        )
        inter = F.gelu(F.linear(x, layer.intermediate.dense.weight, layer.intermediate.dense.bias))
        out = layer.output
        x = F.layer_norm(
            F.linear(inter, out.dense.weight, out.dense.bias) + x,
            (pre.d_model,),
            out.LayerNorm.weight,
            out.LayerNorm.bias,
            out.LayerNorm.eps,
        )
    k = keep.float()[:, None]
    return (x * k).sum(0) / k.sum()


def test_nothing_ablated_is_the_model_exactly(pre):
    b, enc = batch(pre)
    plan = hooks.Plan(torch.zeros(1, pre.layers, pre.heads, dtype=torch.int8), b.keep)
    out = hooks.run(pre, b, plan, attentions=True)
    with torch.inference_mode():
        ref = pre.model(input_ids=b.ids, attention_mask=b.keep.long(), output_attentions=True)
    assert torch.equal(out.hidden, ref.last_hidden_state)
    assert torch.equal(out.attentions[:, 0], pt.forward(pre, enc).attentions)
    iv = ablate.intervene(pre, SENTENCE)
    assert iv.cosine == pytest.approx(1.0, abs=1e-12) and torch.equal(iv.attentions, iv.original)


def test_the_written_out_forward_is_the_model(pre):
    """The oracle below is checked once against the model itself."""
    b, _ = batch(pre)
    assert torch.allclose(by_hand(pre, b.ids[0], b.keep[0]), hooks.run(pre, b).embedding[0], atol=1e-5)


def test_zero_is_that_heads_slice_of_the_context_zeroed_by_another_hook(pre):
    b, _ = batch(pre)
    layer, head, d = 2, 5, pre.d_head
    got = ablate.intervene(pre, SENTENCE, [(layer, head)], "zero")

    def zero_slice(module, args):
        ctx = args[0].clone()
        ctx[..., head * d : (head + 1) * d] = 0
        return (ctx,)

    handle = pre.model.encoder.layer[layer].attention.output.dense.register_forward_pre_hook(zero_slice)
    try:
        ref = hooks.run(pre, b).embedding
    finally:
        handle.remove()
    base = hooks.run(pre, b).embedding
    assert got.cosine == pytest.approx(float(hooks.cosine(ref, base)[0]), abs=1e-6)
    assert got.cosine < 0.99999  # the head does something: the check can fail


def test_uniform_is_a_recomputation_with_one_over_n_weights(pre):
    b, _ = batch(pre)
    n = int(b.keep.sum())

    def flatten(i, probs):
        if i == 1:
            probs = probs.clone()
            probs[7] = torch.where(b.keep[0], 1.0 / n, 0.0)
        return probs

    ref = by_hand(pre, b.ids[0], b.keep[0], flatten)
    base = hooks.run(pre, b).embedding[0]
    got = ablate.intervene(pre, SENTENCE, [(1, 7)], "uniform")
    assert got.cosine == pytest.approx(float(hooks.cosine(ref, base)), abs=1e-6)
    assert torch.allclose(got.attentions[1, 7], torch.full((n, n), 1.0 / n))


def test_masking_a_token_is_a_recomputation_without_that_key(pre):
    b, _ = batch(pre)
    keep = b.keep[0].clone()
    keep[4] = False
    ref = by_hand(pre, b.ids[0], keep)
    base = hooks.run(pre, b).embedding[0]
    got = ablate.intervene(pre, SENTENCE, masked=(4,))
    assert got.cosine == pytest.approx(float(hooks.cosine(ref, base)), abs=1e-6)
    assert float(got.attentions[:, :, :, 4].abs().max()) == 0.0 and got.cosine < 0.9999


def test_patching_from_the_same_sentence_changes_nothing(pre):
    r = patch.patch_map(pre, SENTENCE, SENTENCE)
    assert r["identical"] and float(r["distance"].abs().max()) < 1e-6
    assert torch.allclose(r["embeddings"], r["corrupted_embedding"].expand_as(r["embeddings"]), atol=1e-5)


def test_patching_restores_part_of_a_swapped_word(pre):
    r = patch.patch_map(pre, SENTENCE, SENTENCE.replace("tired", "wide"))
    assert r["base_distance"] > 1e-3 and not r["identical"]
    restored = r["restored"]
    assert torch.isfinite(restored).all() and float(restored.max()) > 0.01
    # one head patched by the full model path agrees with the batched, layer-by-layer map
    bc, _ = batch(pre)
    bk, _ = batch(pre, SENTENCE.replace("tired", "wide"))
    record = hooks.Plan(torch.zeros(1, pre.layers, pre.heads, dtype=torch.int8), bc.keep, record=True)
    clean = hooks.run(pre, bc, record).embedding
    modes = torch.zeros(1, pre.layers, pre.heads, dtype=torch.int8)
    modes[0, 4, 3] = hooks.PATCH
    src = {k: (c[0], w[0]) for k, (c, w) in record.capture.items()}
    one = hooks.run(pre, bk, hooks.Plan(modes, bk.keep, source=src)).embedding
    assert float(1 - hooks.cosine(one, clean)[0]) == pytest.approx(float(r["distance"][4, 3]), abs=1e-6, rel=1e-5)


def test_importance_is_deterministic_and_each_entry_is_that_head_alone_ablated(pre):
    a = ablate.importance(pre, SENTENCE)["importance"]
    b = ablate.importance(pre, SENTENCE)["importance"]
    assert a.shape == (6, 12) and torch.equal(a, b)
    for layer, head in ((0, 0), (3, 7), (5, 11)):
        one = ablate.intervene(pre, SENTENCE, [(layer, head)], "zero")
        assert float(a[layer, head]) == pytest.approx(1 - one.cosine, abs=1e-6, rel=1e-5)
    m = ablate.importance(pre, SENTENCE, "mean")["importance"]
    one = ablate.intervene(pre, SENTENCE, [(2, 2)], "mean")
    assert float(m[2, 2]) == pytest.approx(1 - one.cosine, abs=1e-6, rel=1e-5) and not torch.equal(m, a)


def test_pair_cosine_with_the_same_heads_ablated_in_both(pre):
    second = "A tired dog stayed on the pavement"
    got = ablate.intervene(pre, SENTENCE, [(0, 1)], "zero", second=second)
    b1, _ = batch(pre)
    b2, _ = batch(pre, second)
    e1 = hooks.run(pre, b1, ablate.plan_for(pre, 1, b1.keep, [(0, 1)], hooks.ZERO)).embedding
    e2 = hooks.run(pre, b2, ablate.plan_for(pre, 1, b2.keep, [(0, 1)], hooks.ZERO)).embedding
    assert got.pair_cosine == pytest.approx(float(hooks.cosine(e1, e2)[0]), abs=1e-9)
    assert got.pair_cosine != pytest.approx(got.pair_cosine_original, abs=1e-6)


def test_the_probe_file_validates_and_the_validator_can_fail():
    doc = corpus.load()
    assert corpus.validate(doc) == [] and len(doc["sentences"]) >= 150
    halves = {}
    for s in doc["sentences"]:
        for lab in s["labels"]:
            assert 0 <= lab["from"] < len(s["words"]) and 0 <= lab["to"] < len(s["words"])
        halves.setdefault(" ".join(s["words"]).lower(), set()).add(s["half"])
    assert all(len(h) == 1 for h in halves.values())
    bad = json.loads(json.dumps(doc))
    bad["sentences"][0]["labels"][0]["to"] = 99
    bad["sentences"][1] = dict(bad["sentences"][0], id="x", half="score")
    problems = corpus.validate(bad)
    assert any("does not point" in p for p in problems) and any("both halves" in p for p in problems)


def test_head_statistics_use_the_weights_the_head_view_shows(pre):
    from explorer.model import real

    real.wait_for(pt.BUNDLED, timeout=300)
    items = corpus.load()["sentences"][:12]
    for p in roles.probes(pre, items):
        text = " ".join(p.item["words"])
        for layer, head in ((0, 2), (3, 1)):
            shown = real.head(pt.BUNDLED, text, 0, layer, head).model_attn
            assert torch.allclose(p.attentions[layer, head], shown, atol=1e-5)
        single = roles.probe(pre, p.item)
        assert torch.equal(roles.argmax_words(single), roles.argmax_words(p))


def test_word_level_conversion_sums_to_and_averages_from():
    # pieces: [CLS] a b1 b2 [SEP]; words: a, b (two pieces)
    att = torch.tensor(
        [
            [0.2, 0.2, 0.2, 0.2, 0.2],
            [0.1, 0.1, 0.3, 0.4, 0.1],
            [0.0, 0.5, 0.25, 0.25, 0.0],
            [0.0, 1.0, 0.0, 0.0, 0.0],
            [0.2, 0.2, 0.2, 0.2, 0.2],
        ]
    )
    w = roles.word_attention(att, (-1, 0, 1, 1, -1), 2)
    assert torch.allclose(w, torch.tensor([[0.1, 0.7], [0.75, 0.25]]))


def test_a_hand_made_previous_token_head_is_found_positional():
    W = 20
    L = W + 2
    att = torch.softmax(torch.randn(1, 2, L, L, generator=torch.Generator().manual_seed(0)), -1)
    prev = torch.zeros(L, L)
    prev[torch.arange(1, L), torch.arange(0, L - 1)] = 1.0
    prev[0, 0] = 1.0
    att[0, 0] = prev
    fake = roles.Probe({"words": ["w"] * W}, ("x",) * L, (-1, *range(W), -1), att)
    offset, share = roles.positional([roles.argmax_words(fake)])
    assert int(offset[0, 0]) == -1 and float(share[0, 0]) >= roles.POSITIONAL_SHARE
    assert float(share[0, 0]) == 1.0  # the first word, with no previous word, is not counted against it
    assert float(share[0, 1]) < roles.POSITIONAL_SHARE


@pytest.mark.parametrize(
    "text",
    ["a", "。", "我爱机器学习和注意力机制" * 3, " ".join(["word"] * 600)],
    ids=["one_piece", "punct", "chinese_unk", "long"],
)
def test_hostile_sentences_give_numbers_or_a_clear_error(pre, text):
    iv = ablate.intervene(pre, text, [(0, 0)], "uniform")
    assert math.isfinite(iv.cosine) and torch.isfinite(iv.attentions).all()
    try:
        imp = ablate.importance(pre, text)["importance"]
    except AttentionConfigError as err:
        assert err.code == "interpret_too_long" and pt.encode(pre, text).n_real > ablate.MAX_PIECES
    else:
        assert torch.isfinite(imp).all()


def test_every_head_ablated_and_every_token_masked(pre):
    every = ablate.all_heads(pre)
    for mode in ("zero", "uniform", "mean"):
        iv = ablate.intervene(pre, SENTENCE, every, mode)
        assert math.isfinite(iv.cosine) and iv.cosine < 0.99
    n = pt.encode(pre, SENTENCE).n_real
    with pytest.raises(AttentionConfigError) as err:
        ablate.intervene(pre, SENTENCE, masked=tuple(range(n)))
    assert err.value.code == "interpret_mask_all"
    with pytest.raises(AttentionConfigError) as err:
        patch.patch_map(pre, SENTENCE, "A short one")
    assert err.value.code == "patch_length"


def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "attn_core", *args], capture_output=True, text=True, timeout=600, check=False
    )


def test_cli_interpret_json_contract(pre):
    r = cli("interpret", SENTENCE, "--second", "A dog slept", "--ablate", "0:1,5:11", "--mask-token", "3", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["tokens"] == list(pt.encode(pre, SENTENCE).pieces)
    assert len(out["importance"]) == 6 and all(len(row) == 12 for row in out["importance"])
    L = len(out["tokens"])
    assert torch.tensor(out["attention"]).shape == (6, 12, L, L)
    ref = ablate.intervene(pre, SENTENCE, [(0, 1), (5, 11)], "zero", (3,), "A dog slept")
    assert out["cosine"] == pytest.approx(ref.cosine) and out["pair_cosine"] == pytest.approx(ref.pair_cosine)


def test_cli_interpret_without_changes_is_the_model_itself(capsys):
    """In this process (``main``, as the interpreter above runs it): the model's own forward pass, nothing ablated."""
    assert main(["interpret", SENTENCE, "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert plain["cosine"] == pytest.approx(1.0) and plain["pair_cosine"] is None


@pytest.mark.parametrize(
    "args", [["--ablate", "7:0"], ["--ablate", "x"], ["--mask-token", "99"], ["--ablate-mode", "max"]]
)
def test_cli_interpret_bad_arguments(args, capsys):
    """In this process: the same parser and checks as the interpreter's, without starting one per case."""
    code, out, err = in_process(capsys, ["interpret", "The cat sat", *args, "--json"])
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err


def test_pruning_removes_the_least_costly_heads_and_its_curve_is_the_pruned_models(pre):
    from attn_core.interpret import prune

    texts = ["A dog ran .", "She was happy ."]
    curve = prune.prune_curve(pre, texts)
    per_step = round(0.1 * 72)
    assert curve["removed"][0] == 0.0 and curve["cosine"][0] == 1.0 and curve["removed"][-1] == 1.0
    assert len(curve["order"]) == 72 and len(set(curve["order"])) == 72
    # step 1 by another path: every head alone, zero-ablated, one sentence at a time
    cost = torch.stack([ablate.importance(pre, s)["importance"] for s in texts]).mean(0)
    first = sorted(ablate.all_heads(pre), key=lambda h: (float(cost[h]), h))[:per_step]
    assert sorted(curve["order"][:per_step]) == sorted(first)
    # each point: the model with those heads ablated, by intervene
    for k in (1, 4):
        gone = curve["order"][: k * per_step]
        mean = sum(ablate.intervene(pre, s, gone, "zero").cosine for s in texts) / len(texts)
        assert curve["cosine"][k] == pytest.approx(mean, abs=1e-5, rel=1e-5)

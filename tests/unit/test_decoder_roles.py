"""attn_core.interpret.decoder on tiny random decoders (GPT-2; Llama-style with grouped-query attention): the head
roles' scores and the next-token patching map against oracles written here on transformers' own eager model,
loaded independently (its attention probabilities; a forward pre-hook on the output projection)."""

from __future__ import annotations

import pytest
import torch
from nexttoken_tiny import build
from tolerance import assert_close

from attn_core import AttentionConfigError
from attn_core import models as M
from attn_core.interpret import decoder

CLEAN, CORRUPTED = "the cat sat on the mat", "the cat sat on the log"
TEXTS = ["the cat sat on the mat and the dog", "once upon a time there was a cat", "猫坐在垫子上"]


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    root = tmp_path_factory.mktemp("decoder_roles")
    return {kind: build(kind, root) for kind in ("gpt2", "llama")}


def hf(path: str):
    import transformers

    return transformers.AutoModelForCausalLM.from_pretrained(path, attn_implementation="eager").eval()


def attentions(model, ids: list[int]) -> torch.Tensor:
    with torch.no_grad():
        return torch.stack(model(input_ids=torch.tensor([ids]), output_attentions=True).attentions)[:, 0]


def oracle_repeat(model, ids: torch.Tensor, T: int) -> tuple[torch.Tensor, torch.Tensor]:
    """duplicate-token and induction scores, one sequence and one query at a time."""
    dup = torch.zeros(model.config.num_hidden_layers, model.config.num_attention_heads)
    ind = torch.zeros_like(dup)
    for row in ids.tolist():
        A = attentions(model, row)
        for i in range(T + 1, 2 * T + 1):
            dup += A[:, :, i, i - T]
            ind += A[:, :, i, i - T + 1]
    n = len(ids) * T
    return dup / n, ind / n


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
def test_role_scores_match_transformers_attention(dirs, kind):
    pre = M.load(dirs[kind])
    model = hf(dirs[kind])
    roles = decoder.head_roles(pre, texts=TEXTS)
    ids, T = decoder.repeated_tokens(pre)
    assert ids.shape == (decoder.REPEATS, 1 + 2 * T) and torch.equal(ids[:, 1 : T + 1], ids[:, T + 1 :])
    dup, ind = oracle_repeat(model, ids, T)
    assert_close(torch.tensor(roles["scores"]["duplicate_token"]), dup)
    assert_close(torch.tensor(roles["scores"]["induction"]), ind)
    prev = torch.zeros_like(dup)
    first = torch.zeros_like(dup)
    rows = 0
    for text in TEXTS:
        A = attentions(model, pre.tokenizer(text)["input_ids"])
        for i in range(1, A.shape[-1]):
            prev += A[:, :, i, i - 1]
            first += A[:, :, i, 0]
            rows += 1
    assert_close(torch.tensor(roles["scores"]["previous_token"]), prev / rows)
    assert_close(torch.tensor(roles["scores"]["first_token"]), first / rows)
    for role, best in roles["best"].items():
        assert best["score"] == pytest.approx(max(map(max, roles["scores"][role])))


def oracle_patch(path: str, tok, layer: int, head: int, pair: tuple[str, str]) -> tuple[float, float, float]:
    """(logit diff on the clean prompt, on the corrupted one, on the corrupted one with head (layer, head)'s input
    to c_proj copied from the clean run): GPT-2 only, written on transformers' modules."""
    model = hf(path)
    a, b = (tok(p, add_special_tokens=False)["input_ids"][0] for p in pair)
    proj = model.transformer.h[layer].attn.c_proj
    d = model.config.n_embd // model.config.n_head
    sl = slice(head * d, (head + 1) * d)
    kept = {}

    def run(prompt: str) -> float:
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([tok(prompt)["input_ids"]])).logits[0, -1].double()
        return float(logits[a] - logits[b])

    def record(module, args):
        kept["ctx"] = args[0][..., sl].clone()

    def patch(module, args):
        ctx = args[0].clone()
        ctx[..., sl] = kept["ctx"]
        return (ctx,)

    handle = proj.register_forward_pre_hook(record)
    clean = run(CLEAN)
    handle.remove()
    corrupted = run(CORRUPTED)
    handle = proj.register_forward_pre_hook(patch)
    patched = run(CORRUPTED)
    handle.remove()
    return clean, corrupted, patched


def test_next_token_patching_matches_a_hook_on_transformers(dirs):
    pre = M.load(dirs["gpt2"])
    pair = (" the", " on")
    r = decoder.patch_next_token(pre, CLEAN, CORRUPTED, pair)
    clean, corrupted, patched = oracle_patch(dirs["gpt2"], pre.tokenizer, 1, 2, pair)
    assert r["measure"] == "logit_diff" and not r["identical"]
    assert r["clean"] == pytest.approx(clean, abs=1e-4) and r["corrupted"] == pytest.approx(corrupted, abs=1e-4)
    assert float(r["restored"][1, 2]) == pytest.approx((patched - corrupted) / (clean - corrupted), abs=1e-3)
    assert "\ufffd" not in r["top_piece"]


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
def test_patching_from_the_same_prompt_changes_nothing(dirs, kind):
    r = decoder.patch_next_token(M.load(dirs[kind]), CLEAN, CLEAN)
    assert r["identical"] and r["measure"] == "logprob" and float(r["restored"].abs().max()) == 0.0


def test_bad_input_is_refused_with_the_engines_codes(dirs):
    pre = M.load(dirs["gpt2"])
    with pytest.raises(AttentionConfigError) as err:
        decoder.patch_next_token(pre, CLEAN, "the cat")
    assert err.value.code == "patch_length"
    with pytest.raises(AttentionConfigError) as err:
        decoder.patch_next_token(pre, CLEAN, CORRUPTED, ("zzqqxxw", " on"))
    assert err.value.code == "next_token_one"
    with pytest.raises(AttentionConfigError) as err:
        decoder.head_roles(M.load(""))  # the bundled encoder has no next token
    assert err.value.code == "next_token_encoder"

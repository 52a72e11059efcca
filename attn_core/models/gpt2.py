"""GPT-2: pre-norm blocks, learned absolute positions added to the embeddings, causal attention, and the query,
key and value projections fused in one ``Conv1D`` (``c_attn``: y = x W + b, W of shape (d_model, 3·d_model), the
query's columns first, then the key's, then the value's; head h owns columns h·d..(h+1)·d of each third).
Block l: a = attn(ln_1(x)); x = x + a; m = mlp(ln_2(x)); x = x + m. The logits: ln_f(x) W_Uᵀ (W_U tied to wte).
"""

from __future__ import annotations

import torch

from .base import HeadWeights, Model, ModelUnavailable, at, dims, lm_head

CAUSAL = True
MODEL_TYPES = ("gpt2",)


def auto(transformers):
    return transformers.AutoModelForCausalLM


def blocks(hf) -> list:
    return list(hf.transformer.h)


attention = at("attn")  # sees ln_1(x); returns (c_proj(context), weights)
out_linear = at("attn.c_proj")
mlp = at("mlp")
final_norm = at("transformer.ln_f")
attn_norm = at("ln_1")  # what attention reads: ln_1(x)
mlp_output = at("mlp")  # its output is what the MLP adds to the stream


def embedding_parts(hf, ids: torch.Tensor) -> dict[str, torch.Tensor]:
    """The stream entering block 0 by where it comes from: (L, d_model) each; they add up to it."""
    L = ids.shape[-1]
    return {"token": hf.transformer.wte(ids), "position": hf.transformer.wpe(torch.arange(L))}


def embedding_modules(hf) -> dict:
    return {"token": hf.transformer.wte, "position": hf.transformer.wpe}


unembed = lm_head  # both families end in ``lm_head``: (W_U, its bias or None)


def check(hf, spec: str) -> None:
    if not hasattr(hf, "transformer") or not hasattr(hf, "lm_head"):
        raise ModelUnavailable("model_family", spec=spec, kind=type(hf).__name__)
    if any(hasattr(b, "crossattention") for b in blocks(hf)):
        raise ModelUnavailable("model_family", spec=spec, kind=f"{type(hf).__name__} with cross-attention")


def shape(hf) -> dict:
    cfg = hf.config
    return dims(cfg.n_layer, cfg.n_head, cfg.n_embd, cfg.n_positions, cfg.vocab_size)


def head_weights(m: Model, layer: int, head: int) -> HeadWeights:
    """Head ``head``'s columns of the fused ``c_attn``, transposed to the (out, in) layout of ``steps``."""
    attn = attention(blocks(m.hf)[layer])
    W, b = attn.c_attn.weight.detach().float(), attn.c_attn.bias.detach().float()  # (d_model, 3 d_model), (3 d_model)
    d, dm = m.d_head, m.d_model

    def part(i: int) -> tuple[torch.Tensor, torch.Tensor]:
        cols = slice(i * dm + head * d, i * dm + (head + 1) * d)
        return W[:, cols].T.clone().unsqueeze(0), b[cols].clone().unsqueeze(0)  # (1, d, d_model), (1, d)

    cfg = m.hf.config
    return HeadWeights.of(
        part(0),
        part(1),
        part(2),
        kv_head=head,
        score="scaled_dot" if cfg.scale_attn_weights else "dot",
        temperature=float(layer + 1) if cfg.scale_attn_by_inverse_layer_idx else 1.0,
    )


def out_proj(m: Model, layer: int) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(W_O (d_model, H·d), b_O): ``Conv1D`` computes ctx W + b, so W_O = Wᵀ."""
    proj = out_linear(blocks(m.hf)[layer])
    return proj.weight.detach().float().T.contiguous(), proj.bias.detach().float()


def values(attn, x: torch.Tensor, heads: int) -> torch.Tensor:
    B, L, dm = x.shape
    v = attn.c_attn(x).split(dm, dim=2)[2]
    return v.view(B, L, heads, -1).transpose(1, 2)


def base(hf):
    """The model without its LM head (its last hidden state is after ln_f)."""
    return hf.transformer


ATTN_NORM = "LayerNorm (ln_1)"


def fresh(vocab: int, *, d_model: int, layers: int, heads: int, d_ff: int | None, bos: int, eos: int):
    """An untrained GPT-2 of this size (transformers' own class, eager attention so its weights can be read), as the
    training script builds one (``scripts/train_decoder.py``); ``d_ff``: GPT-2's is always 4 × d_model."""
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(
        vocab_size=vocab,
        n_positions=256,
        n_embd=d_model,
        n_layer=layers,
        n_head=heads,
        attn_pdrop=0.0,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        bos_token_id=bos,
        eos_token_id=eos,
        attn_implementation="eager",
    )
    return GPT2LMHeadModel(cfg)


def projection_code(m: Model, layer: int, head: int, shapes: dict) -> str:
    """How ``c_attn`` holds head ``head``'s query weights, as code (``shapes``: W_q, x and Q, for the comments)."""
    lo, hi = head * m.d_head, (head + 1) * m.d_head
    return (
        f"attn = model.transformer.h[{layer}].attn   # GPT-2: Q, K and V fused in one Conv1D (y = x W + b)\n"
        f"W, b = attn.c_attn.weight, attn.c_attn.bias   # ({m.d_model}, {3 * m.d_model}): Q's columns first\n"
        f"W_q, b_q = W[:, {lo}:{hi}].T, b[{lo}:{hi}]   # head {head} of {m.heads}: {shapes['W_q']}\n"
        f"x = model.transformer.h[{layer}].ln_1(resid[{layer}])   # {shapes['x']}\n"
        f"Q = x @ W_q.T + b_q   # {shapes['Q']}"
    )


NOTEBOOK_FORWARD_TEXT = "nb_nt_forward_gpt2"
NOTEBOOK_FORWARD = (
    "def layer_norm(x, w, b, eps):\n"
    "    mu, var = x.mean(-1, keepdim=True), x.var(-1, unbiased=False, keepdim=True)\n"
    "    return (x - mu) / torch.sqrt(var + eps) * w + b\n\n\n"
    "ACT = {'gelu_new': lambda x: torch.nn.functional.gelu(x, approximate='tanh'), "
    "'gelu': torch.nn.functional.gelu, 'relu': torch.relu}[cfg.activation_function]\n"
    "D, H = cfg.n_embd, cfg.n_head\n"
    "d, eps = D // H, cfg.layer_norm_epsilon\n"
    "x = W['transformer.wte.weight'][ids] + W['transformer.wpe.weight'][:L]  # token + position embeddings\n"
    "causal = torch.ones(L, L, dtype=torch.bool).tril()  # a token sees itself and the tokens before it\n"
    "for i in range(cfg.n_layer):\n"
    "    p = f'transformer.h.{i}.'\n"
    "    h = layer_norm(x, W[p + 'ln_1.weight'], W[p + 'ln_1.bias'], eps)\n"
    "    q, k, v = (h @ W[p + 'attn.c_attn.weight'] + W[p + 'attn.c_attn.bias']).split(D, -1)  # Conv1D: x W + b\n"
    "    q, k, v = (t.view(L, H, d).transpose(0, 1) for t in (q, k, v))  # (H, L, d)\n"
    "    scores = (q @ k.transpose(-1, -2) / d**0.5).masked_fill(~causal, float('-inf'))\n"
    "    context = (scores.softmax(-1) @ v).transpose(0, 1).reshape(L, D)\n"
    "    x = x + context @ W[p + 'attn.c_proj.weight'] + W[p + 'attn.c_proj.bias']\n"
    "    h = layer_norm(x, W[p + 'ln_2.weight'], W[p + 'ln_2.bias'], eps)\n"
    "    h = ACT(h @ W[p + 'mlp.c_fc.weight'] + W[p + 'mlp.c_fc.bias'])\n"
    "    x = x + h @ W[p + 'mlp.c_proj.weight'] + W[p + 'mlp.c_proj.bias']\n"
    "x = layer_norm(x, W['transformer.ln_f.weight'], W['transformer.ln_f.bias'], eps)\n"
)

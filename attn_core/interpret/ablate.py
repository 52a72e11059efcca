"""Ablate heads and mask tokens on one sentence; the 6 × 12 importance map.

intervene(pre, sentence, heads, mode, masked, second) -> Intervention
    the pooled embedding's cosine to the unablated one, the pair cosine with a second sentence
    (the same heads ablated in both), every layer's weights after the intervention
importance(pre, sentence, mode, masked) -> (layers, H): 1 - cosine when that head alone is ablated
single_effects(...)  one intervention per (layer, head) candidate, batched layer by layer, each
    started from that layer's input (the layers before it are not recomputed)
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attn_core import models as pt
from attn_core.errors import AttentionConfigError

from . import hooks
from .hooks import MODES, Batch, Plan, batch_of

MAX_PIECES = 128  # the importance and patching maps batch 72 runs of the sentence: longer ones are refused
CHUNK_ROWS = 96  # rows per forward pass in single_effects


@dataclass(frozen=True)
class Intervention:
    tokens: tuple[str, ...]
    heads: tuple[tuple[int, int], ...]
    mode: str
    masked: tuple[int, ...]
    cosine: float  # pooled embedding, intervened vs original
    attentions: torch.Tensor  # (layers, H, L, L) after the intervention
    original: torch.Tensor  # (layers, H, L, L) the model as it is
    second_tokens: tuple[str, ...] | None
    pair_cosine: float | None  # between the two sentences, both intervened
    pair_cosine_original: float | None


def parse_heads(spec: str, layers: int, heads: int) -> tuple[tuple[int, int], ...]:
    """'0:3,5:11' -> ((0, 3), (5, 11)); anything else is an error that says the format."""
    out: list[tuple[int, int]] = []
    for part in (p.strip() for p in (spec or "").split(",")):
        if not part:
            continue
        a, sep, b = part.partition(":")
        if not (sep and a.strip().isdigit() and b.strip().isdigit()):
            raise AttentionConfigError(
                "ablate", "interpret_heads", value=part[:40], last_l=layers - 1, last_h=heads - 1
            )
        pair = (int(a), int(b))
        if not (pair[0] < layers and pair[1] < heads):
            raise AttentionConfigError(
                "ablate", "interpret_heads", value=part[:40], last_l=layers - 1, last_h=heads - 1
            )
        if pair not in out:
            out.append(pair)
    return tuple(sorted(out))


def parse_tokens(spec: str, n: int) -> tuple[int, ...]:
    """'1,3' -> (1, 3), positions among the n pieces ([CLS] is 0)."""
    out: set[int] = set()
    for part in (p.strip() for p in (spec or "").split(",")):
        if not part:
            continue
        if not part.isdigit() or int(part) >= n:
            raise AttentionConfigError("mask_token", "interpret_token", value=part[:40], last=n - 1)
        out.add(int(part))
    return tuple(sorted(out))


def check_mode(mode: str) -> int:
    if mode not in MODES:
        raise AttentionConfigError("ablate_mode", "unknown_choice", value=mode, options=", ".join(MODES))
    return MODES[mode]


def masked_batch(batch: Batch, masked: tuple[int, ...]) -> Batch:
    keep = batch.keep.clone()
    keep[:, list(masked)] = False
    if not bool(keep[batch.real].any()):
        raise AttentionConfigError("mask_token", "interpret_mask_all")
    return Batch(batch.ids, batch.real, keep)


def plan_for(pre, rows: int, keep: torch.Tensor, heads, mode: int, means=None) -> Plan:
    modes = torch.zeros(rows, pre.layers, pre.heads, dtype=torch.int8)
    for layer, head in heads:
        modes[:, layer, head] = mode
    return Plan(modes, keep, mean=means)


def means_for(pre, mode: int):
    if mode != hooks.MEAN:
        return None
    from .corpus import corpus_means

    return corpus_means(pre)


def intervene(pre, sentence: str, heads=(), mode: str = "zero", masked=(), second: str | None = None) -> Intervention:
    code = check_mode(mode)
    batch, (enc,) = batch_of(pre, [sentence])
    mb = masked_batch(batch, tuple(masked))
    base = hooks.run(pre, batch, attentions=True)
    after = hooks.run(pre, mb, plan_for(pre, 1, mb.keep, heads, code, means_for(pre, code)), attentions=True)
    pair = pair0 = None
    second_tokens = None
    if second is not None:
        b2, (e2,) = batch_of(pre, [second])
        second_tokens = e2.pieces
        o2 = hooks.run(pre, b2).embedding
        a2 = hooks.run(pre, b2, plan_for(pre, 1, b2.keep, heads, code, means_for(pre, code))).embedding
        pair0 = float(hooks.cosine(base.embedding, o2)[0])
        pair = float(hooks.cosine(after.embedding, a2)[0])
    return Intervention(
        enc.pieces,
        tuple(heads),
        mode,
        tuple(masked),
        float(hooks.cosine(after.embedding, base.embedding)[0]),
        after.attentions[:, 0],
        base.attentions[:, 0],
        second_tokens,
        pair,
        pair0,
    )


def single_effects(pre, batch: Batch, base: torch.Tensor, candidates, mode: int, *, means=None, source=None):
    """Embeddings (len(candidates), B, d_model): for each (layer, head) candidate, ``batch`` run with the
    heads of ``base`` (layers, H) int8 modes and, in addition, that candidate set to ``mode``."""
    B = batch.ids.shape[0]
    start = hooks.run(pre, batch, Plan(base.expand(B, -1, -1), batch.keep, mean=means, source=source), states=True)
    out = torch.empty(len(candidates), B, pre.d_model)
    by_layer: dict[int, list[int]] = {}
    for i, (layer, _) in enumerate(candidates):
        by_layer.setdefault(layer, []).append(i)
    per = max(1, CHUNK_ROWS // B)
    for layer, idx in sorted(by_layer.items()):
        for c0 in range(0, len(idx), per):
            chunk = idx[c0 : c0 + per]
            modes = base.expand(len(chunk) * B, -1, -1).clone()
            for j, i in enumerate(chunk):
                modes[j * B : (j + 1) * B, layer, candidates[i][1]] = mode
            keep = batch.keep.repeat(len(chunk), 1)
            h = start.hidden_states[layer].repeat(len(chunk), 1, 1)
            hidden = hooks.run_from(pre, layer, h, keep, Plan(modes, keep, mean=means, source=source))
            real = batch.real.repeat(len(chunk), 1)
            out[chunk] = hooks.summary(pre, hidden, keep, real).view(len(chunk), B, -1)
    return out, start


def all_heads(pre) -> list[tuple[int, int]]:
    return [(layer, head) for layer in range(pre.layers) for head in range(pre.heads)]


def check_length(pre, enc: pt.Encoding) -> None:
    if enc.n_real > MAX_PIECES:
        raise AttentionConfigError("sentence", "interpret_too_long", n=enc.n_real, limit=MAX_PIECES)


def importance(pre, sentence: str, mode: str = "zero", masked=(), second: str | None = None) -> dict:
    """``importance`` (layers, H): 1 - cos(embedding with that head ablated, the embedding with only the
    masked tokens masked); with a
    second sentence, ``pair`` (layers, H): the pair cosine with that head ablated in both."""
    code = check_mode(mode)
    batch, (enc,) = batch_of(pre, [sentence])
    check_length(pre, enc)
    mb = masked_batch(batch, tuple(masked))
    base = torch.zeros(pre.layers, pre.heads, dtype=torch.int8)
    cands = all_heads(pre)
    means = means_for(pre, code)
    emb, start = single_effects(pre, mb, base, cands, code, means=means)
    ref = start.embedding  # the sentence with its masked tokens masked, no head ablated
    result = {"importance": (1 - hooks.cosine(emb[:, 0], ref)).float().view(pre.layers, pre.heads)}
    if second is not None:
        b2, (e2,) = batch_of(pre, [second])
        check_length(pre, e2)
        emb2, _ = single_effects(pre, b2, base, cands, code, means=means)
        result["pair"] = hooks.cosine(emb[:, 0], emb2[:, 0]).float().view(pre.layers, pre.heads)
    return result


def token_id(pre, text: str) -> int:
    """The one token ``text`` is for the model (as it would follow the prompt); anything else is an error."""
    ids = pre.tokenizer(text, add_special_tokens=False)["input_ids"]
    if len(ids) != 1:
        pieces = pre.tokenizer.convert_ids_to_tokens(ids) if ids else []
        raise AttentionConfigError("token", "next_token_one", value=text[:40], n=len(ids), pieces=" | ".join(pieces))
    return int(ids[0])


def next_token_measures(pre, embedding: torch.Tensor, top: torch.Tensor, pair=None) -> dict:
    """A decoder's measures of the next token from ``Output.embedding`` (..., d_model): the log-probability of
    token ``top`` (the unablated model's top token), and with ``pair`` = (id_a, id_b) the logit difference."""
    logits = hooks.next_logits(pre, embedding.reshape(-1, embedding.shape[-1])).double()
    out = {"logprob": torch.log_softmax(logits, -1).gather(-1, top.reshape(-1, 1).expand(logits.shape[0], 1))[:, 0]}
    if pair is not None:
        out["logit_diff"] = logits[:, pair[0]] - logits[:, pair[1]]
    return {k: v.view(embedding.shape[:-1]) for k, v in out.items()}


def _check_decoder(pre) -> None:
    if not pre.causal:
        raise AttentionConfigError("model", "next_token_encoder", model=pre.name)


def next_token(pre, sentence: str, heads=(), mode: str = "zero", masked=(), pair=None) -> dict:
    """Decoders: the next-token prediction with and without the intervention: the model's top token, its
    log-probability before and after, and with ``pair`` (two token texts) their logit difference before and after."""
    _check_decoder(pre)
    code = check_mode(mode)
    ids = None if pair is None else (token_id(pre, pair[0]), token_id(pre, pair[1]))
    batch, (enc,) = batch_of(pre, [sentence])
    mb = masked_batch(batch, tuple(masked))
    base = hooks.run(pre, batch).embedding
    after = hooks.run(pre, mb, plan_for(pre, 1, mb.keep, heads, code, means_for(pre, code))).embedding
    top = hooks.next_logits(pre, base).argmax(-1)
    before, now = next_token_measures(pre, base, top, ids), next_token_measures(pre, after, top, ids)
    out = {
        "tokens": enc.pieces,
        "top_token": int(top[0]),
        "top_piece": pt.token_text(pre.tokenizer, int(top[0])),
        "logprob": float(now["logprob"][0]),
        "logprob_original": float(before["logprob"][0]),
    }
    if ids is not None:
        out |= {"pair": ids, "logit_diff": float(now["logit_diff"][0])}
        out["logit_diff_original"] = float(before["logit_diff"][0])
    return out


def next_token_importance(pre, sentence: str, mode: str = "zero", masked=(), pair=None) -> dict:
    """Decoders, the ablation map on the next token: ``logprob_drop`` (layers, H) = log p(top) unablated minus
    log p(top) with that head alone ablated; with ``pair``, ``logit_diff`` (layers, H) with that head ablated
    and ``logit_diff_original``."""
    _check_decoder(pre)
    code = check_mode(mode)
    ids = None if pair is None else (token_id(pre, pair[0]), token_id(pre, pair[1]))
    batch, (enc,) = batch_of(pre, [sentence])
    check_length(pre, enc)
    mb = masked_batch(batch, tuple(masked))
    base = torch.zeros(pre.layers, pre.heads, dtype=torch.int8)
    emb, start = single_effects(pre, mb, base, all_heads(pre), code, means=means_for(pre, code))
    top = hooks.next_logits(pre, start.embedding).argmax(-1)
    ref, each = next_token_measures(pre, start.embedding, top, ids), next_token_measures(pre, emb[:, 0], top, ids)
    shape = (pre.layers, pre.heads)
    out = {"top_token": int(top[0]), "logprob_drop": (ref["logprob"][0] - each["logprob"]).float().view(shape)}
    if ids is not None:
        out["logit_diff"] = each["logit_diff"].float().view(shape)
        out["logit_diff_original"] = float(ref["logit_diff"][0])
    return out

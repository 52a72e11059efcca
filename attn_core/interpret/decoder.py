"""A decoder's heads, measured on the next token: activation patching of the next-token prediction, and the
head roles a decoder has (previous-token, duplicate-token, induction, first-token), found as TransformerLens's
head detector finds them, on a held-out set.

patch_next_token(pre, clean, corrupted, pair) -> dict
    For each head, the corrupted prompt run with that head's output (its context and weights) copied from the
    clean prompt's run. With m the measure (the logit difference of the two named tokens; without them the
    log-probability of the clean prompt's top token):
        restored(l, h) = (m(corrupted, (l, h) patched) - m(corrupted)) / (m(clean) - m(corrupted))
    1: that head alone restores the clean prediction, 0: it changes nothing (Wang et al., 2022's indirect
    object study measures the same logit difference).

head_roles(pre, seed=...) -> dict   each head's scores in [0, 1]:
    previous_token   mean weight a query puts on the token just before it        (natural text)
    first_token      mean weight a query (not the first) puts on the first token  (natural text: the sink)
    duplicate_token  mean weight on the same token's earlier occurrence           (repeated random tokens)
    induction        mean weight on the token after that earlier occurrence       (repeated random tokens)
The repeated random tokens are [BOS] r r with r drawn from the vocabulary with a seed of this module's own
(``HELD_OUT_SEED``), never one a training run uses; the natural text is the shipped probe set's sentences.
"""

from __future__ import annotations

import torch

from attn_core.models import display_pieces

from . import hooks
from .ablate import _check_decoder, next_token_measures, token_id
from .patch import patched_runs

ROLES = ("previous_token", "duplicate_token", "induction", "first_token")
HELD_OUT_SEED = 20_261_202  # the repeated random tokens' seed (training runs draw with their own seeds)
REPEATS = 8  # sequences of repeated random tokens
REPEAT_LEN = 24  # tokens in each half (less when the model's context is shorter)
TEXTS = 60  # sentences of the probe set for the natural-text scores
IDENTICAL = 1e-6  # |m(clean) - m(corrupted)| below this: the two prompts predict alike


def _pair_ids(pre, pair) -> tuple[int, int] | None:
    if pair is None:
        return None
    return token_id(pre, pair[0]), token_id(pre, pair[1])


def patch_next_token(pre, clean: str, corrupted: str, pair=None) -> dict:
    """The next-token patching map (see the module): ``restored`` (layers, H), ``measure`` ("logit_diff" or
    "logprob"), ``clean`` and ``corrupted`` (the measure on each prompt), ``top_piece`` (the clean top token)."""
    _check_decoder(pre)
    ids = _pair_ids(pre, pair)
    _, _, clean_emb, emb, start = patched_runs(pre, clean, corrupted)
    top = hooks.next_logits(pre, clean_emb).argmax(-1)
    key = "logprob" if ids is None else "logit_diff"
    m_clean = float(next_token_measures(pre, clean_emb, top, ids)[key][0])
    m_corr = float(next_token_measures(pre, start.embedding, top, ids)[key][0])
    each = next_token_measures(pre, emb[:, 0], top, ids)[key].view(pre.layers, pre.heads)
    identical = abs(m_clean - m_corr) < IDENTICAL
    restored = torch.zeros_like(each) if identical else (each - m_corr) / (m_clean - m_corr)
    return {
        "restored": restored.float(),
        "measure": key,
        "clean": m_clean,
        "corrupted": m_corr,
        "identical": identical,
        "top_piece": display_pieces(pre.tokenizer, [int(top[0])])[0][0],  # a byte piece as <E4>, never "\ufffd"
    }


def repeated_tokens(pre, *, seed: int = HELD_OUT_SEED, n: int = REPEATS) -> tuple[torch.Tensor, int]:
    """(n, 1 + 2T) [BOS] r r with r random ordinary tokens, and T (the repeated half's length)."""
    tok = pre.tokenizer
    specials = set(tok.all_special_ids)
    bos = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
    T = min(REPEAT_LEN, (pre.max_positions - 1) // 2)
    vocab = torch.tensor([i for i in range(min(pre.vocab, len(tok))) if i not in specials])
    g = torch.Generator().manual_seed(seed)
    r = vocab[torch.randint(len(vocab), (n, T), generator=g)]
    first = torch.full((n, 1), bos if bos is not None else int(vocab[0]))
    return torch.cat([first, r, r], dim=1), T


def _attentions(pre, ids: torch.Tensor) -> torch.Tensor:
    """(layers, B, H, L, L) the model's attention on a batch of equal-length token rows."""
    real = torch.ones_like(ids, dtype=torch.bool)
    return hooks.run(pre, hooks.Batch(ids, real, real.clone()), attentions=True).attentions


def repeat_scores(pre, *, seed: int = HELD_OUT_SEED) -> dict[str, torch.Tensor]:
    """duplicate_token and induction (layers, H) on repeated random tokens (TransformerLens's induction score:
    the mean weight of the second half's queries on the diagonal T - 1 tokens back)."""
    ids, T = repeated_tokens(pre, seed=seed)
    A = _attentions(pre, ids)  # (layers, B, H, L, L)
    q = torch.arange(T + 1, 2 * T + 1)  # the second half's queries
    return {
        "duplicate_token": A[..., q, q - T].mean((1, -1)),
        "induction": A[..., q, q - T + 1].mean((1, -1)),
    }


def text_scores(pre, texts: list[str]) -> dict[str, torch.Tensor]:
    """previous_token and first_token (layers, H): each query but the first, averaged over every text (one
    padded batch: a decoder's real queries never see the padding after them)."""
    batch, _ = hooks.batch_of(pre, texts)
    A = hooks.run(pre, batch, attentions=True).attentions  # (layers, B, H, L, L)
    q = torch.arange(1, A.shape[-1])
    rows = batch.real[:, 1:].float()  # (B, L - 1) the real queries after the first
    prev = (A[..., q, q - 1] * rows[None, :, None]).sum((1, -1))
    first = (A[..., 1:, 0] * rows[None, :, None]).sum((1, -1))
    n = float(rows.sum().clamp_min(1))
    return {"previous_token": prev / n, "first_token": first / n}


def held_out_texts(n: int = TEXTS) -> list[str]:
    from .corpus import load

    return [" ".join(item["words"]) for item in load()["sentences"][:n]]


def head_roles(pre, *, seed: int = HELD_OUT_SEED, texts: list[str] | None = None) -> dict:
    """Every head's four role scores (see the module), as plain values, and the best head for each role."""
    _check_decoder(pre)
    texts = held_out_texts() if texts is None else texts
    scores = {**text_scores(pre, texts), **repeat_scores(pre, seed=seed)}
    best = {}
    for role in ROLES:
        flat = int(scores[role].flatten().argmax())
        layer, head = divmod(flat, pre.heads)
        best[role] = {"layer": layer, "head": head, "score": float(scores[role][layer, head])}
    return {
        "model": pre.name,
        "layers": pre.layers,
        "heads_per_layer": pre.heads,
        "scores": {role: scores[role].tolist() for role in ROLES},
        "best": best,
        "texts": len(texts),
        "repeats": REPEATS,
        "repeat_len": repeated_tokens(pre, seed=seed, n=1)[1],
        "seed": seed,
    }

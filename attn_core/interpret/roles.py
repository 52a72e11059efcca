"""What each head does, measured on the shipped probe set.

Word level as in Clark et al. (2019): the attention *to* a word split into pieces is the sum over its
pieces, *from* a word the mean over its pieces; [CLS] and [SEP] are left out of the argmax. A head
"hits" a label (query word -> key word) when the key word gets its largest weight.

The best head for each relation is chosen on the ``select`` half and scored on the ``score`` half,
beside the best fixed-offset baseline (the most frequent relative position on the select half).
Voita et al. (2019): a head is *positional* when >= 90 % of its maxima sit at one relative position,
*syntactic* for a relation when it beats that relation's offset baseline by >= 10 points.
Attention sinks: each head's mean weight on [CLS], [SEP] and punctuation pieces.
"""

from __future__ import annotations

import string
from collections import Counter
from dataclasses import dataclass

import torch

from attn_core import models as pt

from . import corpus

POSITION_RELATIONS = ("prev", "next")
POSITIONAL_SHARE = 0.9
SYNTACTIC_POINTS = 0.10


@dataclass(frozen=True)
class Probe:
    item: dict  # the probe-set entry
    pieces: tuple[str, ...]
    word_of: tuple[int, ...]  # piece -> word index, -1 for [CLS] / [SEP]
    attentions: torch.Tensor  # (layers, H, L, L): exactly what the Real model page's head view shows


def word_of_pieces(pre, words: list[str]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    enc = pre.tokenizer(words, is_split_into_words=True, add_special_tokens=True)
    return tuple(enc["input_ids"]), tuple(-1 if w is None else w for w in enc.word_ids())


def probe(pre, item: dict) -> Probe:
    """One probe sentence run as the head view runs it (``models.forward`` on ``encode``)."""
    run = pt.forward(pre, pt.encode(pre, " ".join(item["words"])))
    return _probe(pre, item, run.encoding.ids, run.encoding.pieces, run.attentions)


def _probe(pre, item: dict, ids, pieces, attentions) -> Probe:
    own, word_of = word_of_pieces(pre, item["words"])
    if own != tuple(ids):  # the words, split, must be the sentence's own pieces
        raise ValueError(f"probe {item['id']}: its words tokenize differently from its text")
    return Probe(item, tuple(pieces), word_of, attentions)


def probes(pre, items: list[dict]) -> list[Probe]:
    """Every probe sentence, those of one length in one batch (no padding, so each row's weights are
    its own run's, to float rounding: ~1e-7, tested against the head view)."""
    from . import hooks

    by_len: dict[int, list[int]] = {}
    encs = [pt.encode(pre, " ".join(it["words"])) for it in items]
    for i, e in enumerate(encs):
        by_len.setdefault(e.n_real, []).append(i)
    out: list[Probe | None] = [None] * len(items)
    for idx in by_len.values():
        batch, _ = hooks.batch_of(pre, [" ".join(items[i]["words"]) for i in idx])
        att = hooks.run(pre, batch, attentions=True).attentions  # (layers, B, H, L, L)
        for j, i in enumerate(idx):
            out[i] = _probe(pre, items[i], encs[i].ids, encs[i].pieces, att[:, j].clone())
    return out


def word_attention(att: torch.Tensor, word_of: tuple[int, ...], n_words: int) -> torch.Tensor:
    """(..., L, L) piece weights -> (..., W, W) word weights: to = sum over pieces, from = mean."""
    owner = torch.tensor(word_of)
    M = torch.zeros(len(word_of), n_words)
    real = owner >= 0
    M[real.nonzero()[:, 0], owner[real]] = 1.0  # (L, W) piece -> word
    to_words = att @ M  # (..., L, W)
    return (M.T @ to_words) / M.sum(0)[:, None]  # (..., W, W)


def argmax_words(p: Probe) -> torch.Tensor:
    """(layers, H, W): the word each query word attends to most."""
    n = len(p.item["words"])
    return word_attention(p.attentions, p.word_of, n).argmax(-1)


def pairs(item: dict) -> dict[str, list[tuple[int, int]]]:
    """Every relation's (query word, key word) pairs, the position relations derived from the words."""
    out = {r: [] for r in (*corpus.RELATIONS, *POSITION_RELATIONS)}
    for lab in item["labels"]:
        out[lab["rel"]].append((lab["from"], lab["to"]))
    n = len(item["words"])
    out["prev"] = [(i, i - 1) for i in range(1, n)]
    out["next"] = [(i, i + 1) for i in range(n - 1)]
    return out


def tally(preds: list[torch.Tensor], items: list[dict], halves: set[str]) -> dict:
    """Per relation: hits (layers, H), count, and the offsets' counts, over sentences in ``halves``."""
    out = {}
    for pred, item in zip(preds, items, strict=True):
        if item["half"] not in halves:
            continue
        for rel, prs in pairs(item).items():
            if not prs:
                continue
            t = out.setdefault(rel, {"hits": torch.zeros(pred.shape[:2]), "n": 0, "offsets": Counter()})
            q = torch.tensor([a for a, _ in prs])
            k = torch.tensor([b for _, b in prs])
            t["hits"] += (pred[:, :, q] == k).sum(-1)
            t["n"] += len(prs)
            t["offsets"].update(b - a for a, b in prs)
    return out


def best_heads(preds: list[torch.Tensor], items: list[dict]) -> dict:
    """Clark et al.'s Table 1: per relation, the head chosen on the select half and its accuracy on
    the score half, beside the fixed-offset baseline chosen and scored the same way."""
    sel, sco = tally(preds, items, {"select"}), tally(preds, items, {"score"})
    out = {}
    for rel in sel:
        if rel not in sco:
            continue
        acc_sel = sel[rel]["hits"] / sel[rel]["n"]
        flat = int(acc_sel.flatten().argmax())
        layer, head = divmod(flat, acc_sel.shape[1])
        offset = sel[rel]["offsets"].most_common(1)[0][0]
        acc_sco = sco[rel]["hits"] / sco[rel]["n"]
        out[rel] = {
            "layer": layer,
            "head": head,
            "select_accuracy": float(acc_sel[layer, head]),
            "accuracy": float(acc_sco[layer, head]),
            "offset": offset,
            "baseline": sco[rel]["offsets"][offset] / sco[rel]["n"],
            "n_select": sel[rel]["n"],
            "n_score": sco[rel]["n"],
            "scores": acc_sco,  # (layers, H) held-out accuracy of every head
        }
    return out


def positional(preds: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """(offset (layers, H), share (layers, H)): each head's most frequent relative position of its
    maxima over every query word, and the share of its maxima there among the query words for which
    that position is inside the sentence (the first word has no previous word)."""
    rel = torch.cat([p - torch.arange(p.shape[-1]) for p in preds], dim=-1)  # (layers, H, all query words)
    pos = torch.cat([torch.arange(p.shape[-1]) for p in preds])  # each query word's position
    n = torch.cat([torch.full((p.shape[-1],), p.shape[-1]) for p in preds])  # its sentence's length
    mode = rel.mode(-1).values
    target = pos + mode[..., None]
    valid = (target >= 0) & (target < n)
    share = ((rel == mode[..., None]) & valid).sum(-1) / valid.sum(-1).clamp_min(1)
    return mode, share.float()


def is_punct(piece: str) -> bool:
    return bool(piece) and all(c in string.punctuation for c in piece)


def sink_shares(probes: list[Probe]) -> torch.Tensor:
    """(3, layers, H): mean weight of a real query row on [CLS], on [SEP], on punctuation pieces."""
    total = torch.zeros(3, *probes[0].attentions.shape[:2])
    rows = 0
    for p in probes:
        A = p.attentions  # (layers, H, L, L)
        punct = torch.tensor([is_punct(x) for x in p.pieces])
        total[0] += A[..., 0].sum(-1)
        total[1] += A[..., -1].sum(-1)
        total[2] += A[..., punct].sum((-1, -2))
        rows += A.shape[-1]
    return total / rows


def _renormalise(w: torch.Tensor) -> torch.Tensor:
    return w / w.sum(-1, keepdim=True).clamp_min(1e-12)


def sink_test(pre, texts: list[str]) -> dict:
    """The causal test of the "no-op" reading of [SEP] (Clark et al., 2019): in every head, remove the
    weight each query puts on [SEP] and renormalise the rest; beside it, remove the same weight from the
    content tokens instead (each loses a share in proportion to its weight) and renormalise. Returns the
    mean 1 - cosine of the pooled embedding to the original for both, and the mean weight moved."""
    from . import hooks

    batch, _ = hooks.batch_of(pre, texts)
    B, L = batch.ids.shape
    sep = torch.zeros(B, L, dtype=torch.bool)
    sep[torch.arange(B), batch.real.sum(1) - 1] = True
    content = batch.real & ~sep
    content[:, 0] = False  # [CLS]
    sep4, content4 = sep[:, None, None, :], content[:, None, None, :]
    moved: list[float] = []

    def drop_sep(layer, w, keys):
        moved.append(float((w * sep4).sum(-1).mean()))
        return _renormalise(w.masked_fill(sep4, 0.0))

    def drop_content(layer, w, keys):
        s = (w * sep4).sum(-1, keepdim=True)
        c = (w * content4).sum(-1, keepdim=True)
        factor = (1 - s / c.clamp_min(1e-12)).clamp_min(0.0)
        return _renormalise(torch.where(content4, w * factor, w))

    modes = torch.zeros(B, pre.layers, pre.heads, dtype=torch.int8)
    base = hooks.run(pre, batch).embedding
    out = {}
    for name, fn in (("sep", drop_sep), ("content", drop_content)):
        emb = hooks.run(pre, batch, hooks.Plan(modes, batch.keep, reweight=fn)).embedding
        out[name] = float((1 - hooks.cosine(emb, base)).mean())
    out["moved"] = sum(moved) / max(len(moved), 1)
    return out


CLARK_BERT_BASE = {  # Clark et al. (2019), BERT-base (12 layers), best head vs fixed-offset baseline
    "det": (0.943, 0.517),
    "dobj": (0.868, 0.400),
    "coref": (0.65, 0.27),  # baseline: the nearest mention
    "sep_layers": "6-10",  # layers whose heads put over half their attention on [SEP]
}


def head_stats(pre, items: list[dict] | None = None) -> dict:
    """Everything ``heads --json`` prints, as plain values: per relation the head chosen on the select
    half with its held-out accuracy and the offset baseline; per head its sink shares and Voita et al.'s
    labels; the [SEP] no-op test."""
    items = corpus.load()["sentences"] if items is None else items
    ps = probes(pre, items)
    preds = [argmax_words(p) for p in ps]
    best = best_heads(preds, items)
    offset, share = positional(preds)
    sinks = sink_shares(ps)
    heads = []
    for layer in range(pre.layers):
        for head in range(pre.heads):
            syntactic = [
                rel
                for rel, b in best.items()
                if rel not in POSITION_RELATIONS
                and float(b["scores"][layer, head]) >= b["baseline"] + SYNTACTIC_POINTS
            ]
            pos = float(share[layer, head]) >= POSITIONAL_SHARE
            heads.append(
                {
                    "layer": layer,
                    "head": head,
                    "cls": float(sinks[0, layer, head]),
                    "sep": float(sinks[1, layer, head]),
                    "punct": float(sinks[2, layer, head]),
                    "positional": int(offset[layer, head]) if pos else None,
                    "positional_share": float(share[layer, head]),
                    "syntactic": syntactic,
                }
            )
    relations = {rel: {k: v for k, v in b.items() if k != "scores"} for rel, b in best.items()}
    for rel, b in best.items():
        relations[rel]["accuracies"] = b["scores"].tolist()
    halves = Counter(it["half"] for it in items)
    return {
        "model": pre.name,
        "layers": pre.layers,
        "heads_per_layer": pre.heads,
        "sentences": {"select": halves["select"], "score": halves["score"]},
        "relations": relations,
        "heads": heads,
        "sink_test": sink_test(pre, [" ".join(it["words"]) for it in items]),
        "reference": {"source": "Clark et al. (2019), BERT-base, 12 layers", **CLARK_BERT_BASE},
    }

"""``python -m attn_core interpret`` and ``python -m attn_core heads`` (a contract: these names are
used from outside)."""

from __future__ import annotations

import argparse
import json

from .. import models as pt
from ..errors import AttentionConfigError
from ..interpret import ablate, roles
from ..interpret.hooks import MODES


def add_cli(sub) -> dict:
    """Add both subcommands; returns {name: function} for the CLI's table."""
    p = sub.add_parser("interpret", help="ablate heads / mask tokens of the trained encoder; the importance map")
    p.add_argument("sentence")
    p.add_argument("--second", default=None, help="a second sentence: their cosine, both intervened")
    p.add_argument("--ablate", default="", help="heads to ablate, LAYER:HEAD,LAYER:HEAD (0-based)")
    p.add_argument("--ablate-mode", default="zero", choices=list(MODES), dest="ablate_mode")
    p.add_argument("--mask-token", default="", dest="mask_token", help="piece positions to mask as keys, I,I")
    p.add_argument("--model", default="", help=f"an offered name or a model directory (default: {pt.BUNDLED})")
    p.add_argument("--pair", default=None, help="decoders: two next tokens 'A|B' for a logit difference")
    p.add_argument("--json", action="store_true", help="print tokens, cosine, pair_cosine, importance, attention")
    h = sub.add_parser("heads", help="head roles on the shipped probe set, and attention sinks")
    h.add_argument("--model", default="", help=f"an offered name or a model directory (default: {pt.BUNDLED})")
    h.add_argument("--json", action="store_true", help="print every relation's best head and every head's sinks")
    return {"interpret": cmd_interpret, "heads": cmd_heads}


add = add_cli  # the entry calls every subcommand module's add(sub)


def _notes(pre, enc: pt.Encoding, heads, masked) -> list[str]:
    notes = []
    if enc.truncated:
        notes.append(f"truncated from {enc.n_total} to {enc.n_real} pieces (the model has {pre.max_positions})")
    if enc.unk and enc.unk_share >= pt.UNK_NOTICE:
        n = enc.n_real - enc.specials
        notes.append(f"{enc.unk} of {n} pieces are [UNK]: the model's vocabulary does not know them")
    if len(heads) == pre.layers * pre.heads:
        notes.append("every head is ablated: the embedding is made by the feed-forward layers alone")
    if enc.n_real <= 3 and not pre.causal:
        notes.append("one piece between [CLS] and [SEP]: there is little for a head to move")
    return notes


def cmd_interpret(args: argparse.Namespace) -> int:
    pre = pt.load(args.model)
    enc = pt.encode(pre, args.sentence)
    heads = ablate.parse_heads(args.ablate, pre.layers, pre.heads)
    masked = ablate.parse_tokens(args.mask_token, enc.n_real)
    iv = ablate.intervene(pre, args.sentence, heads, args.ablate_mode, masked, args.second)
    notes = _notes(pre, enc, heads, masked)
    try:
        imp = ablate.importance(pre, args.sentence, args.ablate_mode, masked)["importance"].tolist()
    except AttentionConfigError as err:  # too long for 72 runs at once: the rest is still printed
        imp = None
        notes.append(str(err))
    out = {
        "model": pre.name,
        "family": pre.family,
        "tokens": list(iv.tokens),
        "ablate": [list(h) for h in heads],
        "ablate_mode": args.ablate_mode,
        "mask_token": list(masked),
        "cosine": iv.cosine,
        "pair_cosine": iv.pair_cosine,
        "pair_cosine_original": iv.pair_cosine_original,
        "importance": imp,
        "attention": iv.attentions.tolist(),
        "notes": notes,
    }
    if pre.causal:
        out["next_token"] = _next_token(pre, args, heads, masked, notes)
    if args.json:
        print(json.dumps(out, ensure_ascii=False))
        return 0
    print(f"pieces      {out['tokens']}")
    nt = out.get("next_token")
    if nt:
        print(f"next token  {nt['top_piece']!r}: log-prob {nt['logprob_original']:.4f} -> {nt['logprob']:.4f}")
    print(f"cosine      {iv.cosine:.6f}  (pooled embedding, {args.ablate_mode}-ablated {len(heads)} heads)")
    if iv.pair_cosine is not None:
        print(f"pair cosine {iv.pair_cosine:.6f} (unablated {iv.pair_cosine_original:.6f})")
    for note in notes:
        print(f"note        {note}")
    return 0


def _pair(spec: str | None):
    if spec is None:
        return None
    a, sep, b = spec.partition("|")
    if not sep or not a or not b:
        raise AttentionConfigError("pair", "next_token_pair", value=spec[:40])
    return a, b


def _next_token(pre, args: argparse.Namespace, heads, masked, notes: list[str]) -> dict:
    """A decoder's measures: the top next token's log-probability (and the pair's logit difference) with the
    intervention and without, and the map of each head alone ablated."""
    pair = _pair(args.pair)
    out = ablate.next_token(pre, args.sentence, heads, args.ablate_mode, masked, pair)
    out["tokens"] = list(out["tokens"])
    try:
        imp = ablate.next_token_importance(pre, args.sentence, args.ablate_mode, masked, pair)
        out["logprob_drop"] = imp["logprob_drop"].tolist()
        if "logit_diff" in imp:
            out["logit_diff_map"] = imp["logit_diff"].tolist()
    except AttentionConfigError as err:
        notes.append(str(err))
    return out


def _decoder_heads(pre) -> dict:
    """Per head of a decoder: previous-token, duplicate-token, induction and first-token scores."""
    from ..interpret import decoder

    r = decoder.head_roles(pre)
    heads = [
        {"layer": layer, "head": head} | {role: r["scores"][role][layer][head] for role in r["scores"]}
        for layer in range(pre.layers)
        for head in range(pre.heads)
    ]
    return r | {"family": pre.family, "heads": heads}


def cmd_heads(args: argparse.Namespace) -> int:
    pre = pt.load(args.model)
    if pre.causal:
        stats = _decoder_heads(pre)
        if args.json:
            print(json.dumps(stats, ensure_ascii=False))
            return 0
        print(f"{stats['model']}: {stats['texts']} held-out texts, {stats['repeats']} repeated random sequences")
        for role, b in stats["best"].items():
            print(f"{role:16} best head {b['layer']}:{b['head']}  score {b['score']:.3f}")
        return 0
    stats = roles.head_stats(pre)
    if args.json:
        print(json.dumps(stats, ensure_ascii=False))
        return 0
    print(f"{stats['model']}: probe set {stats['sentences']['select']} + {stats['sentences']['score']} sentences")
    for rel, r in stats["relations"].items():
        print(
            f"{rel:6} head {r['layer']}:{r['head']}  held-out {r['accuracy']:.1%}  "
            f"offset {r['offset']:+d} baseline {r['baseline']:.1%}  (n {r['n_select']}/{r['n_score']})"
        )
    heads = stats["heads"]
    for layer in range(stats["layers"]):
        row = [h for h in heads if h["layer"] == layer]
        share = {k: sum(h[k] for h in row) / len(row) for k in ("cls", "sep", "punct")}
        print(
            f"layer {layer}  mean weight on [CLS] {share['cls']:.3f}  [SEP] {share['sep']:.3f}"
            f"  punct {share['punct']:.3f}"
        )
    print(
        "positional  "
        + (
            ", ".join(f"{h['layer']}:{h['head']} ({h['positional']:+d})" for h in heads if h["positional"] is not None)
            or "none"
        )
    )
    print(
        "syntactic   "
        + (
            ", ".join(f"{h['layer']}:{h['head']} {'/'.join(h['syntactic'])}" for h in heads if h["syntactic"])
            or "none"
        )
    )
    t = stats["sink_test"]
    print(
        f"[SEP] test  1 - cosine: weight on [SEP] removed {t['sep']:.2e}, the same weight taken from content "
        f"{t['content']:.2e} (mean weight moved {t['moved']:.3f})"
    )
    return 0

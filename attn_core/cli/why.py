"""``python -m attn_core why`` and ``python -m attn_core atlas`` (a contract: these names are used from outside).

why "TEXT" [--model NAME] --layer L --head H --query I --key J --json
    tokens, score (the scaled score q·k/√d_head before the mask and softmax), weight, terms (d_head numbers in
    dimension order, adding up to score), sources {query: [names], key: [names], values: [[...]]} (a
    query-source × key-source table adding up to score), removed {source, share, predicted, recomputed}
atlas "TEXT" [--model NAME] --json
    heads: per layer and head, entropy, effective_keys, max_weight, first_token, first_token_value_weighted
"""

from __future__ import annotations

import argparse
import json

from ..command import model_text_args

MODELS = "the bundled encoder by default; an offered model's"


def add(sub) -> dict:
    w = sub.add_parser("why", help="why one query attends to one key: per-dimension terms, sources, a causal check")
    model_text_args(w, "text", MODELS)
    for flag in ("layer", "head", "query", "key"):
        w.add_argument(f"--{flag}", type=int, required=True)
    a = sub.add_parser("atlas", help="every head's entropy, effective keys, largest weight and first-token share")
    model_text_args(a, "text", MODELS)
    return {"why": cmd_why, "atlas": cmd_atlas}


def _run(args):
    from .. import models

    m = models.load(args.model)
    return m, models.forward(m, models.encode(m, args.text))


def cmd_why(args: argparse.Namespace) -> int:
    from .. import why

    m, run = _run(args)
    out = {"model": m.name} | why.to_dict(why.explain_weight(m, run, args.layer, args.head, args.query, args.key))
    if args.json:
        print(json.dumps(out, ensure_ascii=False))
        return 0
    toks = out["tokens"]
    print(f"{m.name}: layer {args.layer}, head {args.head}, {toks[args.query]!r} -> {toks[args.key]!r}")
    if out["masked"]:
        print("the key is masked for this query: its weight is 0")
    print(f"score {out['score']:.4f}  weight {out['weight']:.4f}")
    names, table = out["sources"]["query"], out["sources"]["values"]
    for name, row in zip(names, table):
        print(f"  {name:<10} " + " ".join(f"{v:+.3f}" for v in row))
    r = out["removed"]
    if r:
        print(f"without {r['source']}: predicted {r['predicted']:.4f}, recomputed {r['recomputed']:.4f}")
    return 0


def cmd_atlas(args: argparse.Namespace) -> int:
    from .. import why

    m, run = _run(args)
    heads = why.atlas(m, run)
    if args.json:
        print(json.dumps({"model": m.name, "tokens": list(run.encoding.pieces), "heads": heads}, ensure_ascii=False))
        return 0
    for h in heads:
        print(
            f"L{h['layer']} H{h['head']:<3} entropy {h['entropy']:.2f}  keys {h['effective_keys']:.1f}  "
            f"max {h['max_weight']:.2f}  first {h['first_token']:.2f} ({h['first_token_value_weighted']:.2f})"
        )
    return 0

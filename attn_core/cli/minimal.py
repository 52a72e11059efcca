"""``python -m attn_core pair`` and ``python -m attn_core match-heads`` (a contract: the names are used from outside).

    pair "A" "B" [--model NAME] [--top-k K] [--json]
        two sentences that differ in a word or two through one model (``interpret.minimal_pair``): --json prints
        ``minimal_pair``'s result with ``ablation`` (a decoder's ``ablation_gap``; null for an encoder)
    match-heads --a MODEL --b MODEL [--json]
        the heads of two models (or checkpoints) sharing a tokenizer, matched on the shipped probe set
        (``interpret.head_match.match_models``): --json prints its result

Every number is checked against ``LIMITS`` and every text for UTF-8 and length before a model is loaded (a bad
one: exit status 2, one line).
"""

from __future__ import annotations

import argparse
import json

from ..errors import AttentionConfigError

LIMITS = {"top-k": (1, 50)}  # flag: (low, high), inclusive
SHOWN = 8  # heads a line-by-line report lists


def add(sub) -> dict:
    p = sub.add_parser("pair", help="a minimal pair: two sentences through one model, what moved, every head ranked")
    p.add_argument("a", help="sentence A")
    p.add_argument("b", help="sentence B: A with a word or two changed")
    p.add_argument("--model", default="", help="an offered name or a model directory (default: the bundled encoder)")
    p.add_argument("--top-k", type=int, default=10, dest="top_k", help="decoders: next tokens listed per side, 1..50")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    m = sub.add_parser("match-heads", help="the heads of two models or checkpoints matched on the probe set")
    m.add_argument("--a", required=True, help="model A: an offered name or a model directory")
    m.add_argument("--b", required=True, help="model B: the same tokenizer as A")
    m.add_argument("--json", action="store_true", help="print one JSON object")
    return {"pair": cmd_pair, "match-heads": cmd_match}


def _text(value: str, field: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise AttentionConfigError(field, "not_utf8") from None
    return value


def _checked(args: argparse.Namespace) -> None:
    from ..vision.model import check_limits

    check_limits({"top-k": args.top_k}, LIMITS)
    from ..interpret.minimal_pair import check_sentence

    for side in ("a", "b"):
        check_sentence(_text(getattr(args, side), side), side)


def cmd_pair(args: argparse.Namespace) -> int:
    _checked(args)
    from .. import models as pt
    from ..interpret import minimal_pair as mp

    m = pt.load(args.model)
    out = mp.minimal_pair(m, args.a, args.b, top_k=args.top_k)
    out["ablation"] = mp.ablation_gap(m, args.a, args.b) if m.causal else None
    if args.json:
        print(json.dumps(out, ensure_ascii=False))
        return 0
    q = out["queries"][out["query"]]
    la, lb = out["a"]["labels"], out["b"]["labels"]
    print(f"{out['model']}: {len(la)} and {len(lb)} tokens, {len(out['shared'])} shared")
    print(f"query ({q['kind']}): {' '.join(la[i] for i in q['a'])} | {' '.join(lb[j] for j in q['b'])}")
    for cell in out["ranking"][:SHOWN]:
        print(f"head {cell['layer']}:{cell['head']}  moved {cell['moved']:.3f}")
    nt, ab = out["next_token"], out["ablation"]
    if nt is not None:
        print(
            f"next token  A {nt['top_a']['label']} {nt['top_a']['prob']:.3f}  B {nt['top_b']['label']} "
            f"{nt['top_b']['prob']:.3f}  gap {nt['gap']:.4f} bits"
        )
        for cell in ab["ranking"][:SHOWN]:
            print(f"ablate {cell['layer']}:{cell['head']}  closes {cell['closed']:+.1%} (gap {cell['gap']:.4f})")
    return 0


def cmd_match(args: argparse.Namespace) -> int:
    a, b = _text(args.a, "a"), _text(args.b, "b")
    from .. import models as pt
    from ..interpret import head_match as hm

    out = hm.match_models(pt.load(a), pt.load(b))
    if args.json:
        print(json.dumps(out, ensure_ascii=False))
        return 0
    print(f"{out['a']['name']} against {out['b']['name']}: {out['probes']} probe sentences, JS distance (bits)")
    for p in out["pairs"]:
        ra, rb = p["role_a"] or "-", p["role_b"] or "-"
        print(f"{p['a'][0]}:{p['a'][1]} ({ra})  ->  {p['b'][0]}:{p['b'][1]} ({rb})  {p['distance']:.4f}")
    same = out["same_place_mean"]
    print(f"mean {out['mean']:.4f}" + ("" if same is None else f"  (head i with head i: {same:.4f})"))
    return 0

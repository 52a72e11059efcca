"""``python -m attn_core pretrained`` (one head of a trained model recomputed, every family) and
``python -m attn_core models`` (what this server offers). Both read ``attn_core.models`` only."""

from __future__ import annotations

import argparse
import importlib.util
import json


def add_cli(sub) -> None:
    from ..models import BUNDLED

    p = sub.add_parser("pretrained", help="recompute one head of a trained model and compare it with the model")
    p.add_argument("sentence")
    p.add_argument("--layer", type=int, default=0)
    p.add_argument("--head", type=int, default=0)
    p.add_argument(
        "--model",
        default="",
        help=f"a name from `models`, a local model directory or a hub name (default: the bundled {BUNDLED})",
    )
    p.add_argument("--pad-to", type=int, default=0, dest="pad_to", help="pad an encoder's input with [PAD]")
    p.add_argument("--json", action="store_true", help="print tokens, weights and every step as one JSON object")
    q = sub.add_parser("models", help="the trained models this server offers (bundled, ATTN_EXPLORER_MODELS)")
    q.add_argument("--json", action="store_true", help="print name, family, path, layers, heads, d_head, ...")


def cmd_pretrained(args: argparse.Namespace) -> int:
    from .. import models

    m = models.load(args.model)
    run = models.forward(m, models.encode(m, args.sentence, pad_to=args.pad_to))
    ht = models.take_apart(run, models.head_weights(m, args.layer, args.head), args.layer, args.head)
    if args.json:
        print(json.dumps(models.to_dict(m, ht, run), ensure_ascii=False))
        return 0
    e = run.encoding
    focus = 1 if e.n_real > 2 and not m.causal else e.n_real - 1
    print(
        f"model       {m.name} ({m.family}): {m.layers} layers x {m.heads} heads"
        + (f" ({m.kv_heads} key/value heads)" if m.kv_heads != m.heads else "")
        + f", d_model {m.d_model}, d_head {m.d_head}"
    )
    print(f"pieces      {list(e.pieces)}")
    if e.truncated:
        print(
            f"note        truncated from {e.n_total} to {e.n_real} pieces (the model has {m.max_positions} positions)"
        )
    if e.unk:
        print(f"note        {e.unk} pieces are [UNK]: the model's vocabulary does not know them")
    print(f"layer {ht.layer} head {ht.head}: scale 1/sqrt({m.d_head}) = {ht.scale:.6g}" + (" (causal)" * m.causal))
    print(f"weights of '{e.pieces[focus]}' (attn_core) {[round(v, 4) for v in ht.attn[0, focus].tolist()]}")
    print(f"max |attn_core - model| = {ht.max_diff:.3g}")
    return 0


def cmd_models(args: argparse.Namespace) -> int:
    from .. import models

    offered = models.offered()
    if args.json:
        print(json.dumps(offered, ensure_ascii=False))
        return 0
    for o in offered:
        shape = f"{o.get('layers')} layers x {o.get('heads')} heads (d_head {o.get('d_head')})"
        print(f"{o['name']:24} {o['family']:6} {'causal' if o.get('causal') else 'bidirectional':13} {shape}")
    return 0


def add(sub) -> dict:
    # without transformers there is no trained model: the other commands still work. Looked up, not imported:
    # importing it costs every command (a Lab worker, a sweep's child) most of a second of CPU
    if importlib.util.find_spec("transformers") is None:
        return {}
    add_cli(sub)
    return {"pretrained": cmd_pretrained, "models": cmd_models}

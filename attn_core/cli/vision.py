"""``python -m attn_core vision`` (a contract: the name and the keys are used from outside).

vision --model vit|swin --patch P --window M [--shift] [--size S] [--dim C] --json
    grid [rows, cols], tokens, mask (the L × L boolean mask the layer uses: all True for ViT; Swin's windows,
    shifted by ⌊M/2⌋ with --shift), flops {global, windowed} (one layer, Swin's accounting, C = --dim)
... --train --steps N --seed S --json
    and the tiny model of that kind trained on the 8 × 8 digits: curve [{step, loss, val_acc}], final.val_acc

Every number is checked against ``LIMITS`` before anything is computed (a bad one: exit status 2, one line).
"""

from __future__ import annotations

import argparse
import json

from ..config import LIMITS as TRACE_LIMITS
from ..knobs import Live
from ..lab import LAB_LIMITS

MAX_MASK_TOKENS = 1024  # the mask is printed whole: 1024² booleans at most
MAX_SIDE = 1024  # an image side in pixels, for the grid and the cost
# flag: (low, high), inclusive. --steps and --seed are the Lab's (``train``'s), --dim the trace's d_model (the
# token width); with --train the model's own limits apply on top (``VisionConfig.check``: a patch of 8 at most).
LIMITS = Live(
    lambda: {
        "size": (1, MAX_SIDE),
        "patch": (1, MAX_SIDE),
        "window": (1, MAX_SIDE),
        "dim": TRACE_LIMITS["d_model"],
        "steps": LAB_LIMITS["steps"],
        "seed": LAB_LIMITS["seed"],
    }
)


def add(sub) -> dict:
    p = sub.add_parser("vision", help="images as patches: ViT's global attention, Swin's (shifted) windows")
    p.add_argument("--model", choices=("vit", "swin"), default="vit")
    p.add_argument("--patch", type=int, default=2, help="patch side in pixels")
    p.add_argument("--window", type=int, default=2, help="Swin's window side in patches")
    p.add_argument("--shift", action="store_true", help="shift the windows by half a window (Swin's odd layers)")
    p.add_argument("--size", type=int, default=8, help="image side in pixels (the digits: 8)")
    p.add_argument("--dim", type=int, default=32, help="token width C, for the cost")
    p.add_argument("--train", action="store_true", help="train the tiny model on the digits (size 8)")
    p.add_argument("--steps", type=int, default=600, help="training steps, {}..{}".format(*LAB_LIMITS["steps"]))
    p.add_argument("--seed", type=int, default=0, help="the seed of the split and the weights")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return {"vision": cmd_vision}


def cmd_vision(args: argparse.Namespace) -> int:
    import torch

    from .. import vision as V
    from ..errors import AttentionConfigError
    from ..vision.model import check_limits

    check_limits({name: getattr(args, name) for name in LIMITS}, LIMITS)
    _, grid = V.patchify(torch.zeros(1, args.size, args.size), args.patch)
    L = grid[0] * grid[1]
    if L > MAX_MASK_TOKENS:
        raise AttentionConfigError("patch", "vision_tokens", tokens=L, most=MAX_MASK_TOKENS)
    if args.model == "vit":
        mask = torch.ones(L, L, dtype=torch.bool)
    else:
        mask = V.window_mask(grid, args.window, args.window // 2 if args.shift else 0)
    f = V.flops(grid, args.window, args.dim)
    out = {"model": args.model, "grid": list(grid), "tokens": L, "mask": mask.tolist(), "flops": f}
    if args.train:
        out |= _trained(args)
    if args.json:
        print(json.dumps(out))
        return 0
    print(f"{args.model}: {grid[0]} x {grid[1]} patches of {args.patch} px = {L} tokens")
    print(f"pairs that may attend: {int(mask.sum())} of {L * L}")
    print(f"one layer: global {f['global']:,} multiply-adds, windowed {f['windowed']:,}")
    if args.train:
        print(f"held-out accuracy after {args.steps} steps: {out['final']['val_acc']:.3f}")
    return 0


def _trained(args: argparse.Namespace) -> dict:
    from ..errors import AttentionConfigError
    from ..vision.model import SIDE, VisionConfig, train

    if args.size != SIDE:
        raise AttentionConfigError("size", "vision_train_size", size=args.size, side=SIDE)
    cfg = VisionConfig(
        model=args.model, patch=args.patch, window=args.window, shift=args.shift, steps=args.steps, seed=args.seed
    )
    cfg.check()
    r = train(cfg)
    return {"curve": r["curve"], "final": r["final"], "config": vars(cfg)}

"""``python -m attn_core train``: its flags, the command and the Lab page's worker loop (``serve``)."""

from __future__ import annotations

import math
from dataclasses import fields, replace

import torch

from ..config import SCORES
from ..errors import AttentionConfigError
from ..masks import MASK_MODES
from .config import LAB_KERNELS, MAX_BYTES, POSITIONS, LabConfig, check_memory, validate
from .presets import PRESETS, preset
from .tasks import TASKS
from .training import Snapshot, run, train


def add_cli(sub) -> None:
    p = sub.add_parser("train", help="train a tiny attention model on a toy task (the Lab page's engine)")
    p.add_argument("--preset", choices=list(PRESETS), help="start from a preset's A or B run (the Lab page's)")
    p.add_argument("--side", choices=["a", "b"], help="with --preset: its A or its B run (default a)")
    p.add_argument("--task", choices=list(TASKS))
    p.add_argument("--length", type=int, help="sequence length (default: the task's)")
    p.add_argument("--layers", type=int)
    p.add_argument("--heads", type=int)
    p.add_argument("--d-model", type=int, dest="d_model")
    p.add_argument("--d-k", type=int, dest="d_k")
    p.add_argument("--d-v", type=int, dest="d_v")
    p.add_argument("--score", choices=SCORES)
    p.add_argument("--temperature", type=float)
    p.add_argument("--pos", choices=POSITIONS)
    p.add_argument("--mask", choices=[m for m in MASK_MODES if m != "padding"])
    p.add_argument("--kernel", choices=LAB_KERNELS)
    p.add_argument("--window", type=int)
    p.add_argument("--dropout", type=float)
    p.add_argument("--no-mlp", action="store_false", dest="mlp", default=None, help="attention only, no MLP")
    p.add_argument("--lr", type=float)
    p.add_argument("--batch", type=int)
    p.add_argument("--steps", type=int, help="training steps (default: the budget the task's preset uses)")
    p.add_argument("--seed", type=int)
    p.add_argument("--every", type=int, help="a snapshot every this many steps")
    p.add_argument(
        "--max-mib",
        type=float,
        default=MAX_BYTES / 2**20,
        dest="max_mib",
        help=f"refuse settings estimated to need more memory than this (default {MAX_BYTES // 2**20}, the page's)",
    )
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print the whole run as one JSON object")
    out.add_argument("--jsonl", action="store_true", help="one JSON line per snapshot as it comes")
    out.add_argument(
        "--serve",
        action="store_true",
        help="a worker: one JSON config per line on stdin; JSON snapshot lines, then an end line, per config",
    )


def config_from_args(args) -> LabConfig:
    """The flags as a LabConfig: a preset's side first (``--preset NAME --side a|b``), then every flag given."""
    base = LabConfig()
    if getattr(args, "preset", None) is not None:
        base = preset(args.preset)[0 if (args.side or "a") == "a" else 1]
    elif getattr(args, "side", None) is not None:
        raise AttentionConfigError("side", "lab_side_alone", options=", ".join(PRESETS))
    names = [f.name for f in fields(LabConfig)]
    return replace(base, **{n: getattr(args, n) for n in names if getattr(args, n, None) is not None})


def snapshot_dict(s: Snapshot) -> dict:
    return {
        "step": s.step,
        "train_loss": None if math.isnan(s.train_loss) else s.train_loss,
        "val_loss": None if math.isnan(s.val_loss) else s.val_loss,
        "val_acc": s.val_acc,
        "grad_qk": s.grad_qk if math.isfinite(s.grad_qk) else None,
        "weights": [w.tolist() for w in s.weights],
        "status": s.status,
        "train_acc": s.train_acc,
        "scores": s.scores,
    }


def cmd_train(args) -> int:
    import sys

    torch.set_num_threads(1)  # a tiny model gains nothing from more threads; a shared server keeps the rest
    if args.serve:
        return serve(sys.stdin, sys.stdout)
    cfg = validate(config_from_args(args))
    if not (math.isfinite(args.max_mib) and 0 < args.max_mib < 2**40):
        raise AttentionConfigError("max_mib", "max_mib", value=args.max_mib)
    need = check_memory(cfg, int(args.max_mib * 2**20))
    try:
        return _train_out(cfg, args)
    except (MemoryError, RuntimeError) as err:  # the allocator refused: say so in one line, with the estimate
        if not isinstance(err, MemoryError) and "alloc" not in str(err).lower() and "memory" not in str(err).lower():
            raise
        raise AttentionConfigError(
            "batch", "lab_out_of_memory", need=math.ceil(need / 2**20), batch=cfg.batch, L=cfg.length
        ) from None


def _train_out(cfg: LabConfig, args) -> int:
    import json
    import sys

    if args.jsonl:
        for snap in train(cfg):
            print(json.dumps(snapshot_dict(snap)), flush=True)
        return 0
    result = run(cfg)
    if args.json:
        print(json.dumps(result))
        return 0
    for p in result["curve"]:
        print(
            f"step {p['step']:5d}  train {p['train_loss']:.4f}  held-out {p['val_loss']:.4f}  acc {p['val_acc']:.3f}"
        )
    final = result["final"]
    if final["status"] == "diverged":
        print(
            f"diverged at step {final['diverged_at']}: the loss became NaN; lower the learning rate", file=sys.stderr
        )
        return 1
    reached = final["steps_to_99"]
    where = f"reached at step {reached}" if reached else "not reached"
    print(f"held-out accuracy {final['val_acc']:.3f}; 99 % {where}")
    return 0


def serve(inp, out) -> int:
    """The Lab page's worker: torch is imported once, then run after run (a fresh process per run
    cost ~2 s of imports, more than a whole preset run takes to train)."""
    import json

    for line in inp:
        if not line.strip():
            continue
        try:
            cfg = validate(LabConfig.from_dict(json.loads(line)))
            need = check_memory(cfg)
            try:
                for snap in train(cfg):
                    out.write(json.dumps(snapshot_dict(snap)) + "\n")
                    out.flush()
            except (MemoryError, RuntimeError) as err:  # the allocator refused (a tighter limit than estimated)
                if not isinstance(err, MemoryError) and "alloc" not in str(err).lower():
                    raise
                raise AttentionConfigError(
                    "batch", "lab_out_of_memory", need=math.ceil(need / 2**20), batch=cfg.batch, L=cfg.length
                ) from None
            out.write(json.dumps({"end": "ok"}) + "\n")
        except AttentionConfigError as err:
            out.write(json.dumps({"end": "error", "message": str(err), "code": err.code, "params": err.params}) + "\n")
        except (ValueError, TypeError) as err:
            out.write(json.dumps({"end": "error", "message": str(err)}) + "\n")
        out.flush()
    return 0

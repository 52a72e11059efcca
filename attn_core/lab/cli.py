"""``python -m attn_core train``: its flags, the command and the Lab page's worker loop (``serve``)."""

from __future__ import annotations

import math
from dataclasses import fields, replace

import torch

from ..command import die_with_parent
from ..errors import AttentionConfigError
from ..knobs import KNOBS, add_flags, given
from .config import MAX_BYTES, LabConfig, check_memory, validate
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
    add_flags(p, "lab")  # every knob with a Lab span (attn_core.knobs: the window and seed too), registered later too
    p.add_argument("--no-mlp", action="store_false", dest="mlp", default=None, help="attention only, no MLP")
    p.add_argument("--lr", type=float)
    p.add_argument("--batch", type=int)
    p.add_argument("--steps", type=int, help="training steps (default: the budget the task's preset uses)")
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
    base = replace(base, **{n: getattr(args, n) for n in names if getattr(args, n, None) is not None})
    return base.with_values(**given(args, "lab"))


def train_flags(cfg: LabConfig) -> list[str]:
    """The ``train`` flags that set ``cfg``: each setting that differs from the default (a knob
    registered later by its own flag), ``--no-mlp`` last."""
    base = LabConfig()
    own = [(f"--{f.name.replace('_', '-')}", getattr(cfg, f.name), getattr(base, f.name)) for f in fields(LabConfig)]
    own = [(flag, v, d) for flag, v, d in own if flag not in ("--mlp", "--every", "--added")]
    added = [(KNOBS[k].cli, v, KNOBS[k].span("lab").default) for k, v in cfg.added]
    return [f"{flag} {v}" for flag, v, d in own + added if v != d] + ([] if cfg.mlp else ["--no-mlp"])


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
        "qk": s.qk,
    }


def cmd_train(args) -> int:
    import sys

    torch.set_num_threads(1)  # a tiny model gains nothing from more threads; a shared server keeps the rest
    if args.serve:
        die_with_parent()
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


class _Closed(Exception):
    """The input ended while a run was paused: nothing can resume it."""


class Commands:
    """A worker's input, read by a thread of its own as it comes: the runs' settings (one JSON object
    a line) queued in ``runs`` (None: the input ended), and ``{"control": "pause"}`` /
    ``{"control": "play"}`` applied at once. A paused run waits between two training steps
    (``between``) in a process that stays runnable: it reads its input, and ends when that ends."""

    def __init__(self, inp) -> None:
        import queue
        import threading

        self.runs: queue.Queue = queue.Queue()
        self.playing = threading.Event()
        self.playing.set()
        self.abandoned = False  # the input ended while paused
        threading.Thread(target=self._read, args=(inp,), name="worker-input", daemon=True).start()

    def _read(self, inp) -> None:
        import json

        for line in inp:
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except ValueError:
                item = None
            control = item.get("control") if isinstance(item, dict) and len(item) == 1 else None
            if control == "pause":
                self.playing.clear()
            elif control == "play":
                self.playing.set()
            else:
                self.runs.put(line)
        self.abandoned = not self.playing.is_set()
        self.playing.set()
        self.runs.put(None)

    def between(self) -> None:
        """Before each training step: hold while paused."""
        self.playing.wait()
        if self.abandoned:
            raise _Closed


def serve(inp, out) -> int:
    """The Lab's and the Vision page's worker: torch is imported once, then run after run (a fresh process
    per run cost ~2 s of imports, more than a whole preset run takes to train). A line is a LabConfig's
    dict, or ``{"vision": {...}}``: a VisionConfig's (``attn_core.vision.model.snapshots``). Pause and Play
    arrive on the same input as the runs (``Commands``); a run paused when the input ends ends ``stopped``."""
    import json

    commands = Commands(inp)
    while True:
        line = commands.runs.get()
        if line is None:
            return 0
        commands.playing.set()  # a pause meant for the last run does not hold this one
        try:
            item = json.loads(line)
            snaps = _vision_run(item, commands) if isinstance(item, dict) and "vision" in item else None
            for snap in snaps if snaps is not None else _lab_run(item, commands):
                out.write(json.dumps(snap) + "\n")
                out.flush()
            out.write(json.dumps({"end": "ok"}) + "\n")
        except _Closed:
            out.write(json.dumps({"end": "stopped"}) + "\n")
            out.flush()
            return 0
        except AttentionConfigError as err:
            out.write(json.dumps({"end": "error", "message": str(err), "code": err.code, "params": err.params}) + "\n")
        except (ValueError, TypeError) as err:
            out.write(json.dumps({"end": "error", "message": str(err)}) + "\n")
        out.flush()


def _lab_run(item: dict, commands: Commands):
    """A Lab run's snapshots as plain dicts; a refused allocation said as the memory it needed."""
    cfg = validate(LabConfig.from_dict(item))
    need = check_memory(cfg)
    try:
        for snap in train(cfg, between=commands.between):
            yield snapshot_dict(snap)
    except (MemoryError, RuntimeError) as err:  # the allocator refused (a tighter limit than estimated)
        if not isinstance(err, MemoryError) and "alloc" not in str(err).lower():
            raise
        raise AttentionConfigError(
            "batch", "lab_out_of_memory", need=math.ceil(need / 2**20), batch=cfg.batch, L=cfg.length
        ) from None


def _vision_run(item: dict, commands: Commands):
    """A Vision run's snapshots (the settings checked before the first step: a bad one ends the run with its error)."""
    from ..vision.model import VisionConfig, snapshots

    cfg = VisionConfig(**item["vision"])
    cfg.check()
    return snapshots(cfg, between=commands.between)

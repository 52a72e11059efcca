"""``python -m attn_core trace``: one attention layer, every step printed (or the whole trace as JSON).

Its flags are the model's settings: every knob's flag comes from ``attn_core.knobs.add_flags`` (``export-notebook``
takes the same argparse actions).
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from ..config import Settings
from ..errors import AttentionConfigError
from ..knobs import add_flags, given, kernel_knobs


def add(sub) -> dict:
    add_trace(sub)
    return {"trace": cmd_trace}


def _fmt(values, digits: int = 4) -> str:
    return "[" + ", ".join(f"{v:.{digits}f}" for v in values) + "]"


def add_trace(sub) -> None:
    p = sub.add_parser("trace", help="compute one attention layer and print every step (or --json)")
    add_settings_flags(p)
    p.add_argument("--json", action="store_true", help="print the whole trace as one JSON object")


def add_settings_flags(p: argparse.ArgumentParser) -> None:
    """The layer's settings as flags (what ``settings_from_args`` reads): ``trace``'s and ``items``'."""
    p.add_argument("sentence", nargs="?", help="the query-side sentence (self-attention when --source is absent)")
    p.add_argument("--source", help="the key/value sentence: cross-attention")
    p.add_argument("--preset", choices=["tutorial"], help="start from the tutorial's settings")
    p.add_argument("--seed", type=int)
    add_flags(p)  # every knob (attn_core.knobs), any registered later too; validate() checks their ranges
    p.add_argument("--focus", type=int, help="the query position to follow (default: the second token)")
    p.add_argument(
        "--max-mib",
        type=float,
        default=1024.0,
        dest="max_mib",
        help="refuse settings whose trace would need more memory than this (default 1024)",
    )


def settings_from_args(args: argparse.Namespace) -> Settings:
    from ..tutorial import preset

    base = preset() if args.preset == "tutorial" else Settings()
    if args.sentence is None and args.preset is None:
        raise AttentionConfigError("sentence", "no_sentence")
    fields = Settings.__dataclass_fields__
    changes = {name: getattr(args, name) for name in fields if getattr(args, name, None) is not None}
    given_now = {**given(args), **given(args, names=kernel_knobs(), checked=True)}  # a kernel option checked at once
    extra = {k: v for k, v in given_now.items() if k not in fields}
    if not (args.max_mib > 0 and args.max_mib < 2**40):
        raise AttentionConfigError("max_mib", "max_mib", value=args.max_mib)
    changes["max_bytes"] = int(args.max_mib * 2**20)
    return replace(base, **changes).with_options(**extra)


def _summary(trace, focus: int) -> str:
    s, t = trace.settings, trace
    L, S = len(t.tokens.words), len(t.key_tokens.words)
    focus = min(max(focus, 0), L - 1)
    lines = [
        f"tokens      {list(t.tokens.words)}",
        f"vocabulary  {t.tokens.vocab}",
        f"ids         {list(t.tokens.ids)}",
    ]
    if t.is_cross:
        lines.append(f"source      {list(t.key_tokens.words)}")
    w_shapes = " ".join(str(tuple(w.shape)) for w in (t.weights.W_q, t.weights.W_k, t.weights.W_v))
    lines += [
        f"x           {tuple(t.x.shape)}  embeddings{' + ' + s.pos + ' positions' if s.pos != 'none' else ''}",
        f"W_q W_k W_v {w_shapes}  (heads, out, d_model)",
        f"Q K V       {tuple(t.Q.shape)} {tuple(t.K.shape)} {tuple(t.V.shape)}",
        f"scores      {tuple(t.scores.shape)}  {s.score}, scale {t.scale:.6g}",
        f"mask        {s.mask}{' + causal' if s.causal else ''}: {int(t.mask.sum())} of {L * S} pairs may attend",
        f"weights     {tuple(t.attn.shape)}  kernel {s.kernel}",
        f"context     {tuple(t.context.shape)}",
        f"output      {tuple(t.output.shape)}",
        "",
        f"focus: query {focus} '{t.tokens.words[focus]}'",
    ]
    for h in range(s.heads):
        prefix = f"  head {h}: " if s.heads > 1 else "  "
        lines.append(f"{prefix}scores  {_fmt(t.scores[h, focus])}")
        lines.append(f"{prefix}weights {_fmt(t.attn[h, focus])}")
    if bool(t.empty_rows.any()):
        lines.append(f"note: {int(t.empty_rows.sum())} query rows have nothing to attend to; their weights are 0")
    return "\n".join(lines)


def cmd_trace(args) -> int:
    from ..export import to_json
    from ..trace import run_trace

    trace = run_trace(settings_from_args(args))
    if args.json:
        print(to_json(trace))
    else:
        focus = args.focus if args.focus is not None else (1 if len(trace.tokens.words) > 1 else 0)
        print(_summary(trace, focus))
    return 0

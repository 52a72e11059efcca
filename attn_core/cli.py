"""Command line: ``python -m attn_core trace|bench|pretrained|train ...``.

Bad arguments exit with status 2 and one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from .config import INITS, LAYOUTS, POSITIONS, SCORES, Settings
from .errors import AttentionConfigError
from .masks import MASK_MODES
from .options import add_flags, values_from


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, no usage dump
        self.exit(2, f"{self.prog}: error: {message}\n")


def _fmt(values, digits: int = 4) -> str:
    return "[" + ", ".join(f"{v:.{digits}f}" for v in values) + "]"


def _add_trace(sub) -> None:
    from .kernels import KERNELS

    p = sub.add_parser("trace", help="compute one attention layer and print every step (or --json)")
    p.add_argument("sentence", nargs="?", help="the query-side sentence (self-attention when --source is absent)")
    p.add_argument("--source", help="the key/value sentence: cross-attention")
    p.add_argument("--preset", choices=["tutorial"], help="start from the tutorial's settings")
    p.add_argument("--seed", type=int)
    p.add_argument("--init", choices=INITS)
    p.add_argument("--d-model", type=int, dest="d_model")
    p.add_argument("--d-q", type=int, dest="d_q")
    p.add_argument("--d-k", type=int, dest="d_k")
    p.add_argument("--d-v", type=int, dest="d_v")
    p.add_argument("--heads", type=int)
    p.add_argument("--layout", choices=LAYOUTS)
    p.add_argument("--score", choices=SCORES)
    p.add_argument("--temperature", type=float)
    p.add_argument("--pos", choices=POSITIONS)
    p.add_argument("--mask", choices=MASK_MODES)
    p.add_argument("--causal", action="store_true", default=None, help="AND a causal mask with any other")
    p.add_argument("--pad-to", type=int, dest="pad_to", help="padding mask: pad the key side to this length")
    p.add_argument("--dropout", type=float)
    p.add_argument("--residual-norm", action="store_true", default=None, dest="residual_norm")
    p.add_argument("--kernel", choices=list(KERNELS))
    add_flags(p, strict=False)  # every kernel option (attn_core.options), any registered later too; validate() checks
    p.add_argument("--focus", type=int, help="the query position to follow (default: the second token)")
    p.add_argument("--json", action="store_true", help="print the whole trace as one JSON object")
    p.add_argument(
        "--max-mib",
        type=float,
        default=1024.0,
        dest="max_mib",
        help="refuse settings whose trace would need more memory than this (default 1024)",
    )


def settings_from_args(args: argparse.Namespace) -> Settings:
    from .tutorial import preset

    base = preset() if args.preset == "tutorial" else Settings()
    if args.sentence is None and args.preset is None:
        raise AttentionConfigError("sentence", "no_sentence")
    changes = {
        name: getattr(args, name) for name in Settings.__dataclass_fields__ if getattr(args, name, None) is not None
    }
    extra = {k: v for k, v in values_from(args).items() if k not in Settings.__dataclass_fields__}
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
    lines += [
        f"x           {tuple(t.x.shape)}  embeddings{' + ' + s.pos + ' positions' if s.pos != 'none' else ''}",
        f"W_q W_k W_v {tuple(t.weights.W_q.shape)} {tuple(t.weights.W_k.shape)} {tuple(t.weights.W_v.shape)}  (heads, out, d_model)",
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
    from .export import to_json
    from .trace import run_trace

    trace = run_trace(settings_from_args(args))
    if args.json:
        print(to_json(trace))
    else:
        focus = args.focus if args.focus is not None else (1 if len(trace.tokens.words) > 1 else 0)
        print(_summary(trace, focus))
    return 0


def _text_args(args: argparse.Namespace) -> None:
    """Text from the command line must be UTF-8: bytes that are not arrive as lone surrogates
    and would break the JSON and the terminal output later."""
    for name in ("sentence", "source", "model"):
        value = getattr(args, name, None)
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise AttentionConfigError(name, "not_utf8") from None


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(prog="python -m attn_core", description="Attention, every step traced.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    _add_trace(sub)
    commands = {"trace": cmd_trace}
    try:
        from . import bench

        bench.add_cli(sub)
        commands["bench"] = bench.cmd_bench
    except ImportError:  # pragma: no cover - bench ships with the package
        pass
    try:
        from . import pretrained

        pretrained.add_cli(sub)
        commands["pretrained"] = pretrained.cmd_pretrained
    except ImportError:
        pass
    from . import lab

    lab.add_cli(sub)
    commands["train"] = lab.cmd_train
    from .interpret.cli import add_cli as add_interpret

    commands.update(add_interpret(sub))
    from . import notebook

    commands["export-notebook"] = notebook.add_cli(sub)
    from .explain.cli import add_cli as add_explain

    commands.update(add_explain(sub))
    args = parser.parse_args(argv)
    try:
        _text_args(args)
        return commands[args.command](args)
    except AttentionConfigError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except MemoryError:
        print(
            "error: out of memory. Use smaller settings: shorter lengths, a smaller batch, fewer heads.",
            file=sys.stderr,
        )
        return 2
    except RuntimeError as err:  # torch's allocator refusing a tensor: one line, not its traceback
        if "alloc" not in str(err).lower() and "out of memory" not in str(err).lower():
            raise
        first = str(err).split("DefaultCPUAllocator:")[-1].splitlines()[0].strip()[:160]
        print(f"error: out of memory ({first}). Use shorter lengths, a smaller batch or fewer heads.", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. piped into `head`
        sys.stderr.close()
        return 0
    except OSError as err:  # a file that cannot be written, a directory that is missing
        where = f" '{err.filename}'" if getattr(err, "filename", None) else ""
        print(f"error: cannot use{where}: {err.strerror or err}", file=sys.stderr)
        return 2

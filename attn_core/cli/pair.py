"""``python -m attn_core compare``: two traces of one text, A and B, and their difference (a contract).

compare TEXT --a "FLAGS" --b "FLAGS" [--head H] [--json]
    FLAGS: the settings as ``trace`` takes them ("--heads 4 --causal"; a sentence among them replaces TEXT for that
    side). ``--json`` prints ``{"a": …, "b": …, "diff": …}``: ``a`` and ``b`` exactly as ``trace --json`` prints
    them, ``diff`` as ``attn_core.pair.diff`` makes it (weights per head, B − A, where the shapes agree, else null;
    max_abs and entropy per head and query, for A and for B) with ``changed``: what changed most for ``--head``, in
    numbers and in words. Without ``--json``: the line of words and the entropy per query of both.
"""

from __future__ import annotations

import argparse
import json
import shlex
from dataclasses import asdict

from ..command import Parser
from ..errors import AttentionConfigError
from .trace import add_settings_flags, settings_from_args


class FlagError(ValueError):
    """FLAGS that ``trace`` would not take."""


class _FlagParser(Parser):
    def error(self, message: str):  # raised, not exited: the side it came from is named
        raise FlagError(message)


def _flag_parser() -> _FlagParser:
    p = _FlagParser(prog="FLAGS", add_help=False)
    add_settings_flags(p)
    return p


def add(sub) -> dict:
    p = sub.add_parser("compare", help="two settings of one text, A and B, side by side with B − A (or --json)")
    p.add_argument("text", help="the sentence both sides read (FLAGS may give a side its own)")
    p.add_argument("--a", default="", help='A\'s settings, as trace takes them: "--heads 1"')
    p.add_argument("--b", default="", help='B\'s settings, as trace takes them: "--heads 4"')
    p.add_argument("--head", type=int, default=0, help="the head whose change is put in words (default 0)")
    p.add_argument("--lang", choices=["en", "zh"], default="en", help="the language of the words")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return {"compare": cmd_compare}


def glue(argv: list[str]) -> list[str]:
    """``--a "--causal"`` as ``--a=--causal``: argparse would read a lone flag after ``--a`` as its own option."""
    out, rest = [], iter(argv)
    for arg in rest:
        value = next(rest, None) if arg in ("--a", "--b") else None
        out.append(arg if value is None else f"{arg}={value}")
    return out


def side_args(text: str, flags: str) -> argparse.Namespace:
    """``flags`` read as ``trace`` reads its own; ``text`` where they give no sentence. FlagError if they cannot be."""
    try:
        words = shlex.split(flags)
    except ValueError as err:
        raise FlagError(str(err)) from None
    args = _flag_parser().parse_args(words)
    if args.sentence is None:
        args.sentence = text
    return args


def _side(name: str, text: str, flags: str):
    """Side ``name``'s trace; an error names the side (``AttentionConfigError``, which the CLI prints as one line)."""
    from ..trace import run_trace

    try:
        return run_trace(settings_from_args(side_args(text, flags)))
    except FlagError as err:
        raise AttentionConfigError(name, "compare_flags", side=name, why=err) from None
    except AttentionConfigError as err:
        raise AttentionConfigError(name, "compare_side", side=name, why=err) from None


def cmd_compare(args: argparse.Namespace) -> int:
    from ..export import to_dict
    from ..pair import changed_most, diff, words

    a, b = _side("a", args.text, args.a), _side("b", args.text, args.b)
    change = changed_most(a, b, max(args.head, 0))
    said = words(change, args.lang)
    if args.json:
        out = {"a": to_dict(a), "b": to_dict(b), "diff": {**diff(a, b), "changed": {**asdict(change), "words": said}}}
        print(json.dumps(out, ensure_ascii=False))
        return 0
    d = diff(a, b)
    print(said)
    for side in ("a", "b"):
        for h, row in enumerate(d["entropy"][side]):
            print(f"{side.upper()} head {h} entropy per query: [{', '.join(f'{x:.3f}' for x in row)}]")
    return 0

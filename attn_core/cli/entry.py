"""The one entry: ``python -m attn_core <command> ...`` (or ``python -m attn_core.cli``).

Each subcommand is a module of this package with ``add(sub) -> {name: function}``; ``SUBCOMMANDS`` lists them in
the order ``--help`` shows them (``notebook`` after ``trace``: ``export-notebook`` takes trace's flags).
"""

from __future__ import annotations

from ..command import DESCRIPTION, PROG, Parser, run

SUBCOMMANDS = (
    "trace",
    "compare",
    "bench",
    "pretrained",
    "lab",
    "interpret",
    "notebook",
    "explain",
    "nexttoken",
    "why",
    "vision",
    "check",
    "minimal",
)


def build_parser() -> tuple[Parser, dict]:
    """The parser with every subcommand, and {command name: its function}."""
    # imported here: --help lists them all
    from . import (
        bench,
        check,
        explain,
        interpret,
        lab,
        minimal,
        nexttoken,
        notebook,
        pair,
        pretrained,
        trace,
        vision,
        why,
    )

    modules = {"trace": trace, "compare": pair, "bench": bench, "pretrained": pretrained, "lab": lab}
    modules |= {"interpret": interpret, "notebook": notebook, "explain": explain, "nexttoken": nexttoken}
    modules |= {"why": why, "vision": vision, "check": check, "minimal": minimal}
    parser = Parser(prog=PROG, description=DESCRIPTION)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    commands: dict = {}
    for name in SUBCOMMANDS:
        commands.update(modules[name].add(sub))
    return parser, commands


def main(argv: list[str] | None = None) -> int:
    import sys

    from .pair import glue

    parser, commands = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(glue(argv) if argv[:1] == ["compare"] else argv)
    return run(commands[args.command], args)

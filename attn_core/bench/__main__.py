"""``python -m attn_core.bench ...``: the same as ``python -m attn_core bench ...``: the same parser, flags and
command, built here from the bench's own (``attn_core.bench.cli``) and the commands' shared rules
(``attn_core.command``), so that the engine needs no import up to ``attn_core.cli``."""

import sys

from ..command import DESCRIPTION, PROG, Parser, run
from .cli import add_cli, cmd_bench

parser = Parser(prog=PROG, description=DESCRIPTION)
add_cli(parser.add_subparsers(dest="command", required=True, parser_class=Parser))
sys.exit(run(cmd_bench, parser.parse_args(["bench", *sys.argv[1:]])))

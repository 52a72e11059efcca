"""Command line: ``python -m attn_core <command> ...`` (also ``python -m attn_core.cli``).

One entry (``entry.main``) and one module per subcommand, each with ``add(sub) -> {name: function}``:

- ``trace``       trace (and the flags ``export-notebook`` shares)
- ``pair``        compare (two settings of one text: A, B and B − A, ``attn_core.pair``)
- ``bench``       bench (its flags and command live in ``attn_core.bench.cli``)
- ``pretrained``  pretrained, models (``attn_core.models``: every family, the models this server offers)
- ``lab``         train (its flags and command live with the Lab)
- ``interpret``   interpret, heads (a decoder's: next-token measures, previous/duplicate/induction/first-token)
- ``notebook``    export-notebook (``attn_core.notebook``)
- ``explain``     explain, explain-table
- ``nexttoken``   generate, lens
- ``why``         why, atlas (``attn_core.why``)
- ``vision``      vision (``attn_core.vision``: patches, ViT, Swin's windows, the digits)
- ``check``       items, lesson (``attn_core.check``: the concept check's items, a lesson's gains from the app's store)
- ``minimal``     pair, match-heads (``attn_core.interpret``: a minimal pair on a model; two models' heads matched)

Bad arguments exit with status 2 and one line on stderr, never a traceback (``attn_core.command``).
"""

from ..command import Parser, check_text, run
from .entry import SUBCOMMANDS, build_parser, main
from .trace import add_trace, cmd_trace, settings_from_args

__all__ = [
    "SUBCOMMANDS",
    "Parser",
    "add_trace",
    "build_parser",
    "check_text",
    "cmd_trace",
    "main",
    "run",
    "settings_from_args",
]

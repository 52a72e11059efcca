"""``python -m attn_core export-notebook``: the ``trace`` subcommand's flags plus where to write, the language and
the Real model's head; the notebook itself is made by ``attn_core.notebook``. The entry adds ``trace`` first."""

from __future__ import annotations

import sys

from ..errors import AttentionConfigError
from ..notebook import LANGS, PAGES, Notebook, model_notebook, trace_notebook
from .trace import settings_from_args


def add(sub) -> dict:
    return {"export-notebook": add_cli(sub)}


def add_cli(sub):
    """``export-notebook``: the ``trace`` subcommand's flags (the same objects, so they cannot drift apart), plus
    where to write, the language, and the Real model's head. Returns the command's function."""
    p = sub.add_parser(
        "export-notebook",
        help="write this view as a Jupyter notebook (or a .py script) that recomputes it with plain torch",
    )
    for action in sub.choices["trace"]._actions:  # every flag of `trace` but its --help and --json
        if action.dest not in ("help", "json"):
            p._add_action(action)
    p.add_argument("-o", "--output", default="lesson.ipynb", help="the file to write (.ipynb, or .py); '-': stdout")
    p.add_argument("--py", action="store_true", help="write a plain script instead of a notebook")
    p.add_argument("--lang", choices=LANGS, default="en", help="the language of the text cells")
    p.add_argument("--page", choices=PAGES, help="the page it stands for (default: from the settings)")
    p.add_argument("--head", type=int, help="the head whose numbers each step prints (default 0)")
    p.add_argument(
        "--model",
        nargs="?",
        const="",
        help="the Real model page instead: the bundled model (no value) or a local model directory",
    )
    p.add_argument("--layer", type=int, help="with --model: the layer (default 0)")
    return cmd_export


def build_from_args(args) -> Notebook:
    if args.model is not None or args.layer is not None:
        from .. import models as pt

        if args.sentence is None:
            raise AttentionConfigError("sentence", "no_sentence")
        layer, head, pad_to = args.layer or 0, args.head or 0, args.pad_to or 0
        pre = pt.load(args.model or "")
        run = pt.forward(pre, pt.encode(pre, args.sentence, pad_to=pad_to))
        ht = pt.take_apart(run, pt.head_weights(pre, layer, head), layer, head)
        return model_notebook(
            pre,
            run,
            ht,
            sentence=args.sentence,
            pad_to=pad_to,
            lang=args.lang,
            focus=args.focus,
            spec=args.model or "",
        )
    settings = settings_from_args(args)
    return trace_notebook(settings, lang=args.lang, focus=args.focus, head=args.head or 0, page=args.page)


def cmd_export(args) -> int:
    nb = build_from_args(args)
    as_script = args.py or args.output.lower().endswith(".py")
    content = nb.script(args.lang) if as_script else nb.ipynb()
    if args.output == "-":
        sys.stdout.write(content)
        return 0
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(content)
    kind = "script" if as_script else "notebook"
    print(f"wrote {args.output}: a {kind} of {len(nb.cells)} cells ({len(content.encode()) / 1024:,.0f} KiB)")
    return 0

"""The notebook's cells: the ``Notebook`` type (as nbformat JSON or a ``# %%`` script), Markdown and code cell
helpers, how typed text is quoted in Markdown, and the staged softmax both notebooks define."""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass

from ..errors import AttentionConfigError
from ..notebook_text import text

LANGS = ("en", "zh")


def check_lang(lang: str) -> None:
    if lang not in LANGS:
        raise AttentionConfigError("lang", "unknown_choice", value=lang, options=", ".join(LANGS))


_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#!|<>~$:&])")


def user_md(value: object) -> str:
    """Typed text for a Markdown cell: shown as typed (Markdown and HTML characters escaped), control and
    line-separator characters as visible escapes (they would end a comment line in the script)."""
    out = []
    for ch in str(value):
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs") and ch != "\t":
            out.append(ascii(ch)[1:-1].replace("\\", "\\\\"))
        else:
            out.append(ch)
    return _MARKDOWN.sub(r"\\\1", "".join(out))


def quoted(value: object) -> str:
    return "'" + user_md(value) + "'"


@dataclass(frozen=True)
class Cell:
    kind: str  # "markdown" | "code"
    source: str


@dataclass(frozen=True)
class Notebook:
    cells: tuple[Cell, ...]
    name: str  # a file name without extension
    needs: str = ""  # what the script needs beyond torch (", transformers")

    def ipynb(self) -> str:
        cells = []
        for n, c in enumerate(self.cells):
            cell = {"cell_type": c.kind, "id": f"cell-{n}", "metadata": {}, "source": c.source.splitlines(True)}
            if c.kind == "code":
                cell.update(execution_count=None, outputs=[])
            cells.append(cell)
        nb = {
            "cells": cells,
            "metadata": {
                "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                "language_info": {"name": "python"},
            },
            "nbformat": 4,
            "nbformat_minor": 5,
        }
        return json.dumps(nb, ensure_ascii=False, indent=1) + "\n"

    def script(self, lang: str = "en") -> str:
        """The same cells as a plain script: Markdown as comments, each cell after a ``# %%`` marker."""
        lines = [
            "# " + text("nb_script", lang, file=f"{self.name}.py", extra=self.needs),
            "# " + text("nb_cells", lang),
        ]
        for c in self.cells:
            if c.kind == "markdown":
                lines.append("\n# %% [markdown]")
                lines += ["# " + line if line else "#" for line in c.source.splitlines()]
            else:
                lines.append("\n# %%")
                lines.append(c.source.rstrip("\n"))
        return "\n".join(lines) + "\n"

    def code(self) -> list[str]:
        return [c.source for c in self.cells if c.kind == "code"]


def _md(*parts: str) -> Cell:
    return Cell("markdown", "\n\n".join(p for p in parts if p))


def _tex(formula: str) -> str:
    return f"$${formula}$$"


_SOFTMAX = '''def staged_softmax(x, allowed):
    """The softmax in stages, masked keys left out; a row with nothing to attend to gives 0, never NaN."""
    allowed = allowed.expand_as(x)
    empty = ~allowed.any(dim=-1)
    row_max = x.masked_fill(~allowed, float("-inf")).amax(dim=-1).masked_fill(empty, 0.0)
    exp = torch.where(allowed, x - row_max.unsqueeze(-1), torch.full_like(x, float("-inf"))).exp()
    row_sum = exp.sum(dim=-1)
    return row_max, exp, row_sum, exp / row_sum.masked_fill(empty, 1.0).unsqueeze(-1), empty
'''

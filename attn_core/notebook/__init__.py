"""Take it home: the current view as a Jupyter notebook (or a plain script) that recomputes every number
with plain PyTorch and no import of this project.

    trace_notebook(settings, lang=, focus=, head=, page=) -> Notebook   Step by step, Multi-head, Cross-attention
    model_notebook(pre, run, head_trace, lang=, focus=, spec=) -> Notebook   Real model: one trained head
    nexttoken_notebook(...) -> Notebook              Next token: the tokens, a decoder's forward, the seeded draw
    Notebook.ipynb() -> str (nbformat 4.5 JSON)      Notebook.script() -> str ("# %%" cells)

Each step is a Markdown cell (the formula and the sentence the page shows, in English or 简体中文) and a code
cell that recomputes it (the same generator calls as ``attn_core``, so the numbers match) and prints what the
page shows for the focus token. The last cell holds the app's own tensors (float32, base64) and compares each
with its recomputation. What a user typed reaches a code cell only as a string literal (``repr``) and a
Markdown cell only escaped. A variant's own steps come from its spec (``Kernel.notebook``, given where it is
registered: ``attn_core.kernels.notebook_cells``), so every variant registered with them exports, one added later
too; one registered without them is refused with its message.

Modules: ``cells`` (the ``Notebook`` type, Markdown and code cells, quoting typed text), ``tensors`` (the app's
values carried in the last cell, the size limit), ``trace_code`` (the toy trace's code cells), ``variants`` (a
variant's own steps read from its spec, what can be exported), ``trace_nb`` (``trace_notebook``), ``model_nb``
(``model_notebook``), ``nexttoken_nb`` (``nexttoken_notebook``).
"""

from __future__ import annotations

from .cells import LANGS, Cell, Notebook, quoted, user_md
from .model_nb import model_notebook
from .nexttoken_nb import nexttoken_notebook
from .tensors import MAX_NUMBERS, app_lists, app_tensors, check_size, head_tensors, variant_name
from .trace_nb import PAGES, trace_notebook
from .variants import check_exportable, pattern_code, variant_code

__all__ = [
    "LANGS",
    "MAX_NUMBERS",
    "PAGES",
    "Cell",
    "Notebook",
    "app_lists",
    "app_tensors",
    "check_exportable",
    "check_size",
    "head_tensors",
    "model_notebook",
    "nexttoken_notebook",
    "pattern_code",
    "quoted",
    "trace_notebook",
    "user_md",
    "variant_code",
    "variant_name",
]

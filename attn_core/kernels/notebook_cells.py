"""A variant's own steps in the take-home notebook, given at its registration (``register(..., notebook=...)``).

The take-home notebook (``attn_core.notebook``) recomputes a trace in plain PyTorch with no import of this
project. Its cells up to the softmax are the same for every variant; a variant's own steps come from its spec:
``NotebookSteps.cells(causal, **options)`` gives ``(stage key, code)`` pairs, one per stage of its ``Explained``
and in their order (none of them for a variant that does not explain its steps), and ``NotebookSteps.mask(**
options)`` a sparse pattern as the notebook's ``(L, S)`` mask expression. A variant registered without them is
refused by the export ("does not know the steps"), never written wrong.

What a variant's code may use (defined by the cells before it): ``torch``, ``math``, ``F``; ``Q`` (heads, L, d_q),
``K`` (heads, S, d_k), ``V`` (heads, S, d_v), ``scale``, ``scaled``, ``mask``, ``softmax_weights``, ``causal``
(the variant's: always-causal ones included), ``L``, ``S``, ``HEADS``, ``SEED``, ``FEATURES``, ``PROJ_K``,
``WINDOW``, ``DILATION``, ``GLOBAL_TOKENS``, ``BLOCK``, ``words``, ``FOCUS``, ``HEAD``. What it must leave:
``variant_out`` (heads, L, d_v) when it explains its steps, ``amounts_to`` (heads, L, S) when its weights are
not a softmax, and every tensor of its stages in ``recomputed`` under the notebook's name
(``attn_core.tensors.notebook_name``).

``runnable_weights(fn)`` makes the steps of a variant without stages from its own ``weights`` function's source
(refused at registration if that source needs anything the notebook does not define).
"""

from __future__ import annotations

import ast
import builtins
import inspect
import textwrap
from collections.abc import Callable
from dataclasses import dataclass

# mask mode -> the (L, S) expression in i, j (queries down, keys across): the settings' masks and the sparse
# variants' patterns (a pattern's spec names its own: ``pattern_mask``)
MASK_CODE = {
    "none": "torch.ones(L, S, dtype=torch.bool)",
    "causal": "j <= i",
    "padding": "(j < n_real).expand(L, S)   # keys at or after the real tokens are [PAD]",
    "sliding_window": "(i - j).abs() <= WINDOW",
    "dilated": "((i - j).abs() <= WINDOW * DILATION) & ((i - j) % DILATION == 0)",
    "global_window": "((i - j).abs() <= WINDOW) | (i < GLOBAL_TOKENS) | (j < GLOBAL_TOKENS)",
    "block": "(i // BLOCK) == (j // BLOCK)",
}

Cells = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class NotebookSteps:
    cells: Callable[..., Cells]  # (causal, **options) -> ((stage key, code), ...) in the order of its stages
    mask: Callable[..., str] | None = None  # (**options) -> a sparse pattern's (L, S) expression in i, j


def pattern_mask(mode: str) -> Callable[..., str]:
    """The mask expression of a pattern named by its mode (``MASK_CODE``), whatever the options."""
    code = MASK_CODE[mode]
    return lambda **_: code


def sparse_cells(causal: bool, **_) -> Cells:
    """A sparse pattern: the pairs, their scores, the softmax over each row's pairs."""
    pattern = (
        "pi, pj = mask.nonzero(as_tuple=True)  # the pairs computed (the pattern above)\n"
        "pattern = mask.float().unsqueeze(0)  # (1, L, S)\n"
        "recomputed.update(pattern=pattern)\n"
        "print(f'{len(pi)} of {L * S} pairs are computed ({100 * len(pi) / (L * S):.0f}%)')\n"
        "print(f'pattern row of {words[FOCUS]}:', mask[FOCUS].int().tolist())\n"
    )
    scores = (
        "e = (Q[:, pi] * K[:, pj]).sum(-1) * scale  # (heads, pairs): one score per allowed pair\n"
        "band_scores = torch.full((HEADS, L, S), float('nan'))  # NaN: never computed\n"
        "band_scores[:, pi, pj] = e\n"
        "recomputed.update(band_scores=band_scores)\n"
        "print(f'scores of {words[FOCUS]} on the pattern:', band_scores[HEAD, FOCUS])\n"
    )
    softmax = (
        "rows = pi.expand(HEADS, -1)\n"
        "top = torch.full((HEADS, L), float('-inf')).scatter_reduce(1, rows, e, 'amax')\n"
        "p = torch.exp(e - top[:, pi])\n"
        "total = torch.zeros(HEADS, L).index_add_(1, pi, p)\n"
        "alpha = p / total[:, pi].clamp_min(torch.finfo(torch.float32).tiny)\n"
        "variant_out = torch.zeros(HEADS, L, V.shape[-1]).index_add_(1, pi, alpha.unsqueeze(-1) * V[:, pj])\n"
        "band_weights = torch.full((HEADS, L, S), float('nan'))\n"
        "band_weights[:, pi, pj] = alpha\n"
        "recomputed.update(band_weights=band_weights)\n"
        "print(f'weights of {words[FOCUS]} on the pattern:', band_weights[HEAD, FOCUS])\n"
        "print('largest difference from softmax under the mask, times V:', "
        "float((variant_out - softmax_weights @ V).abs().max()))\n"
    )
    return (("pattern", pattern), ("band_scores", scores), ("band_softmax", softmax))


def linformer_cells(causal: bool, **_) -> Cells:
    """Linformer: the seeded projections E and F, the L × k scores, their softmax and what they amount to."""
    projections = (
        "def projection(rows, length, seed):\n"
        "    g_proj = torch.Generator().manual_seed(seed)\n"
        "    return torch.randn(rows, length, generator=g_proj) / math.sqrt(rows)\n\n\n"
        "E_proj, F_proj = projection(PROJ_K, S, SEED), projection(PROJ_K, S, SEED + 1)  # (k, S)\n"
        "K_proj, V_proj = E_proj @ K, F_proj @ V  # (heads, k, d_k), (heads, k, d_v)\n"
        "recomputed.update(E=E_proj.unsqueeze(0), F=F_proj.unsqueeze(0), K_proj=K_proj, V_proj=V_proj)\n"
        "print('K_proj', tuple(K_proj.shape), 'V_proj', tuple(V_proj.shape))\n"
    )
    scores = (
        "scores_Lk = Q @ K_proj.transpose(-2, -1) * scale  # (heads, L, k): L × k, not L × S\n"
        "recomputed.update(scores_Lk=scores_Lk)\n"
        "print(f'scores of {words[FOCUS]} over the k rows:', scores_Lk[HEAD, FOCUS])\n"
    )
    softmax = (
        "weights_Lk = torch.softmax(scores_Lk, dim=-1)\n"
        "variant_out = weights_Lk @ V_proj\n"
        "recomputed.update(weights_Lk=weights_Lk)\n"
        "print(f'weights of {words[FOCUS]} over the k rows:', weights_Lk[HEAD, FOCUS])\n"
    )
    amounts = (
        "amounts_to = weights_Lk @ F_proj  # (heads, L, S), signed: for display only\n"
        "recomputed.update(amounts_to=amounts_to)\n"
        "print(f'what {words[FOCUS]} amounts to:', amounts_to[HEAD, FOCUS])\n"
    )
    return (("projections", projections), ("low_rank_scores", scores), ("low_rank_softmax", softmax)) + (
        ("amounts_to", amounts),
    )


# what a variant's own function may name when the notebook runs it: the notebook's imports and Python's builtins
_NOTEBOOK_GLOBALS = frozenset({"torch", "math", "F"}) | frozenset(dir(builtins))


def _free_names(tree: ast.AST) -> set[str]:
    """Names a function reads that it neither defines nor takes (its globals), from its syntax tree."""
    loaded, bound = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
    return loaded - bound


def runnable_weights(fn: Callable) -> NotebookSteps:
    """The notebook steps of a variant that does not explain its own: its ``weights`` function, its source
    copied into the notebook and called there with this view's options (``amounts_to``, the L × S matrix its
    output is, ``variant_out = amounts_to @ V``). ``ValueError`` if the source cannot stand alone there: a
    lambda, or a name the notebook does not define (a helper of the variant's module)."""
    try:
        source = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError) as err:
        raise ValueError(f"{fn!r}: no source to copy into the notebook ({err})") from None
    tree = ast.parse(source)
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef) or tree.body[0].decorator_list:
        raise ValueError(f"{fn.__qualname__}: the notebook copies one plain def, not a lambda or a decorated one")
    missing = sorted(_free_names(tree) - _NOTEBOOK_GLOBALS)
    if missing:
        raise ValueError(f"{fn.__qualname__} reads {missing}, which the notebook does not define")
    name = tree.body[0].name

    def cells(causal: bool, **options) -> Cells:
        call = f"{name}(Q.unsqueeze(0), K.unsqueeze(0), causal=causal, scale=scale, **{options!r})[0]"
        code = (
            f"{source.rstrip()}\n\n\n"
            f"amounts_to = {call}  # (heads, L, S)\n"
            "variant_out = amounts_to @ V\n"
            "recomputed.update(amounts_to=amounts_to)\n"
            "print(f'what {words[FOCUS]} amounts to:', amounts_to[HEAD, FOCUS])\n"
        )
        return (("amounts_to", code),)

    return NotebookSteps(cells)

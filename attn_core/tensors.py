"""The tensors a forward pass exposes, named once (as TransformerLens names each hook point by its module path and
x-transformers returns one ``Intermediates``).

``TENSORS`` is the one table, by name. A row says which step makes the tensor (the Step-by-step page's step, whose
URL key is ``st_<step>``; ``multihead`` for what the heads make together; ``variant`` for a variant's own
intermediates, whose steps are ``vs_<stage key>``), where a ``Trace`` holds it (an attribute path), its key in its
step's ``Stage`` where the page draws it, what its last two axes are, and its slot in the pair the intervention
hooks capture. The name is the one the take-home notebook gives its recomputation and compares, the JSON export's
key and the hooks' field. Read by: ``trace`` (the fields are these paths), ``stages`` (a base step's tensors, the
step keys), the URL's step keys (``URL_STEPS``), ``notebook`` (``trace_tensors``, ``notebook_name``) and
``interpret.hooks`` (``CAPTURED``); ``tests/unit/test_tensor_names.py`` checks each against it.

Two names stay apart from the table's on purpose, recorded in it: the Stage keys ``weights`` (the softmax's, which
the table calls ``softmax_weights``: the final weights may be a variant's matrix or after dropout) and ``attn``
(the weights summed with the values, the table's ``weights``), because the pages' charts and their tests read them.
"""

from __future__ import annotations

from dataclasses import dataclass

BASE_STEPS = ("tokens", "qkv", "scores", "mask", "softmax", "output")  # Step by step's steps, in its order


@dataclass(frozen=True)
class Named:
    name: str  # the one name (the notebook's, the export's, the hooks')
    step: str  # a BASE_STEPS key, "multihead", or "variant"
    trace: str | None = None  # where a Trace holds it: a dotted attribute path; None: a variant's own (its Stage)
    stage: str | None = None  # its key in its step's Stage (None: the page does not draw it there)
    axes: tuple[str, str] = ("", "")  # its last two axes: query, key, token, d, dv, feature, k ("" one row)
    cross: bool = False  # held apart only for cross-attention (self-attention's is x itself)
    capture: int | None = None  # its slot in the (context, weights) pair the intervention hooks capture


def _rows(step: str, *rows: tuple) -> list[Named]:
    return [Named(name, step, *rest) for name, *rest in rows]


_TABLE = [
    *_rows(
        "tokens",
        ("x_embed", "x_embed", None, ("token", "d_model")),
        ("pos", "pos", None, ("token", "d_model")),
        ("x", "x", "x", ("query", "d_model")),
        ("x_source", "x_source", None, ("key", "d_model"), True),
    ),
    *_rows(
        "qkv",
        ("Q", "Q", "Q", ("query", "d")),
        ("K", "K", "K", ("key", "d")),
        ("V", "V", "V", ("key", "dv")),
        ("W_q", "weights.W_q", "W_q", ("d", "d_model")),
        ("W_k", "weights.W_k", "W_k", ("d", "d_model")),
        ("W_v", "weights.W_v", "W_v", ("dv", "d_model")),
        ("W_o", "weights.W_o", None, ("d_model", "dv")),
        ("b_q", "weights.b_q", None, ("", "d")),
        ("b_k", "weights.b_k", None, ("", "d")),
        ("b_v", "weights.b_v", None, ("", "dv")),
        ("b_o", "weights.b_o", None, ("", "d_model")),
        ("W_a", "weights.additive.W_a", None, ("d", "d")),
        ("U_a", "weights.additive.U_a", None, ("d", "d")),
        ("v_a", "weights.additive.v", None, ("", "d")),
    ),
    *_rows(
        "scores",
        ("scores", "scores", "scores", ("query", "key")),
        ("scaled_scores", "scaled_scores", "scaled_scores", ("query", "key")),
    ),
    *_rows("mask", ("mask", "mask", "mask", ("query", "key"))),
    *_rows(
        "softmax",
        ("row_max", "softmax.row_max", "row_max", ("", "query")),
        ("exp", "softmax.exp", "exp", ("query", "key")),
        ("row_sum", "softmax.row_sum", "row_sum", ("", "query")),
        ("softmax_weights", "softmax.weights", "weights", ("query", "key")),
        ("empty", "softmax.empty", None, ("", "query")),
    ),
    *_rows(
        "output",
        ("weights", "attn", "attn", ("query", "key"), False, 1),
        ("context", "context", "context", ("query", "dv")),
    ),
    *_rows(
        "multihead",
        ("concat", "concat", None, ("query", "dv"), False, 0),
        ("projected", "projected", None, ("query", "d_model")),
        ("output", "output", None, ("query", "d_model")),
    ),
    *_rows(  # a variant's own intermediates (its Stage's key; the notebook's name where the two differ)
        "variant",
        ("pattern", None, "pattern", ("query", "key")),
        ("band_scores", None, "band_scores", ("query", "key")),
        ("band_weights", None, "band_weights", ("query", "key")),
        ("amounts_to", None, "amounts_to", ("query", "key")),
        ("omega", None, "omega", ("feature", "d")),
        ("phi_q", None, "phi_q", ("query", "feature")),
        ("phi_k", None, "phi_k", ("key", "feature")),
        ("state", None, "state", ("feature", "dv")),
        ("normaliser", None, "normaliser", ("", "feature")),
        ("numerator", None, "numerator", ("query", "dv")),
        ("denominator", None, "denominator", ("query", "")),
        ("half_1", None, "half_1", ("query", "dv")),
        ("half_2", None, "half_2", ("query", "dv")),
        ("uniform_out", None, "uniform_out", ("query", "dv")),
        ("variant_output", None, "output", ("query", "dv")),
        ("E", None, "E", ("k", "key")),
        ("F", None, "F", ("k", "key")),
        ("K_proj", None, "K_proj", ("k", "d")),
        ("V_proj", None, "V_proj", ("k", "dv")),
        ("scores_Lk", None, "scores_Lk", ("query", "k")),
        ("weights_Lk", None, "weights_Lk", ("query", "k")),
        ("sigmoid_scores", None, "sigmoid_scores", ("query", "key")),
        ("sigmoid_weights", None, "sigmoid_weights", ("query", "key")),
    ),
]
TENSORS: dict[str, Named] = {row.name: row for row in _TABLE}  # a name given twice: test_tensor_names finds it

URL_STEPS = tuple(f"st_{step}" for step in BASE_STEPS)  # the URL's ?step= values of the base steps
CAPTURED = tuple(row.name for row in sorted((r for r in _TABLE if r.capture is not None), key=lambda r: r.capture))
VARIANT_AXES = {row.stage: row.axes for row in _TABLE if row.step == "variant"}  # by a variant's Stage key


def url_step(stage_key: str, *, variant: bool = False) -> str:
    """A step's key in the URL: ``st_<key>`` for a base step, ``vs_<key>`` for a variant's own."""
    return f"{'vs' if variant else 'st'}_{stage_key}"


def read(obj, path: str):
    """The tensor at a dotted attribute path (``softmax.weights``), or None where a part is absent or None."""
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def stage_tensors(trace, step: str) -> dict:
    """A base step's tensors as its ``Stage`` holds them: the trace's own (not copies), by their Stage keys."""
    return {row.stage: read(trace, row.trace) for row in _TABLE if row.step == step and row.stage is not None}


def trace_tensors(trace) -> dict:
    """Every tensor a trace holds, by its name, in the table's order (those a view lacks left out)."""
    out = {}
    for row in _TABLE:
        if row.trace is None or (row.cross and not trace.is_cross):
            continue
        value = read(trace, row.trace)
        if value is not None:
            out[row.name] = value
    return out


def notebook_name(stage_key: str) -> str:
    """A variant's intermediate (by its Stage key) under its name in the table; one the table does not know keeps
    its key unless a tensor of the trace has that name (then ``variant_<key>``)."""
    for row in _TABLE:
        if row.step == "variant" and row.stage == stage_key:
            return row.name
    return f"variant_{stage_key}" if stage_key in TENSORS else stage_key

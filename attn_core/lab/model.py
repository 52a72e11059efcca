"""The Lab's model: embeddings, a position scheme, 1-2 attention layers and a linear read-out.

Its attention is the function Step by step explains: ``steps.attend`` (projections, RoPE's rotation,
the score, its scale, ALiBi's bias, the mask or the variant's pattern, the masked softmax), batched
over the training examples; a linear variant's weights are the matrix its efficient path amounts
to (``Kernel.weights``: equal to it and differentiable at these lengths).
"""

from __future__ import annotations

import math
from functools import partial

import torch
import torch.nn.functional as F
from torch import nn

from .. import masks, steps
from ..kernels import KERNELS
from ..positions import SCHEMES
from .config import LabConfig
from .tasks import TASKS


class AttentionLayer(nn.Module):
    b_q = b_k = b_v = None  # the Lab's projections have no biases (steps.attend reads them)

    def __init__(self, c: LabConfig, causal: bool):
        super().__init__()
        H, dm = c.heads, c.d_model
        self.c, self.causal = c, causal

        def linear(*shape, fan_in):
            return nn.Parameter((torch.rand(*shape) * 2 - 1) / math.sqrt(fan_in))  # nn.Linear's init

        self.W_q, self.W_k = linear(H, c.d_k, dm, fan_in=dm), linear(H, c.d_k, dm, fan_in=dm)
        self.W_v, self.W_o = linear(H, c.d_v, dm, fan_in=dm), linear(dm, H * c.d_v, fan_in=H * c.d_v)
        if c.score == "additive":
            self.W_a, self.U_a = linear(H, c.d_k, c.d_k, fan_in=c.d_k), linear(H, c.d_k, c.d_k, fan_in=c.d_k)
            self.v_a = linear(H, c.d_k, fan_in=c.d_k)
        self.norm1 = nn.LayerNorm(dm)
        self.mlp = nn.Sequential(nn.Linear(dm, 4 * dm), nn.ReLU(), nn.Linear(4 * dm, dm)) if c.mlp else None
        self.norm2 = nn.LayerNorm(dm) if c.mlp else None

    @property
    def additive(self) -> steps.AdditiveParams | None:
        """The additive score's parameters, as ``steps.attend`` takes them."""
        return steps.AdditiveParams(self.W_a, self.U_a, self.v_a) if self.c.score == "additive" else None

    def allowed(self, L: int) -> torch.Tensor:
        """(L, L) bool: the variant's own pattern, else the mask (AND-ed with causality for a causal task)."""
        c, kern = self.c, KERNELS[self.c.kernel]
        if kern.pattern is not None:
            return kern.pattern(L, L, self.causal, **self._options())
        return masks.build_mask(c.mask, L, L, window=c.window, also_causal=self.causal)

    def _options(self) -> dict:
        return {"window": self.c.window} if "window" in KERNELS[self.c.kernel].options else {}

    def attend(self, x: torch.Tensor, *, stages: bool = False) -> steps.Attended:
        """``steps.attend`` on x (B, L, d_model) with this layer's weights and the config's scheme."""
        c, kern = self.c, KERNELS[self.c.kernel]
        effective = None
        if not kern.softmax:  # linear: the L x L matrix its efficient path amounts to; no mask, no ALiBi
            causal = self.causal or kern.always_causal
            effective = partial(_variant_weights, kern, causal, self._options())
        mask = None if effective is not None else self.allowed(x.shape[-2])
        return steps.attend(
            x,
            x,
            self,
            mask,
            score=c.score,
            temperature=c.temperature,
            positions=SCHEMES[c.pos],
            effective=effective,
            stages=stages,
        )

    def weights(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x (B, L, d_model) -> the attention weights (B, H, L, L) and V (B, H, L, d_v)."""
        a = self.attend(x)
        return a.weights, a.V

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        w, V = self.weights(x)
        if self.training and self.c.dropout > 0:
            w = F.dropout(w, self.c.dropout)
        ctx = (w @ V).transpose(1, 2).flatten(2)  # (B, L, H·d_v)
        x = self.norm1(x + ctx @ self.W_o.T)
        if self.mlp is not None:
            x = self.norm2(x + self.mlp(x))
        return x, w


def _variant_weights(kern, causal: bool, options: dict, Q, K, scale: float) -> torch.Tensor:
    return kern.weights(Q, K, causal=causal, scale=scale, **options)


class LabModel(nn.Module):
    def __init__(self, c: LabConfig):
        super().__init__()
        task, scheme = TASKS[c.task], SCHEMES[c.pos]
        self.c = c
        self.embed = nn.Embedding(task.vocab, c.d_model)
        if scheme.learned:
            self.pos = nn.Parameter(scheme.start(c.length, c.d_model))
        elif scheme.table is not None:
            self.register_buffer("pos", scheme.table(c.length, c.d_model, seed=c.seed))
        else:
            self.pos = None  # none, or a scheme acting inside the attention (RoPE, ALiBi)
        self.layers = nn.ModuleList(AttentionLayer(c, task.causal) for _ in range(c.layers))
        self.head = nn.Linear(c.d_model, task.vocab)

    def _embedded(self, x: torch.Tensor) -> torch.Tensor:
        h = self.embed(x)
        return h if self.pos is None else h + self.pos[: x.shape[1]]

    @torch.no_grad()
    def attended(self, x: torch.Tensor) -> list[steps.Attended]:
        """Every layer's ``steps.attend`` on x (B, L): its Q, K (rotated, for RoPE), scaled scores and mask."""
        h, out = self._embedded(x), []
        for layer in self.layers:
            out.append(layer.attend(h))
            h, _ = layer(h)
        return out

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        h = self._embedded(x)
        weights = []
        for layer in self.layers:
            h, w = layer(h)
            weights.append(w)
        return self.head(h), weights

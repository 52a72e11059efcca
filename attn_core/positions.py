"""Position schemes, one registry: what each one does, and at which point of attention.

A scheme acts at one of three points (``where``):

- ``embeddings``: a (n, d_model) table added to the token embeddings before attention
  (``table``; the Lab's model trains it when ``learned``);
- ``queries_keys``: Q and K rotated after the projection, before the scores (``rotate``);
- ``scores``: a bias added to the scaled scores, before the mask and the softmax (``bias``).

``steps.attend(..., positions=SCHEMES[name])`` applies the last two; the caller adds the first to
its input (the toy trace, the Lab's model). A new scheme is one ``register(PositionScheme(...))``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch


def sinusoidal(n: int, d_model: int, *, seed: int = 0) -> torch.Tensor:
    """Vaswani et al. 2017: PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(...). (n, d_model)."""
    pos = torch.arange(n, dtype=torch.float32).unsqueeze(1)  # (n, 1)
    i = torch.arange(0, d_model, 2, dtype=torch.float32)  # (ceil(d/2),)
    angle = pos / torch.pow(10000.0, i / d_model)  # (n, ceil(d/2))
    pe = torch.zeros(n, d_model)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return pe


def seeded_table(n: int, d_model: int, *, seed: int) -> torch.Tensor:
    """A seeded random table standing in for learned position embeddings (the toy trace's). (n, d_model)."""
    g = torch.Generator().manual_seed(seed + 1)
    return torch.randn(n, d_model, generator=g)


def trained_start(n: int, d_model: int) -> torch.Tensor:
    """The Lab's learned table before training: N(0, 0.5²) from the default generator (its init order)."""
    return torch.randn(n, d_model) * 0.5


def rope(x: torch.Tensor) -> torch.Tensor:
    """Rotary position embedding (Su et al. 2021): pairs of dimensions rotated by angle p·θ_i. (..., L, d)."""
    L, d = x.shape[-2], x.shape[-1]
    theta = 10000.0 ** (-torch.arange(0, d, 2, dtype=x.dtype) / d)  # (d/2,)
    angle = torch.arange(L, dtype=x.dtype).view(-1, 1) * theta  # (L, d/2)
    cos, sin = angle.cos(), angle.sin()
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).flatten(-2)


def alibi(heads: int, L: int, S: int | None = None) -> torch.Tensor:
    """ALiBi (Press et al. 2022): a bias -m_h·|i - j| added to the scores, slopes m_h = 2^(-8h/H). (H, L, S)."""
    S = L if S is None else S
    slopes = torch.tensor([2 ** (-8 * (h + 1) / heads) for h in range(heads)])
    dist = (torch.arange(L).view(-1, 1) - torch.arange(S).view(1, -1)).abs().float()
    return -slopes.view(-1, 1, 1) * dist


@dataclass(frozen=True)
class PositionScheme:
    name: str
    where: str  # "embeddings", "queries_keys", "scores" or "nowhere"
    paper: str
    table: Callable[..., torch.Tensor] | None = None  # (n, d_model, *, seed) -> (n, d_model), added to the input
    learned: bool = False  # the Lab's model trains the table (starting from ``start``)
    start: Callable[[int, int], torch.Tensor] | None = None  # (n, d_model): the trained table's initial value
    rotate: Callable[[torch.Tensor], torch.Tensor] | None = None  # (..., L, d) -> (..., L, d): Q and K
    bias: Callable[..., torch.Tensor] | None = None  # (heads, L, S) -> (H, L, S): added to the scaled scores
    trace: bool = True  # offered by the toy trace's sidebar (config.POSITIONS); else the Lab's own

    @property
    def even_dims(self) -> bool:
        """Q and K need an even size (rotation pairs dimensions)."""
        return self.rotate is not None

    @property
    def needs_scores(self) -> bool:
        """It acts on the scores, so a variant without a softmax (linear attention) cannot take it."""
        return self.bias is not None


SCHEMES: dict[str, PositionScheme] = {}


def register(scheme: PositionScheme) -> PositionScheme:
    SCHEMES[scheme.name] = scheme
    return scheme


def input_table(name: str, n: int, d_model: int, *, seed: int) -> torch.Tensor:
    """What the scheme adds to the embeddings (zeros when it acts elsewhere or nowhere). (n, d_model)."""
    scheme = SCHEMES[name]
    return scheme.table(n, d_model, seed=seed) if scheme.table is not None else torch.zeros(n, d_model)


register(PositionScheme("none", "nowhere", "no positions: attention alone is blind to order"))
register(PositionScheme("sinusoidal", "embeddings", "Vaswani et al. 2017", table=sinusoidal))
register(
    PositionScheme(
        "learned", "embeddings", "Gehring et al. 2017", table=seeded_table, learned=True, start=trained_start
    )
)
register(PositionScheme("rope", "queries_keys", "Su et al. 2021 (RoFormer)", rotate=rope, trace=False))
register(PositionScheme("alibi", "scores", "Press et al. 2022", bias=alibi, trace=False))

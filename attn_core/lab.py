"""The Attention Lab: a tiny attention model trained live on toy tasks whose ideal pattern is known.

``train(cfg)`` is a generator of ``Snapshot``s (every ``cfg.every`` steps): the losses, held-out
accuracy, every head's weights on a fixed probe example and the gradient norm of W_q/W_k. It is
deterministic for a seed. The attention inside is this package's: the same score functions and
scaling (``steps.score_scale``), masks (``masks.build_mask``) and variants (each kernel's
``weights``, the matrix its efficient path amounts to, which equals it and is differentiable at
these lengths). ``python -m attn_core train ... --json`` prints a run; the Lab page draws one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields, replace

import torch
import torch.nn.functional as F
from torch import nn

from . import masks, steps
from .config import POSITIONS as BASE_POSITIONS
from .config import SCORES, Plain
from .errors import AttentionConfigError
from .kernels import KERNELS
from .masks import MASK_MODES

POSITIONS = (*BASE_POSITIONS, "rope", "alibi")  # the app's positions and two modern ones
LAB_KERNELS = ("full", "sliding_window", "linear_elu", "causal_linear")


# ---------------------------------------------------------------------------- tasks


@dataclass(frozen=True)
class Task:
    name: str
    vocab: int  # token ids 0 .. vocab-1
    length: int  # the default sequence length
    low: int  # the shortest length it makes sense for
    causal: bool  # the task is next-token prediction: queries may not look ahead
    make: Callable  # (generator, n, L) -> x (n, L), y (n, L), scored (n, L) bool
    ideal: Callable  # (x (L,), L) -> (L, L): the pattern that solves it (rows of scored positions sum to 1)
    steps: int  # the step budget its preset uses
    high: int = 32  # the longest length it can build


def _uniform(g, n, L, vocab):
    return torch.randint(0, vocab, (n, L), generator=g)


def _reverse(g, n, L):
    x = _uniform(g, n, L, 10)
    return x, x.flip(-1), torch.ones(n, L, dtype=torch.bool)


def _reverse_ideal(x, L):
    return torch.eye(L).flip(-1)


def _sort(g, n, L):
    x = _uniform(g, n, L, 3)
    return x, x.sort(dim=-1).values, torch.ones(n, L, dtype=torch.bool)


def _sort_ideal(x, L):
    target = x.sort().values
    same = (x.view(1, L) == target.view(L, 1)).float()  # row i: the positions holding the value that goes at i
    return same / same.sum(-1, keepdim=True)


def _shift(g, n, L):
    x = _uniform(g, n, L, 10)
    y = torch.roll(x, 1, dims=-1)
    scored = torch.ones(n, L, dtype=torch.bool)
    scored[:, 0] = False
    return x, y, scored


def _shift_ideal(x, L):
    return torch.diag(torch.ones(L - 1), -1)


_REPEAT_VOCAB = 16


def _repeat_parts(L: int) -> tuple[int, int]:
    """repeat at length L: ``n`` distinct tokens, then a copy of ``m`` of them (a random segment)."""
    m = max(2, L // 3)
    return L - m, m


def _repeat(g, n, L):
    """Induction: L - m distinct random tokens, then a copy of a segment of m of them that starts at a
    random place after a random-length prefix; the task is the next token, scored in the copy (where
    the earlier occurrence of the current token says what comes next). The distance from a token of
    the copy back to its earlier occurrence varies (m to L - m), so no fixed offset solves it: the
    model must find the earlier occurrence of its token and read the token after it."""
    first, m = _repeat_parts(L)
    tokens = torch.stack([torch.randperm(_REPEAT_VOCAB, generator=g)[:first] for _ in range(n)])
    start = torch.randint(0, first - m + 1, (n,), generator=g)
    segment = torch.gather(tokens, 1, start.view(-1, 1) + torch.arange(m).view(1, -1))
    x = torch.cat([tokens, segment], dim=-1)
    y = torch.roll(x, -1, dims=-1)
    scored = torch.zeros(n, L, dtype=torch.bool)
    scored[:, first : L - 1] = True  # in the copy: the next token is the one after the earlier occurrence
    return x, y, scored


def _repeat_ideal(x, L):
    first, _ = _repeat_parts(L)
    ideal = torch.zeros(L, L)
    for t in range(first, L - 1):
        j = next(j for j in range(first) if int(x[j]) == int(x[t]))
        ideal[t, j + 1] = 1.0  # the token after the earlier occurrence of the current one
    return ideal


_KEYS = 8  # recall: keys are 0..7, values 8..15; at most _KEYS distinct pairs, so L <= 2 * _KEYS + 1


def _recall(g, n, L):
    pairs = (L - 1) // 2
    keys = torch.stack([torch.randperm(_KEYS, generator=g)[:pairs] for _ in range(n)])
    values = torch.randint(_KEYS, 2 * _KEYS, (n, pairs), generator=g)
    which = torch.randint(0, pairs, (n,), generator=g)
    x = torch.zeros(n, L, dtype=torch.long)
    x[:, 0 : 2 * pairs : 2], x[:, 1 : 2 * pairs : 2] = keys, values
    x[:, L - 1] = keys[torch.arange(n), which]
    y = torch.zeros(n, L, dtype=torch.long)
    y[:, L - 1] = values[torch.arange(n), which]
    scored = torch.zeros(n, L, dtype=torch.bool)
    scored[:, L - 1] = True
    return x, y, scored


def _recall_ideal(x, L):
    ideal = torch.zeros(L, L)
    pairs = (L - 1) // 2
    j = next(j for j in range(pairs) if int(x[2 * j]) == int(x[L - 1]))
    ideal[L - 1, 2 * j + 1] = 1.0  # the value stored after the matching key
    return ideal


TASKS = {
    t.name: t
    for t in (
        Task("reverse", 10, 8, 2, False, _reverse, _reverse_ideal, 800),
        Task("sort", 3, 6, 2, False, _sort, _sort_ideal, 1500),
        Task("shift", 10, 8, 2, False, _shift, _shift_ideal, 600),
        Task("repeat", _REPEAT_VOCAB, 12, 4, True, _repeat, _repeat_ideal, 600, high=24),
        Task("recall", 2 * _KEYS, 9, 5, False, _recall, _recall_ideal, 2000, high=2 * _KEYS + 1),
    )
}


# ---------------------------------------------------------------------------- settings

LAB_LIMITS = {  # field: (low, high), inclusive
    "length": (2, 32),
    "layers": (1, 2),
    "heads": (1, 8),
    "d_model": (4, 256),
    "d_k": (1, 512),
    "d_v": (1, 256),
    "window": (1, 32),
    "batch": (1, 512),
    "steps": (1, 5000),
    "every": (1, 1000),
    "seed": (0, 2**31 - 1),
}
MAX_DROPOUT = 0.9  # the sidebar's own maximum: every value it offers trains


@dataclass(frozen=True)
class LabConfig(Plain):
    task: str = "reverse"
    length: int = 0  # 0: the task's own
    layers: int = 1
    heads: int = 1
    d_model: int = 32
    d_k: int = 16
    d_v: int = 16
    score: str = "scaled_dot"
    temperature: float = 1.0
    pos: str = "sinusoidal"
    mask: str = "none"
    kernel: str = "full"
    window: int = 2
    dropout: float = 0.0
    mlp: bool = True
    lr: float = 3e-3
    batch: int = 64
    steps: int = 0  # 0: the budget the task's preset uses
    seed: int = 0
    every: int = 25  # a snapshot every this many steps

    def resolved(self) -> LabConfig:
        task = TASKS.get(self.task)
        if task is None:
            return self
        return replace(self, length=self.length or task.length, steps=self.steps or task.steps)


def _range(name: str, value, low, high) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise AttentionConfigError(name, "out_of_range", field=name, value=value, low=low, high=high)
    if not low <= value <= high:
        raise AttentionConfigError(name, "out_of_range", field=name, value=value, low=low, high=high)


def validate_choices(cfg: LabConfig) -> LabConfig:
    """``cfg`` when its choices (task, score, positions, mask, kernel) are known, else an AttentionConfigError."""
    if cfg.kernel not in LAB_KERNELS:
        raise AttentionConfigError("kernel", "lab_kernel", kernel=cfg.kernel, options=", ".join(LAB_KERNELS))
    for name, options in (("task", TASKS), ("score", SCORES), ("pos", POSITIONS)):
        if getattr(cfg, name) not in options:
            value = getattr(cfg, name)
            raise AttentionConfigError(name, "unknown_choice", field=name, value=value, options=", ".join(options))
    if cfg.mask not in MASK_MODES or cfg.mask == "padding":
        options = ", ".join(m for m in MASK_MODES if m != "padding")
        raise AttentionConfigError("mask", "unknown_choice", field="mask", value=cfg.mask, options=options)
    return cfg


def validate(cfg: LabConfig) -> LabConfig:
    """The resolved config, or an AttentionConfigError naming the setting and the fix."""
    c = validate_choices(cfg).resolved()
    task = TASKS[c.task]
    for name, (low, high) in LAB_LIMITS.items():
        if name == "length":
            low, high = max(low, task.low), min(high, task.high)  # the lengths this task can build
        _range(name, getattr(c, name), low, high)
    if not (isinstance(c.lr, float | int) and math.isfinite(c.lr) and 1e-5 <= c.lr <= 1.0):
        raise AttentionConfigError("lr", "lab_lr", value=c.lr)
    if not (math.isfinite(c.temperature) and 0.01 <= c.temperature <= 100):
        raise AttentionConfigError("temperature", "temperature", value=c.temperature)
    if not (math.isfinite(c.dropout) and 0.0 <= c.dropout <= MAX_DROPOUT):
        raise AttentionConfigError("dropout", "lab_dropout", value=c.dropout, high=MAX_DROPOUT)
    kern = KERNELS[c.kernel]
    if c.score == "additive" and kern.dot_product:
        raise AttentionConfigError("kernel", "dot_kernel", kernel=c.kernel)
    if c.pos == "alibi" and not kern.softmax:
        raise AttentionConfigError("pos", "lab_alibi_kernel", kernel=c.kernel)
    if task.causal and c.kernel == "linear_elu":
        raise AttentionConfigError("kernel", "lab_causal_kernel", kernel=c.kernel, task=c.task)
    if c.pos == "rope" and c.d_k % 2:
        raise AttentionConfigError("d_k", "lab_rope_even", d_k=c.d_k)
    return c


MAX_BYTES = 256 * 2**20  # what one Lab run may take on a shared server (its worker holds ~300 MiB more)
VAL_SIZE = 512  # held-out examples


def estimate_bytes(cfg: LabConfig) -> int:
    """The peak memory of a run, estimated before it starts: the larger of a training step (the
    forward's saved tensors, their gradients, the parameters with AdamW's two moments) and the
    held-out evaluation (VAL_SIZE examples at once, no gradients). Counted in float32 from the
    shapes: per layer Q, K, V, the (B, H, L, L) scores through mask, softmax and dropout, the
    additive score's (B, H, L, L, d_k) tanh, the residual, LayerNorm and MLP activations. A test
    checks it against the profiler's measured peak."""
    c = validate_choices(cfg).resolved()
    task = TASKS[c.task]
    H, L, dk, dv, dm = c.heads, c.length, c.d_k, c.d_v, c.d_model

    def activations(B: int, grad: bool) -> int:
        square = B * H * L * L
        per_layer = B * H * L * (2 * dk + dv) * (3 if c.pos == "rope" else 1)  # Q, K, V (rotated: copies)
        per_layer += square * (7 if grad else 3)  # raw, scaled, masked, softmax, nan_to_num, dropout
        if c.score == "additive":
            per_layer += square * dk * (3 if grad else 2) + 2 * B * H * L * dk  # tanh's input and output
        if not KERNELS[c.kernel].softmax:
            per_layer += square * 3 + B * H * L * (dk + dv) * 3  # the L x L matrix its features amount to
        per_layer += B * L * (H * dv * 2 + dm * 8 + (4 * dm * 3 if c.mlp else 0))
        total = per_layer * c.layers + B * L * (dm * 2 + task.vocab * 3)
        return total * (2 if grad else 1)  # the backward pass: a gradient for each saved tensor

    params = parameter_count(c)
    train = activations(c.batch, True) + 4 * params  # weights, gradients, AdamW's two moments
    held = activations(VAL_SIZE, False) + params
    return 4 * max(train, held)


def parameter_count(c: LabConfig) -> int:
    """LabModel's parameters, counted from the settings (a test compares it with the model's own)."""
    vocab = TASKS[c.task].vocab
    H, dk, dv, dm = c.heads, c.d_k, c.d_v, c.d_model
    layer = 2 * H * dk * dm + H * dv * dm + dm * H * dv + 2 * dm
    if c.score == "additive":
        layer += 2 * H * dk * dk + H * dk
    if c.mlp:
        layer += 8 * dm * dm + 5 * dm + 2 * dm
    return vocab * dm + (c.length * dm if c.pos == "learned" else 0) + c.layers * layer + dm * vocab + vocab


def check_memory(cfg: LabConfig, limit: int = MAX_BYTES) -> int:
    """The estimate, or an AttentionConfigError naming it, the limit and what to reduce."""
    need = estimate_bytes(cfg)
    if need > limit:
        c = cfg.resolved()
        facts = dict(need=math.ceil(need / 2**20), limit=limit // 2**20, batch=c.batch, L=c.length, heads=c.heads)
        if c.score == "additive":
            raise AttentionConfigError("batch", "lab_memory_additive", **facts)
        raise AttentionConfigError("batch", "lab_memory", **facts)
    return need


# ---------------------------------------------------------------------------- the model


def rope(x: torch.Tensor) -> torch.Tensor:
    """Rotary position embedding (Su et al. 2021): pairs of dimensions rotated by angle p·θ_i. (..., L, d)."""
    L, d = x.shape[-2], x.shape[-1]
    theta = 10000.0 ** (-torch.arange(0, d, 2, dtype=x.dtype) / d)  # (d/2,)
    angle = torch.arange(L, dtype=x.dtype).view(-1, 1) * theta  # (L, d/2)
    cos, sin = angle.cos(), angle.sin()
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).flatten(-2)


def alibi(heads: int, L: int) -> torch.Tensor:
    """ALiBi (Press et al. 2022): a bias -m_h·|i - j| added to the scores, slopes m_h = 2^(-8h/H). (H, L, L)."""
    slopes = torch.tensor([2 ** (-8 * (h + 1) / heads) for h in range(heads)])
    dist = (torch.arange(L).view(-1, 1) - torch.arange(L).view(1, -1)).abs().float()
    return -slopes.view(-1, 1, 1) * dist


class AttentionLayer(nn.Module):
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

    def weights(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x (B, L, d_model) -> the attention weights (B, H, L, L) and V (B, H, L, d_v)."""
        c = self.c
        L = x.shape[1]
        Q = torch.einsum("blm,hdm->bhld", x, self.W_q)
        K = torch.einsum("blm,hdm->bhld", x, self.W_k)
        V = torch.einsum("blm,hdm->bhld", x, self.W_v)
        if c.pos == "rope":
            Q, K = rope(Q), rope(K)
        scale = steps.score_scale(c.score, c.d_k, c.temperature)
        kern = KERNELS[c.kernel]
        opts = {"window": c.window} if "window" in kern.options else {}
        if kern.softmax:  # full or sparse: this package's scores, the mask (or the variant's pattern), softmax
            if c.score == "additive":
                wq = torch.einsum("bhld,had->bhla", Q, self.W_a)
                uk = torch.einsum("bhsd,had->bhsa", K, self.U_a)
                raw = torch.einsum("bhlsa,ha->bhls", torch.tanh(wq.unsqueeze(3) + uk.unsqueeze(2)), self.v_a)
            else:
                raw = Q @ K.transpose(-2, -1)
            s = raw * scale
            if c.pos == "alibi":
                s = s + alibi(c.heads, L)
            if kern.pattern is not None:
                allowed = kern.pattern(L, L, self.causal, **opts)
            else:
                allowed = masks.build_mask(c.mask, L, L, window=c.window, also_causal=self.causal)
            s = s.masked_fill(~allowed, float("-inf"))
            w = torch.softmax(s, dim=-1).nan_to_num(0.0)
        else:  # linear: the L x L matrix its efficient path amounts to (equal to it; differentiable); no ALiBi
            w = kern.weights(Q, K, causal=self.causal or kern.always_causal, scale=scale, **opts)
        return w, V

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        w, V = self.weights(x)
        if self.training and self.c.dropout > 0:
            w = F.dropout(w, self.c.dropout)
        ctx = (w @ V).transpose(1, 2).flatten(2)  # (B, L, H·d_v)
        x = self.norm1(x + ctx @ self.W_o.T)
        if self.mlp is not None:
            x = self.norm2(x + self.mlp(x))
        return x, w


class LabModel(nn.Module):
    def __init__(self, c: LabConfig):
        super().__init__()
        task = TASKS[c.task]
        self.c = c
        self.embed = nn.Embedding(task.vocab, c.d_model)
        if c.pos == "learned":
            self.pos = nn.Parameter(torch.randn(c.length, c.d_model) * 0.5)
        elif c.pos == "sinusoidal":
            self.register_buffer("pos", steps.sinusoidal_positions(c.length, c.d_model))
        else:
            self.pos = None  # none, or RoPE / ALiBi inside the attention
        self.layers = nn.ModuleList(AttentionLayer(c, task.causal) for _ in range(c.layers))
        self.head = nn.Linear(c.d_model, task.vocab)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        h = self.embed(x)
        if self.pos is not None:
            h = h + self.pos[: x.shape[1]]
        weights = []
        for layer in self.layers:
            h, w = layer(h)
            weights.append(w)
        return self.head(h), weights


# ---------------------------------------------------------------------------- training


@dataclass
class Snapshot:
    step: int
    train_loss: float
    val_loss: float
    val_acc: float
    grad_qk: float  # the gradient norm of every W_q and W_k at the last step
    weights: list = field(default_factory=list)  # per layer: (H, L, L) on the probe example
    status: str = "running"  # running, done, diverged
    train_acc: float = 0.0  # accuracy on the training batches since the last snapshot
    scores: list = field(default_factory=list)  # per layer, per head: {"prev", "induction"} (head_scores)


def _loss(logits, y, scored) -> torch.Tensor:
    return F.cross_entropy(logits[scored], y[scored])


def probe(cfg: LabConfig) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The fixed example whose attention is drawn: the first held-out one (drawn with the whole
    held-out set: a task may draw part of every example before the rest, e.g. repeat's start)."""
    c = validate(cfg)
    x, y, scored = TASKS[c.task].make(torch.Generator().manual_seed(c.seed + 1_000_003), VAL_SIZE, c.length)
    return x[0], y[0], scored[0]


def ideal(cfg: LabConfig) -> torch.Tensor:
    c = validate(cfg)
    return TASKS[c.task].ideal(probe(c)[0], c.length)


SCORED = 128  # held-out examples the heads' detection scores are taken over


def train(cfg: LabConfig, *, val_size: int = VAL_SIZE) -> Iterator[Snapshot]:
    """Train and yield a snapshot every ``cfg.every`` steps and at the end. Deterministic for a seed."""
    c = validate(cfg)
    task = TASKS[c.task]
    torch.manual_seed(c.seed)
    model = LabModel(c)
    opt = torch.optim.AdamW(model.parameters(), lr=c.lr, weight_decay=0.0)
    g = torch.Generator().manual_seed(c.seed + 1)
    xv, yv, sv = task.make(torch.Generator().manual_seed(c.seed + 1_000_003), val_size, c.length)
    qk = [p for layer in model.layers for p in (layer.W_q, layer.W_k)]
    losses: list[float] = []
    hits = seen = 0
    for step in range(1, c.steps + 1):
        model.train()
        x, y, scored = task.make(g, c.batch, c.length)
        logits, _ = model(x)
        loss = _loss(logits, y, scored)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        grad = float(torch.sqrt(sum((p.grad**2).sum() for p in qk if p.grad is not None)))
        losses.append(loss.item())
        hits += int((logits.detach().argmax(-1)[scored] == y[scored]).sum())
        seen += int(scored.sum())
        if not (math.isfinite(losses[-1]) and math.isfinite(grad)):
            yield Snapshot(step, math.nan, math.nan, 0.0, grad, [], "diverged")
            return
        opt.step()
        if step % c.every == 0 or step == c.steps:
            model.eval()
            with torch.no_grad():
                logits, _ = model(xv)
                val_loss = float(_loss(logits, yv, sv))
                val_acc = float((logits.argmax(-1)[sv] == yv[sv]).float().mean())
                _, held = model(xv[:SCORED])
            if not math.isfinite(val_loss):
                yield Snapshot(step, math.nan, math.nan, 0.0, grad, [], "diverged")
                return
            yield Snapshot(
                step,
                sum(losses) / len(losses),
                val_loss,
                val_acc,
                grad,
                [w[0] for w in held],
                "done" if step == c.steps else "running",
                hits / max(seen, 1),
                head_scores(held, xv[:SCORED]),
            )
            losses, hits, seen = [], 0, 0


def detection_patterns(x: torch.Tensor) -> dict[str, torch.Tensor]:
    """TransformerLens's head-detector patterns for token ids x (B, L), each (B, L, L) of 0/1:
    ``prev``: query t on key t - 1; ``induction``: query t on key j + 1 for every earlier j < t - 1
    holding the same token as t (the token after an earlier occurrence of the current token)."""
    B, L = x.shape
    prev = torch.zeros(B, L, L)
    prev[:, 1:, :-1] = torch.eye(L - 1)
    dup = (x.unsqueeze(2) == x.unsqueeze(1)).float().tril(-1)  # key j < t holds t's token
    induction = torch.zeros(B, L, L)
    induction[:, :, 1:] = dup[:, :, :-1]  # shifted one to the right: the key after the duplicate
    return {"prev": prev, "induction": induction.tril(-1)}


def head_scores(weights: list[torch.Tensor], x: torch.Tensor) -> list[list[dict]]:
    """Per layer, per head: TransformerLens's detection score (``mul``: the attention on the pattern
    over all attention, sum(A * P) / sum(A)), taken over the query rows the pattern has a key for
    (so 1.0 means every such query puts all its weight where the pattern says). weights: per layer
    (B, H, L, L); x (B, L)."""
    out = []
    for w in weights:
        layer = []
        for h in range(w.shape[1]):
            a = w[:, h].float()
            scores = {}
            for name, pattern in detection_patterns(x).items():
                rows = pattern.sum(-1, keepdim=True) > 0
                denom = float((a * rows).sum())
                scores[name] = float((a * pattern).sum()) / denom if denom > 0 else 0.0
            if w.shape[1] > 1:  # how far this head's rows are from the other heads' mean (total variation)
                others = (w.sum(1) - w[:, h]) / (w.shape[1] - 1)
                scores["apart"] = float(0.5 * (a - others).abs().sum(-1).mean())
            layer.append(scores)
        out.append(layer)
    return out


def phase_change(curve: list[dict], threshold: float = 0.5) -> int | None:
    """The step at which the induction mechanism forms: the first snapshot whose best head in the
    last layer has an induction score of at least ``threshold`` (None: never)."""
    for p in curve:
        last = (p.get("scores") or [[]])[-1]
        if last and max(h["induction"] for h in last) >= threshold:
            return p["step"]
    return None


def steps_to(curve: list[dict], threshold: float = 0.99) -> int | None:
    """The first step at which held-out accuracy reached ``threshold`` (None: never)."""
    return next((p["step"] for p in curve if p["val_acc"] >= threshold), None)


def run(cfg: LabConfig) -> dict:
    """A whole run as the JSON the CLI prints: config, curve, final, probe, weights."""
    c = validate(cfg)
    curve, last = [], None
    for snap in train(c):
        last = snap
        if snap.status != "diverged":
            curve.append(
                {
                    "step": snap.step,
                    "train_loss": snap.train_loss,
                    "val_loss": snap.val_loss,
                    "val_acc": snap.val_acc,
                    "scores": snap.scores,
                }
            )
    x, y, _ = probe(c)
    diverged = last is not None and last.status == "diverged"
    return {
        "config": c.to_dict(),
        "curve": curve,
        "final": {
            "val_acc": None if diverged else last.val_acc,
            "val_loss": None if diverged else last.val_loss,
            "steps_to_99": steps_to(curve),
            "phase_change": phase_change(curve),
            "scores": curve[-1]["scores"] if curve else [],
            "status": last.status if last else "empty",
            "diverged_at": last.step if diverged else None,
        },
        "probe": {"input": x.tolist(), "target": y.tolist()},
        "weights": [w.tolist() for w in (last.weights if last and not diverged else [])],
    }


# ---------------------------------------------------------------------------- presets

PRESETS = {  # name: (the shared settings, then A's and B's own; the claim they demonstrate)
    "positions": ({"task": "reverse"}, {"pos": "none"}, {"pos": "sinusoidal"}),
    "scaling": ({"task": "reverse", "d_k": 512, "heads": 1, "lr": 1e-3}, {"score": "dot"}, {"score": "scaled_dot"}),
    "induction": ({"task": "repeat", "pos": "learned"}, {"layers": 1}, {"layers": 2}),
    "heads": ({"task": "sort", "d_model": 32}, {"heads": 1, "d_k": 32, "d_v": 32}, {"heads": 4, "d_k": 8, "d_v": 8}),
    "linear": ({"task": "reverse"}, {"kernel": "full"}, {"kernel": "linear_elu"}),
}


def preset(name: str) -> tuple[LabConfig, LabConfig]:
    shared, a, b = PRESETS[name]
    return LabConfig(**shared, **a), LabConfig(**shared, **b)


# ---------------------------------------------------------------------------- CLI


def add_cli(sub) -> None:
    p = sub.add_parser("train", help="train a tiny attention model on a toy task (the Lab page's engine)")
    p.add_argument("--preset", choices=list(PRESETS), help="start from a preset's A or B run (the Lab page's)")
    p.add_argument("--side", choices=["a", "b"], help="with --preset: its A or its B run (default a)")
    p.add_argument("--task", choices=list(TASKS))
    p.add_argument("--length", type=int, help="sequence length (default: the task's)")
    p.add_argument("--layers", type=int)
    p.add_argument("--heads", type=int)
    p.add_argument("--d-model", type=int, dest="d_model")
    p.add_argument("--d-k", type=int, dest="d_k")
    p.add_argument("--d-v", type=int, dest="d_v")
    p.add_argument("--score", choices=SCORES)
    p.add_argument("--temperature", type=float)
    p.add_argument("--pos", choices=POSITIONS)
    p.add_argument("--mask", choices=[m for m in MASK_MODES if m != "padding"])
    p.add_argument("--kernel", choices=LAB_KERNELS)
    p.add_argument("--window", type=int)
    p.add_argument("--dropout", type=float)
    p.add_argument("--no-mlp", action="store_false", dest="mlp", default=None, help="attention only, no MLP")
    p.add_argument("--lr", type=float)
    p.add_argument("--batch", type=int)
    p.add_argument("--steps", type=int, help="training steps (default: the budget the task's preset uses)")
    p.add_argument("--seed", type=int)
    p.add_argument("--every", type=int, help="a snapshot every this many steps")
    p.add_argument(
        "--max-mib",
        type=float,
        default=MAX_BYTES / 2**20,
        dest="max_mib",
        help=f"refuse settings estimated to need more memory than this (default {MAX_BYTES // 2**20}, the page's)",
    )
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print the whole run as one JSON object")
    out.add_argument("--jsonl", action="store_true", help="one JSON line per snapshot as it comes")
    out.add_argument(
        "--serve",
        action="store_true",
        help="a worker: one JSON config per line on stdin; JSON snapshot lines, then an end line, per config",
    )


def config_from_args(args) -> LabConfig:
    """The flags as a LabConfig: a preset's side first (``--preset NAME --side a|b``), then every flag given."""
    base = LabConfig()
    if getattr(args, "preset", None) is not None:
        base = preset(args.preset)[0 if (args.side or "a") == "a" else 1]
    elif getattr(args, "side", None) is not None:
        raise AttentionConfigError("side", "lab_side_alone", options=", ".join(PRESETS))
    names = [f.name for f in fields(LabConfig)]
    return replace(base, **{n: getattr(args, n) for n in names if getattr(args, n, None) is not None})


def snapshot_dict(s: Snapshot) -> dict:
    return {
        "step": s.step,
        "train_loss": None if math.isnan(s.train_loss) else s.train_loss,
        "val_loss": None if math.isnan(s.val_loss) else s.val_loss,
        "val_acc": s.val_acc,
        "grad_qk": s.grad_qk if math.isfinite(s.grad_qk) else None,
        "weights": [w.tolist() for w in s.weights],
        "status": s.status,
        "train_acc": s.train_acc,
        "scores": s.scores,
    }


def cmd_train(args) -> int:
    import sys

    torch.set_num_threads(1)  # a tiny model gains nothing from more threads; a shared server keeps the rest
    if args.serve:
        return serve(sys.stdin, sys.stdout)
    cfg = validate(config_from_args(args))
    if not (math.isfinite(args.max_mib) and 0 < args.max_mib < 2**40):
        raise AttentionConfigError("max_mib", "max_mib", value=args.max_mib)
    need = check_memory(cfg, int(args.max_mib * 2**20))
    try:
        return _train_out(cfg, args)
    except (MemoryError, RuntimeError) as err:  # the allocator refused: say so in one line, with the estimate
        if not isinstance(err, MemoryError) and "alloc" not in str(err).lower() and "memory" not in str(err).lower():
            raise
        raise AttentionConfigError(
            "batch", "lab_out_of_memory", need=math.ceil(need / 2**20), batch=cfg.batch, L=cfg.length
        ) from None


def _train_out(cfg: LabConfig, args) -> int:
    import json
    import sys

    if args.jsonl:
        for snap in train(cfg):
            print(json.dumps(snapshot_dict(snap)), flush=True)
        return 0
    result = run(cfg)
    if args.json:
        print(json.dumps(result))
        return 0
    for p in result["curve"]:
        print(
            f"step {p['step']:5d}  train {p['train_loss']:.4f}  held-out {p['val_loss']:.4f}  acc {p['val_acc']:.3f}"
        )
    final = result["final"]
    if final["status"] == "diverged":
        print(
            f"diverged at step {final['diverged_at']}: the loss became NaN; lower the learning rate", file=sys.stderr
        )
        return 1
    reached = final["steps_to_99"]
    print(
        f"held-out accuracy {final['val_acc']:.3f}; 99 % {'reached at step ' + str(reached) if reached else 'not reached'}"
    )
    return 0


def serve(inp, out) -> int:
    """The Lab page's worker: torch is imported once, then run after run (a fresh process per run
    cost ~2 s of imports, more than a whole preset run takes to train)."""
    import json

    for line in inp:
        if not line.strip():
            continue
        try:
            cfg = validate(LabConfig.from_dict(json.loads(line)))
            need = check_memory(cfg)
            try:
                for snap in train(cfg):
                    out.write(json.dumps(snapshot_dict(snap)) + "\n")
                    out.flush()
            except (MemoryError, RuntimeError) as err:  # the allocator refused (a tighter limit than estimated)
                if not isinstance(err, MemoryError) and "alloc" not in str(err).lower():
                    raise
                raise AttentionConfigError(
                    "batch", "lab_out_of_memory", need=math.ceil(need / 2**20), batch=cfg.batch, L=cfg.length
                ) from None
            out.write(json.dumps({"end": "ok"}) + "\n")
        except AttentionConfigError as err:
            out.write(json.dumps({"end": "error", "message": str(err), "code": err.code, "params": err.params}) + "\n")
        except (ValueError, TypeError) as err:
            out.write(json.dumps({"end": "error", "message": str(err)}) + "\n")
        out.flush()
    return 0

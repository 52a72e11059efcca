"""The Lab's settings: ``LabConfig``, its limits and checks, and a run's memory estimated before it starts."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..config import Plain
from ..errors import AttentionConfigError
from ..kernels import KERNELS
from ..knobs import KNOBS, LAB_KERNELS, Beyond, Live, in_context, limits
from ..positions import SCHEMES
from .tasks import TASKS

POSITIONS = KNOBS["pos"].span("lab").choices  # the app's (none, sinusoidal, learned) and rope, alibi
OWN_LIMITS = {"length": (2, 32), "layers": (1, 2), "batch": (1, 512), "steps": (1, 5000), "every": (1, 1000)}
# field: (low, high), inclusive: the Lab's own, then the whole-number knobs' Lab spans (registered later too)
LAB_LIMITS = Live(lambda: {**OWN_LIMITS, **limits("lab")})
MAX_DROPOUT = KNOBS["dropout"].span("lab").high  # the sidebar's own maximum: every value it offers trains
# The fields a LabConfig shares with the trace's config.Settings (every knob with a Lab span): the same names, types
# and meanings (the defaults differ: the Lab's suit a model that trains). The Lab page takes them from the sidebar.
SHARED = Live(lambda: in_context("lab"))  # read as the names
_D = {name: k.span("lab").default for name, k in in_context("lab").items()}  # the Lab's defaults, for the fields


@dataclass(frozen=True)
class LabConfig(Plain, Beyond):
    task: str = "reverse"
    length: int = 0  # 0: the task's own
    layers: int = 1
    heads: int = _D["heads"]
    d_model: int = _D["d_model"]
    d_k: int = _D["d_k"]
    d_v: int = _D["d_v"]
    score: str = _D["score"]
    temperature: float = _D["temperature"]
    pos: str = _D["pos"]
    mask: str = _D["mask"]
    kernel: str = _D["kernel"]
    window: int = _D["window"]
    dropout: float = _D["dropout"]
    mlp: bool = True
    lr: float = 3e-3
    batch: int = 64
    steps: int = 0  # 0: the budget the task's preset uses
    seed: int = _D["seed"]
    every: int = 25  # a snapshot every this many steps
    # knobs registered beyond these fields (attn_core.knobs), as sorted (name, value) pairs
    added: tuple = ()

    BEYOND, CONTEXT = "added", "lab"  # (class attributes, not fields) Beyond's value() and with_values()

    def __post_init__(self) -> None:
        self._sort_beyond()

    def to_dict(self) -> dict:
        """Its fields (``added`` only when a registered dimension is set: the JSON is as it was)."""
        data = super().to_dict()
        if not self.added:
            del data["added"]
        return data

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
    """``cfg`` when its choices (task, kernel, score, mask, positions) are known, else an AttentionConfigError."""
    if cfg.kernel not in LAB_KERNELS:
        raise AttentionConfigError("kernel", "lab_kernel", kernel=cfg.kernel, options=", ".join(LAB_KERNELS))
    if cfg.task not in TASKS:
        raise AttentionConfigError("task", "unknown_choice", value=cfg.task, options=", ".join(TASKS))
    for name, _ in cfg.added:
        if name not in SHARED:
            raise AttentionConfigError("added", "unknown_choice", value=name, options=", ".join(SHARED))
    for name, d in in_context("lab").items():
        if d.type == "choice" and name != "kernel":
            d.check(cfg.value(name), "lab")
    return cfg


def validate(cfg: LabConfig) -> LabConfig:
    """The resolved config, or an AttentionConfigError naming the setting and the fix."""
    c = validate_choices(cfg).resolved()
    task = TASKS[c.task]
    for name, (low, high) in LAB_LIMITS.items():
        if name == "length":
            low, high = max(low, task.low), min(high, task.high)  # the lengths this task can build
        _range(name, c.value(name) if name in KNOBS else getattr(c, name), low, high)
    if not (isinstance(c.lr, float | int) and math.isfinite(c.lr) and 1e-5 <= c.lr <= 1.0):
        raise AttentionConfigError("lr", "lab_lr", value=c.lr)
    for name, d in in_context("lab").items():
        if d.type in ("float", "bool"):
            d.check(c.value(name), "lab")
    kern = KERNELS[c.kernel]
    if c.score == "additive" and kern.dot_product:
        raise AttentionConfigError("kernel", "dot_kernel", kernel=c.kernel)
    scheme = SCHEMES[c.pos]
    if scheme.needs_scores and not kern.softmax:
        raise AttentionConfigError("pos", "lab_alibi_kernel", kernel=c.kernel)
    if task.causal and c.kernel == "linear_elu":
        raise AttentionConfigError("kernel", "lab_causal_kernel", kernel=c.kernel, task=c.task)
    if scheme.even_dims and c.d_k % 2:
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
        per_layer = B * H * L * (2 * dk + dv) * (3 if SCHEMES[c.pos].rotate else 1)  # Q, K, V (rotated: copies)
        per_layer += square * (7 if grad else 3)  # raw, scaled, masked, softmax, empty rows filled, dropout
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
    return vocab * dm + (c.length * dm if SCHEMES[c.pos].learned else 0) + c.layers * layer + dm * vocab + vocab


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

"""Training: ``train(cfg)`` yields snapshots; the heads' detection scores; ``run`` is the CLI's JSON."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from ..kernels import KERNELS
from ..why.qkmap import qk_map
from .config import VAL_SIZE, LabConfig, validate
from .model import LabModel
from .tasks import TASKS


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
    qk: list = field(default_factory=list)  # per layer, per head: the probe's query-key map (queries_keys)


def queries_keys(model: LabModel, x: torch.Tensor) -> list[list[dict]]:
    """Per layer, per head, for the probe example x (L,): its query-key map (``why.qkmap.qk_map`` of the queries,
    keys, scaled scores and mask that enter the softmax) as plain numbers: ``queries`` and ``keys`` (L, 2),
    ``method``, ``explained``, ``correlation``, ``d`` (d_k), ``q_norm`` and ``k_norm`` (each vector's norm). Two
    points a token, whatever d_k: a snapshot stays small. Empty for a kernel without a softmax of dot-product scores
    (its weights are not a softmax of q · k)."""
    c = model.c
    if not KERNELS[c.kernel].softmax or c.score == "additive":
        return []
    model.eval()
    out = []
    for a in model.attended(x[None]):
        heads = []
        for h in range(a.Q.shape[1]):
            m = qk_map(a.Q[0, h], a.K[0, h], a.scaled[0, h], a.mask)
            heads.append(
                {
                    "queries": m.queries.tolist(),
                    "keys": m.keys.tolist(),
                    "method": m.method,
                    "explained": m.explained,
                    "correlation": m.correlation,
                    "d": int(a.Q.shape[-1]),
                    "q_norm": a.Q[0, h].norm(dim=-1).tolist(),  # before the map's scaling: what colour by norm shows
                    "k_norm": a.K[0, h].norm(dim=-1).tolist(),
                }
            )
        out.append(heads)
    model.train()
    return out


def _loss(logits, y, scored) -> torch.Tensor:
    return F.cross_entropy(logits[scored], y[scored])


def probe(cfg: LabConfig) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The fixed example whose attention is drawn: the first held-out one (drawn with the whole
    held-out set: a task may draw part of every example before the rest, e.g. repeat's start). Copies: the
    Lab page asks for it on every rerun, and the held-out set is made once per task, seed and length."""
    c = validate(cfg)
    return tuple(part.clone() for part in _probe(c.task, c.seed, c.length))


@functools.lru_cache(maxsize=64)
def _probe(task: str, seed: int, length: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    x, y, scored = TASKS[task].make(torch.Generator().manual_seed(seed + 1_000_003), VAL_SIZE, length)
    return x[0].clone(), y[0].clone(), scored[0].clone()  # not views: the other 511 examples are let go


def ideal(cfg: LabConfig) -> torch.Tensor:
    c = validate(cfg)
    return TASKS[c.task].ideal(probe(c)[0], c.length)


SCORED = 128  # held-out examples the heads' detection scores are taken over


@torch.no_grad()
def _evaluate(model: LabModel, xv, yv, sv) -> tuple[float, float, list]:
    """The held-out loss and accuracy on the scored positions, and the attention of the first ``SCORED`` examples."""
    model.eval()
    logits, _ = model(xv)
    val_loss = float(_loss(logits, yv, sv))
    val_acc = float((logits.argmax(-1)[sv] == yv[sv]).float().mean())
    _, held = model(xv[:SCORED])
    return val_loss, val_acc, held


def train(
    cfg: LabConfig, *, val_size: int = VAL_SIZE, between: Callable[[], None] | None = None
) -> Iterator[Snapshot]:
    """Train and yield a snapshot every ``cfg.every`` steps and at the end. Deterministic for a seed.
    ``between``: called before each step (the Lab's worker holds a paused run there)."""
    c = validate(cfg)
    task = TASKS[c.task]
    torch.manual_seed(c.seed)
    model = LabModel(c)
    # torch's multi-tensor AdamW: the same snapshots, bit for bit on this machine, for every preset's two runs, in
    # 10 % less CPU (the per-parameter loop is most of a step for these small models; lab_cpu.txt)
    opt = torch.optim.AdamW(model.parameters(), lr=c.lr, weight_decay=0.0, foreach=True)
    g = torch.Generator().manual_seed(c.seed + 1)
    xv, yv, sv = task.make(torch.Generator().manual_seed(c.seed + 1_000_003), val_size, c.length)
    x_probe = probe(c)[0]
    qk = [p for layer in model.layers for p in (layer.W_q, layer.W_k)]
    losses: list[float] = []
    hits = seen = 0
    for step in range(1, c.steps + 1):
        if between is not None:
            between()
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
            val_loss, val_acc, held = _evaluate(model, xv, yv, sv)
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
                queries_keys(model, x_probe),
            )
            losses, hits, seen = [], 0, 0


def detection_patterns(x: torch.Tensor) -> dict[str, torch.Tensor]:
    """TransformerLens's head-detector patterns for token ids x (B, L), each (B, L, L) of 0/1:
    ``prev``: query t on key t - 1; ``induction``: query t on key j + 1 for every earlier j < t - 1
    holding the same token as t (the token after an earlier occurrence of the current token); ``first``: every
    query t >= 1 on key 0 (a sink, Gu et al. 2025)."""
    B, L = x.shape
    prev = torch.zeros(B, L, L)
    prev[:, 1:, :-1] = torch.eye(L - 1)
    dup = (x.unsqueeze(2) == x.unsqueeze(1)).float().tril(-1)  # key j < t holds t's token
    induction = torch.zeros(B, L, L)
    induction[:, :, 1:] = dup[:, :, :-1]  # shifted one to the right: the key after the duplicate
    first = torch.zeros(B, L, L)
    first[:, 1:, 0] = 1.0  # every query after the first on key 0: an attention sink
    return {"prev": prev, "induction": induction.tril(-1), "first": first}


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

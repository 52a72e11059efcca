"""The Vision page's training runs: the Lab's runs (``explorer.lab.runs``) for a ``VisionConfig``.

The same machinery: a run trains in a worker process (``python -m attn_core train --serve``, asked with a
``{"vision": {...}}`` line) at the lowest CPU priority; identical settings are one run shared by every session;
Pause holds the worker between two training steps and gives its slot back, Play queues it again, Step runs it to
its next snapshot; a run nobody watches is stopped. The trainings at once are bounded together with the Lab's (one
set of slots) and the idle workers are the Lab's (one pool: a worker trains either kind). A snapshot keeps the
model's weights as small float tensors here (never in session state); the page rebuilds the model from them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch

from attn_core import AttentionConfigError
from attn_core.vision.model import VisionConfig
from explorer.lab.runs import RUNS, Runs


@dataclass
class VisionSnap:
    step: int
    loss: float
    val_acc: float
    val_n: int
    status: str  # "running", or "done" at the last step
    state: dict  # the model's state_dict: name -> float tensor

    @property
    def nbytes(self) -> int:
        return sum(v.numel() * v.element_size() for v in self.state.values()) + 200


class VisionRuns(Runs):
    """The Vision page's runs, on the Lab's slots and workers (see the module's docstring)."""

    def __init__(self, lab: Runs = RUNS) -> None:
        super().__init__()
        self.name = "vision-run"
        self.slots, self.workers = lab.slots, lab.workers

    def resolve(self, cfg: VisionConfig) -> VisionConfig:
        if not isinstance(cfg, VisionConfig):
            raise AttentionConfigError("model", "unknown_choice", value=type(cfg).__name__, options="VisionConfig")
        cfg.check()
        return cfg

    def admit(self, cfg: VisionConfig) -> None:
        """Nothing to refuse: ~20k parameters and a batch of 64 images of 8 × 8 pixels need a few MiB."""

    def request(self, cfg: VisionConfig) -> dict:
        return {"vision": asdict(cfg)}

    def snap(self, item: dict) -> VisionSnap:
        state = {k: torch.tensor(v, dtype=torch.float32) for k, v in item.pop("state").items()}
        return VisionSnap(state=state, **item)


VISION_RUNS = VisionRuns()

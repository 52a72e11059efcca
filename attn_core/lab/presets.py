"""The Lab's presets: an A/B pair each, the claim it demonstrates measured in benchmarks/lab_presets.py."""

from __future__ import annotations

from .config import LabConfig

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

"""The Attention Lab: a tiny attention model trained live on toy tasks whose ideal pattern is known.

``train(cfg)`` is a generator of ``Snapshot``s (every ``cfg.every`` steps): the losses, held-out
accuracy, every head's weights on a fixed probe example and the gradient norm of W_q/W_k. It is
deterministic for a seed. The attention inside is the one Step by step explains, ``steps.attend``
(scores, scaling, masks, position schemes from ``attn_core.positions``), and the variants' (each
kernel's pattern, or for a linear one its ``weights``: the matrix its efficient path amounts to).
``python -m attn_core train ... --json`` prints a run; the Lab page draws one.

Modules: ``tasks`` (the toy tasks), ``config`` (LabConfig, its checks, the memory estimate),
``model`` (LabModel), ``training`` (train, head scores, run), ``presets``, ``cli`` (the ``train``
subcommand and the page's worker loop). Every name below is importable from ``attn_core.lab``.
"""

from .. import masks, steps
from ..positions import alibi, rope
from .cli import add_cli, cmd_train, config_from_args, serve, snapshot_dict, train_flags
from .config import (
    LAB_KERNELS,
    LAB_LIMITS,
    MAX_BYTES,
    MAX_DROPOUT,
    POSITIONS,
    SHARED,
    VAL_SIZE,
    LabConfig,
    check_memory,
    estimate_bytes,
    parameter_count,
    validate,
    validate_choices,
)
from .model import AttentionLayer, LabModel
from .presets import PRESETS, preset
from .tasks import TASKS, Task
from .training import (
    SCORED,
    Snapshot,
    _loss,
    detection_patterns,
    head_scores,
    ideal,
    phase_change,
    probe,
    run,
    steps_to,
    train,
)

__all__ = [
    "LAB_KERNELS",
    "LAB_LIMITS",
    "MAX_BYTES",
    "MAX_DROPOUT",
    "POSITIONS",
    "PRESETS",
    "SCORED",
    "SHARED",
    "TASKS",
    "VAL_SIZE",
    "AttentionLayer",
    "LabConfig",
    "LabModel",
    "Snapshot",
    "Task",
    "_loss",
    "add_cli",
    "alibi",
    "check_memory",
    "cmd_train",
    "config_from_args",
    "detection_patterns",
    "estimate_bytes",
    "head_scores",
    "ideal",
    "masks",
    "parameter_count",
    "phase_change",
    "preset",
    "probe",
    "rope",
    "run",
    "serve",
    "snapshot_dict",
    "steps",
    "steps_to",
    "train",
    "train_flags",
    "validate",
    "validate_choices",
]

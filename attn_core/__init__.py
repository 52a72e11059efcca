"""attn_core: the attention engine of Attention Explorer. Pure PyTorch, nothing about display.

Data flows one way: a plain ``Settings`` -> ``run_trace`` -> a ``Trace`` of named intermediates.
The efficient kernels live in ``kernels.KERNELS``; the benchmark in ``bench``.
"""

from .config import Settings, validate
from .errors import AttentionConfigError
from .kernels import KERNELS, effective_weights, run_kernel
from .trace import Trace, param_count, run_trace

__all__ = [
    "KERNELS",
    "AttentionConfigError",
    "Settings",
    "Trace",
    "effective_weights",
    "param_count",
    "run_kernel",
    "run_trace",
    "validate",
]

"""Time and memory of the kernels in ``KERNELS`` on the best device present, honestly.

- ``devices``: which device (``best_device``, ``available_devices``, ``check_device``), its free memory, syncing it.
- ``timing``: every kernel is warmed at every shape until its calls are steady (``warm_up``), then timed with the
  device synchronised: at least 5 samples (``time_fn``), the median and the interquartile range; a row whose spread
  is large is flagged and left out of the fitted slopes and crossovers (``trustworthy``). Memory: CUDA
  ``max_memory_allocated`` after ``reset_peak_memory_stats``; CPU the profiler's allocation events (peak of the
  running total during one call); MPS the analytic estimate, labelled as such.
- ``sweeping``: the sweep over kernels and L for one ``Shape``, one ``Row`` each, its CSV; before each run its memory
  is estimated and a run that would not fit the budget is skipped with the reason; an out-of-memory error becomes
  a row.
- ``analysis``: what the rows say (slopes, baseline, crossovers, share of matmul, verdict): pure functions.
- ``cli``: ``python -m attn_core bench`` (also ``python -m attn_core.bench``).

Everything the modules define is importable from here, as it was from the single module before. (The sweep's
module is named ``sweeping`` so that ``attn_core.bench.sweep`` stays the function.)
"""

from . import analysis, devices, timing  # the modules, for attn_core.bench.devices.X and the like
from .analysis import (
    Analysis,
    analyse,
    baseline,
    crossover,
    crossovers,
    fit_range,
    fit_slope,
    matmul_share,
    noisy_rows,
    projection_params,
    series,
    slopes,
    theory_curves,
    verdict,
)
from .cli import add_cli, cmd_bench
from .devices import available_devices, best_device, check_device, device_info, free_bytes, synchronize
from .sweeping import (
    BUDGET_FRACTION,
    CSV_COLUMNS,
    DEFAULT_KERNELS,
    DEFAULT_LENGTHS,
    DTYPES,
    SWEEP_LOCK,
    Row,
    Shape,
    SweepConfig,
    estimate_bytes,
    estimate_flops,
    exclusive_sweep,
    fields_of_shape,
    format_table,
    replace_causal,
    rows_to_csv,
    run_one,
    shape_options,
    sweep,
    validate_sweep,
)
from .timing import MIN_SAMPLES, NOISY, matmul_gflops, peak_bytes_cpu, peak_bytes_cuda, time_fn, trustworthy, warm_up

__all__ = [
    "BUDGET_FRACTION",
    "CSV_COLUMNS",
    "DEFAULT_KERNELS",
    "DEFAULT_LENGTHS",
    "DTYPES",
    "MIN_SAMPLES",
    "NOISY",
    "SWEEP_LOCK",
    "Analysis",
    "Row",
    "Shape",
    "SweepConfig",
    "add_cli",
    "analyse",
    "analysis",
    "available_devices",
    "baseline",
    "best_device",
    "check_device",
    "cmd_bench",
    "crossover",
    "crossovers",
    "device_info",
    "devices",
    "estimate_bytes",
    "estimate_flops",
    "exclusive_sweep",
    "fields_of_shape",
    "fit_range",
    "fit_slope",
    "format_table",
    "free_bytes",
    "matmul_gflops",
    "matmul_share",
    "noisy_rows",
    "peak_bytes_cpu",
    "peak_bytes_cuda",
    "projection_params",
    "replace_causal",
    "rows_to_csv",
    "run_one",
    "series",
    "shape_options",
    "slopes",
    "sweep",
    "synchronize",
    "theory_curves",
    "time_fn",
    "timing",
    "trustworthy",
    "validate_sweep",
    "verdict",
    "warm_up",
]

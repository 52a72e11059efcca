"""A variant's own steps in the notebook, from its spec (``Kernel.notebook``: its registration), and the check that
refuses a view this package cannot write: too big, or a variant whose spec gives no notebook steps, or steps that
are not its stages. No variant is named here: a variant registered later exports as one registered here does."""

from __future__ import annotations

from ..errors import AttentionConfigError
from ..kernels import KERNELS, kernel_options
from ..trace import Trace, kernel_settings
from .tensors import app_tensors, check_size


def _refused(t: Trace) -> AttentionConfigError:
    return AttentionConfigError("kernel", "notebook_variant", kernel=t.settings.kernel)


def variant_code(t: Trace) -> tuple[tuple[str, str], ...]:
    """(stage key, code) of the variant's own steps, from its spec, for this view's options; none when the
    variant has none (full attention, or a softmax kernel without steps of its own)."""
    kern = KERNELS[t.settings.kernel]
    if kern.notebook is None:
        return ()
    options = kernel_options(kern, **kernel_settings(t.settings))
    return tuple(kern.notebook.cells(t.settings.causal or kern.always_causal, **options))


def pattern_code(t: Trace) -> str | None:
    """A sparse variant's pattern as the notebook's (L, S) mask expression (None for a variant without one)."""
    kern = KERNELS[t.settings.kernel]
    if kern.pattern is None or kern.notebook is None or kern.notebook.mask is None:
        return None
    return kern.notebook.mask(**kernel_options(kern, **kernel_settings(t.settings)))


def check_exportable(t: Trace) -> None:
    """Raise ``AttentionConfigError`` if this view cannot be exported: too many numbers to carry, or a variant
    whose spec does not give the notebook its steps (its pattern, its stages in their order, or the matrix it
    amounts to when that is not a softmax): refused, never wrong."""
    check_size(app_tensors(t))
    kern = KERNELS.get(t.settings.kernel)
    if kern is None or (kern.pattern is not None and pattern_code(t) is None):
        raise _refused(t)
    keys = [key for key, _ in variant_code(t)]
    if t.variant is not None:
        if keys != [st.key for st in t.variant.stages]:
            raise _refused(t)
    elif not kern.softmax and "amounts_to" not in keys:  # the output cell reads what the variant amounts to
        raise _refused(t)

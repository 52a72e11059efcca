"""The pages' own controls that a link carries (``PAGE``); each page narrows them to its run."""

from __future__ import annotations

from attn_core.config import LIMITS
from attn_core.tensors import URL_STEPS
from explorer.controls.control import Control

COLOURS = ("position", "token", "norm")  # the query-key map: colour by
STEPS = URL_STEPS  # the URL's ?step= values, from the one table of tensor names
RM_STEPS = tuple(f"rm_{step}" for step in URL_STEPS[1:])  # the Real model page's (no tokens step)
_HEAD = LIMITS["heads"][1] - 1
# presenter mode's walk over a page's sections, in the page's order (explorer.controls.present.parts)
NT_PARTS = ("dist", "positions", "generate", "lens", "heads", "copy")
VI_PARTS = ("patches", "windows", "trained", "upload")
RM_PARTS = ("overview", "compare", "apart")  # the query–key map and "Why this weight?" stay off the walk


def _lab_rows() -> tuple[Control, ...]:
    from attn_core.lab import LAB_LIMITS, PRESETS, TASKS

    def lim(name: str) -> dict:
        low, high = LAB_LIMITS[name]
        return {"low": low, "high": high}

    return (
        Control("lab_task", "choice", "reverse", options=tuple(TASKS), fmt="lab.task."),
        Control("lab_length", "int", 8, **lim("length")),  # the default: the task's own, passed when drawn
        Control("lab_layers", "int", 1, **lim("layers")),
        Control("lab_pos", "choice", "sidebar", options=("sidebar", "rope", "alibi"), fmt="lab.pos."),
        Control("lab_mlp", "switch", True),
        Control("lab_lr", "float", 3e-3, low=1e-5, high=1.0, step=1e-4),
        Control("lab_batch", "int", 64, **lim("batch")),
        Control("lab_steps", "int", 800, **lim("steps")),  # the default: the task's budget, passed when drawn
        Control("lab_b", "choice", "off", options=("off", *PRESETS), fmt="lab.b."),
    )


PAGE = {  # the pages' own controls that a link carries; each page narrows them to its run
    c.name: c
    for c in (
        Control("focus", "choice", 1),  # options: this sentence's positions
        Control("head_steps", "int", 0, low=0, high=_HEAD, title="head"),
        Control("step", "radio", "st_output", options=STEPS, fmt=""),
        Control("cross_head", "int", 0, low=0, high=_HEAD, title="head"),
        Control("model", "choice", "", title="rm_model"),  # the four model pages' one picker: the offered models
        Control("rm_pad", "int", 0, low=0, high=512),
        Control("rm_layer", "int", 0, low=0, high=63),
        Control("rm_head", "int", 0, low=0, high=63, title="head"),
        Control("rm_step", "radio", "rm_st_output", options=RM_STEPS, fmt="", title="step"),
        Control("rm_why", "switch", False, title="why.show"),
        Control("rm_query", "choice", 1, title="why.query"),  # options: this sentence's positions
        Control("rm_key", "choice", 0, title="why.key"),
        Control("predict", "switch", False),
        Control("nt_part", "radio", NT_PARTS[0], options=NT_PARTS, fmt="", title="present_part"),
        Control("vi_part", "radio", VI_PARTS[0], options=VI_PARTS, fmt="", title="present_part"),
        Control("rm_part", "radio", RM_PARTS[0], options=RM_PARTS, fmt="", title="present_part"),
        Control("vi_model", "radio", "vit", options=("vit", "swin"), fmt="vision.model.", title="vision.kind"),
        Control("vi_patch", "choice", 2, options=(1, 2, 4), fmt="", title="vision.patch"),
        Control("vi_window", "choice", 2, options=(1, 2, 4, 8), fmt="", title="vision.window"),
        Control("vi_shift", "switch", True, title="vision.shift"),
        Control("vi_compare", "switch", False, title="vision.compare"),
        Control("vi_image", "int", 0, low=0, high=359, title="vision.image"),
        Control("vi_query", "choice", 0, title="vision.query"),  # options: this grid's patches
        Control("va_gap", "float", 2.0, low=0.0, high=10.0, step=0.5),  # Variants: dispersion's score gap Δ
        Control("va_adaptive", "switch", False),  # Variants: the adaptive temperature's curve beside softmax's
        # the query-key map's colouring (Step by step, Real model), and the probe set's points on it (Real model)
        Control("qk_colour", "radio", "position", options=COLOURS, fmt="qk_colour.", title="qk_colour_by"),
        Control("rm_qk_probes", "switch", False, title="qk_probes"),
        # a minimal pair on the model pages (explorer.model.pair_view): a curated pair's id or "own" (the page's
        # sentence as A, pair_b as B); options: the pairs that suit the model. pair_head: "layer:head".
        Control("pair", "choice", "", title="mp.pair"),
        Control("pair_b", "text", "", title="mp.b"),
        Control("pair_head", "choice", "", title="mp.head"),
        *_lab_rows(),
    )
}

"""The Lab's configuration and the controls that hold it: one table, read both ways.

A ``LabConfig`` takes most of its fields from the shared sidebar (the dimensions, the score, the
variant, the seed...) and the rest from the Lab page's own controls (task, length, layers, the
positional encoding when it is the Lab's own, MLP, learning rate, batch, steps). ``from_controls``
builds the config from both; ``to_controls`` is a preset applied: the session values that make
the sidebar and the page show that config. Fields only read (``READ_ONLY``: the knobs whose Lab span says
``read_only``) keep the sidebar's value, brought into the Lab's range, when a preset is applied: the seed (the
command line under the page names it) and the window (the Lab's limit is lower than the sidebar's).
"""

from __future__ import annotations

from attn_core.config import Settings
from attn_core.knobs import Live, in_context
from attn_core.lab import LAB_LIMITS, SHARED, LabConfig

SIDEBAR = Live(lambda: {f: v for f, v in SHARED.items() if f != "pos"})  # pos: the sidebar's or the Lab's own
READ_ONLY = Live(lambda: {f: k for f, k in in_context("lab").items() if k.lab.read_only})  # never written by a preset
PAGE = {  # LabConfig field -> the Lab page's control (explorer.controls.PAGE)
    "task": "lab_task",
    "length": "lab_length",
    "layers": "lab_layers",
    "mlp": "lab_mlp",
    "lr": "lab_lr",
    "batch": "lab_batch",
    "steps": "lab_steps",
}
SIDEBAR_POS = ("none", "sinusoidal", "learned")  # the sidebar's positional encodings; RoPE and ALiBi are the Lab's


def from_controls(s: Settings, page: dict) -> LabConfig:
    """The config the sidebar's settings ``s`` and the page's control values ``page`` (by control
    name, ``lab_pos`` included) describe."""
    shared = {f: s.option(f) for f in SIDEBAR}  # a knob registered later too (Settings.extra)
    for f in (f for f in READ_ONLY if f in LAB_LIMITS):  # into the Lab's range (the sidebar's window goes further)
        low, high = LAB_LIMITS[f]
        shared[f] = min(max(shared[f], low), high)
    own = {f: page[key] for f, key in PAGE.items()}
    pos = s.pos if page["lab_pos"] == "sidebar" else page["lab_pos"]
    return LabConfig(**own, pos=pos).with_values(**shared)


def to_controls(cfg: LabConfig) -> dict:
    """The session values (by control name) that show ``cfg`` in the sidebar and on the page."""
    values = {f: cfg.value(f) for f in SIDEBAR if f not in READ_ONLY and f != "dropout"}
    values |= {"d_q": cfg.d_k, "layout": "tutorial", "dropout_on": cfg.dropout > 0}
    if cfg.dropout > 0:
        values["dropout"] = cfg.dropout
    values |= {key: getattr(cfg, f) for f, key in PAGE.items()}
    if cfg.pos in SIDEBAR_POS:
        values["pos"], values["lab_pos"] = cfg.pos, "sidebar"
    else:
        values["lab_pos"] = cfg.pos
    return values


def in_words(values: dict) -> str:
    """Settings of a config (a preset's B against its A) named as the controls that hold them name them, in the UI's
    language ("Positional encoding = Sinusoidal"), never by the config's own field names ("pos = sinusoidal")."""
    from explorer.base.i18n import label, t
    from explorer.controls import BY_NAME
    from explorer.controls import PAGE as CONTROLS

    said = []
    for field, value in values.items():
        own = field == "pos" and value not in SIDEBAR_POS  # RoPE, ALiBi: the Lab's own control
        c = CONTROLS["lab_pos"] if own else CONTROLS.get(PAGE.get(field, "")) or BY_NAME.get(field)
        if c is None:  # a field no control holds: its own name
            said.append(t("lab_setting_is", name=field, value=value))
            continue
        shown = label(c.fmt)(value) if c.kind in ("choice", "radio") else value
        said.append(t("lab_setting_is", name=t(c.title or c.name), value=shown))
    return t("list_join").join(said)

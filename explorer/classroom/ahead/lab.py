"""The Lab's presets trained at the server's start, before a class presses them (``explorer.classroom.ahead``).

A preset's button writes its settings into the sidebar and the page's controls; the page then builds its
A and B runs from those controls. ``pressed`` builds the same two runs from the same table without a page
(a fresh session's sidebar, the preset's values written over it), so that the run a learner's press asks
for is the one already trained: runs are shared by their settings (``explorer.lab.runs``). ``played`` does the
same for the tour's Lab lesson (its link, then Play).
``tests/app/test_lab_ahead.py`` presses every preset and plays the lesson on the page, and compares.

``train_presets`` starts them one after another, each when the one before has ended, so they take one of
the Lab's two training slots at a time and leave the other to the learners; the workers run at the lowest
CPU priority. They are marked ``kept``: never dropped from the finished runs a server keeps,
and held for ``HOLD_S`` against the "nobody looks at it" stop while they wait and train.
"""

from __future__ import annotations

import time
from dataclasses import replace

from attn_core.lab import PRESETS, TASKS, LabConfig, validate
from explorer.controls import BY_NAME, SIDEBAR
from explorer.controls import PAGE as PAGE_CONTROLS
from explorer.lab import config as lab_config
from explorer.lab.runs import RUNS, Runs

OWNER = "server-start"  # the watcher the start's runs are held by
HOLD_S = 900.0  # they are held against the orphan stop this long after they were started
PAGE_KEYS = (*lab_config.PAGE.values(), "lab_pos")


def fresh_values() -> dict:
    """The sidebar's and the Lab's control values of a session that has changed nothing."""
    return {c.name: c.default for c in SIDEBAR} | {k: PAGE_CONTROLS[k].default for k in PAGE_KEYS}


def _runs(chosen: dict, b_name: str) -> tuple[LabConfig, ...]:
    """The page's A (and B, when ``b_name`` is a preset) from the control values ``chosen``, as its build does."""
    from explorer.controls.state import settings_of

    for c in SIDEBAR:  # a control the sidebar does not draw for these values keeps its default (sidebar_ui)
        if c.shown is not None and not c.shown(chosen):
            chosen[c.name] = c.default
    cfg = validate(lab_config.from_controls(settings_of(chosen), {k: chosen[k] for k in PAGE_KEYS}))
    return (cfg, validate(replace(cfg, **PRESETS[b_name][2]))) if b_name in PRESETS else (cfg,)


def pressed(name: str, values: dict | None = None) -> tuple[LabConfig, ...]:
    """The A and B runs the Lab page starts after preset ``name`` is pressed, on a session whose control
    values are ``values`` (a fresh one's by default), as the page's ``apply_preset`` and its build do."""
    shared, a, _ = PRESETS[name]
    return _runs((values or fresh_values()) | lab_config.to_controls(LabConfig(**shared, **a).resolved()), name)


def played(query: dict) -> tuple[LabConfig, ...]:
    """The runs the Lab page starts on Play, opened fresh from a link whose query is ``query`` (a lesson's): its
    values read as the controls read a link's, the length and the steps the task's own unless it names them."""
    chosen = fresh_values()
    for name, raw in query.items():
        control = PAGE_CONTROLS.get(name) or BY_NAME.get(name)
        value = control.parse(str(raw)) if control is not None else None
        if value is not None:
            chosen[name] = value
    spec = TASKS[chosen["lab_task"]]
    for key, own in (("lab_length", spec.length), ("lab_steps", spec.steps)):
        chosen[key] = chosen[key] if key in query else own
    return _runs(chosen, chosen["lab_b"])


def every_press() -> list[LabConfig]:
    """Every preset's runs and the Lab lessons' of the tour, in that order, each once."""
    from explorer.classroom.tour import TOUR, params

    found = [pressed(name) for name in PRESETS]
    found += [played(params(lesson)) for lesson in TOUR if lesson.page == "lab"]
    out: list[LabConfig] = []
    for configs in found:
        out += [c for c in configs if c not in out]
    return out


def train_presets(runs: Runs = RUNS, poll_s: float = 1.0) -> list:
    """Train every preset's runs, one at a time, kept; returns the runs (called in a background thread)."""
    done = []
    for cfg in every_press():
        run = runs.start(cfg, OWNER)
        with runs.lock:
            run.watchers[OWNER] = time.time() + HOLD_S
            run.kept = True
        while run.active and run.state != "paused":  # a learner who paused it has it in hand
            time.sleep(poll_s)
        done.append(run)
    return done

"""The Lab's checkpoints compared: any two snapshots of a run (step 100 against step 600) or of A and B, one head's
attention on the probe example side by side with B − A, and every head matched across the two
(``attn_core.interpret.head_match.match_lab``, a background job: ``explorer.jobs``).

A run keeps every snapshot it took (``explorer.lab.runs``: every ``every`` steps, its weights on the probe example
and its heads' scores), within the runs' memory bound; the comparison reads two of them once the runs have stopped
moving (while one trains, its snapshots keep coming and the page does not rerun)."""

from __future__ import annotations

import streamlit as st
import torch

from explorer.base import widgets
from explorer.base.i18n import t
from explorer.charts.views import a_b_maps
from explorer.jobs import waiting
from explorer.model import match_view

PAGE = "lab_checkpoints"


def checkpoints(runs: dict) -> dict[str, tuple[str, object]]:
    """'A:100' -> (run name, snapshot), for every snapshot that holds weights (a diverged run's last holds none)."""
    out = {}
    for name, run in runs.items():
        for snap in run.snaps if run is not None else ():
            if snap.weights and snap.status != "diverged":
                out[f"{name}:{snap.step}"] = (name, snap)
    return out


def defaults(keys: list[str]) -> tuple[str, str]:
    """A's first snapshot against A's last; with B, A's last against B's last."""
    a = [k for k in keys if k.startswith("A:")] or keys
    b = [k for k in keys if k.startswith("B:")]
    return (a[-1], b[-1]) if b else (a[0], a[-1])


def plain(snap) -> dict:
    """A snapshot as the ``match_lab`` job takes it: its weights per layer (H, L, L) and its heads' scores."""
    return {"weights": [w.tolist() for w in snap.weights], "scores": snap.scores}


def request(key_a: str, snap_a, key_b: str, snap_b) -> tuple[str, dict]:
    return "match_lab", {"a": plain(snap_a), "b": plain(snap_b), "name_a": key_a, "name_b": key_b}


def moved_of(wa: torch.Tensor, wb: torch.Tensor) -> float:
    """How much a head's map changed between two snapshots: the total variation of each row, averaged."""
    return float(0.5 * (wb - wa).abs().sum(-1).mean())


def heads(snap_a, snap_b) -> list[str]:
    """The heads both snapshots have ('layer:head'), the one whose map changed most first (total variation of its
    rows, averaged), where their shapes agree; else in order."""
    both = [
        (layer, h)
        for layer in range(min(len(snap_a.weights), len(snap_b.weights)))
        for h in range(min(snap_a.weights[layer].shape[0], snap_b.weights[layer].shape[0]))
    ]

    def change(cell: tuple[int, int]) -> float:
        wa, wb = snap_a.weights[cell[0]][cell[1]], snap_b.weights[cell[0]][cell[1]]
        return moved_of(wa, wb) if wa.shape == wb.shape else 0.0

    both.sort(key=lambda c: (-change(c), c))
    return [f"{layer}:{h}" for layer, h in both]


def name_of(key: str) -> str:
    run, step = key.split(":")
    return t("mp.lab_point", run=run, step=step)


def section(runs: dict, labels: list[str], moving: bool) -> None:
    """The comparison under the Lab's runs."""
    st.subheader(t("mp.lab_title"))
    st.caption(t("mp.lab_intro"))
    if moving:
        st.info(t("mp.lab_moving"), icon=":material/pause:")
        return  # the jobs watched are kept: the page does not rerun while a run trains
    found = checkpoints(runs)
    keys = list(found)
    if len(keys) < 2:
        st.info(t("mp.lab_need_two"), icon=":material/info:")
        waiting.ask(PAGE, {})
        return
    first, second = defaults(keys)
    c1, c2, c3 = st.columns(3)
    key_a = widgets.selectbox(c1, t("mp.lab_left"), keys, key="lab_ck_a", default=first, format_func=name_of)
    key_b = widgets.selectbox(c2, t("mp.lab_right"), keys, key="lab_ck_b", default=second, format_func=name_of)
    snap_a, snap_b = found[key_a][1], found[key_b][1]
    names = heads(snap_a, snap_b)
    chosen = widgets.selectbox(c3, t("mp.head"), names, key="lab_ck_head", default=names[0])
    layer, h = (int(x) for x in chosen.split(":"))
    wa, wb = snap_a.weights[layer][h], snap_b.weights[layer][h]

    def named(z) -> list[str]:  # the probe's tokens where they fit the map, else positions
        n = z.shape[-1]
        return labels if len(labels) == n else [str(i) for i in range(n)]

    maps = [(wa, named(wa), t("mp.lab_map", point=name_of(key_a), head=chosen), "a")]
    maps.append((wb, named(wb), t("mp.lab_map", point=name_of(key_b), head=chosen), "b"))
    same = wa.shape == wb.shape
    if same:
        maps.append((wb - wa, named(wa), t("mp.lab_diff", head=chosen), "diff"))
    a_b_maps(maps, "lab_ck_map")
    if not same:
        st.info(t("mp.lab_shapes", a=wa.shape[-1], b=wb.shape[-1]), icon=":material/info:")
    if same:
        moved = f"{moved_of(wa, wb):.2f}"
        st.markdown(t("mp.lab_words", head=chosen, a=name_of(key_a), b=name_of(key_b), moved=moved))
    job = waiting.ask(PAGE, {"match": request(key_a, snap_a, key_b, snap_b)})["match"]
    if waiting.status(job):
        match_view.table_ui(job.result)

"""The Vision page's training, the Lab's way: Play, Pause, Step and Reset on runs shared by every session
(``explorer.vision.runs``), the held-out accuracy drawn as it grows and the heads of the latest snapshot's model
on the held-out digit (Pause, and read them at that step). While a run moves, only this part is redrawn, once a
second, less often while many learners watch runs (``st.fragment``, ``explorer.lab.refresh``); nothing waits in
the script thread."""

from __future__ import annotations

from dataclasses import asdict, replace

import streamlit as st
import torch

from attn_core.vision.model import VisionConfig, VisionModel
from explorer import charts
from explorer.base import session
from explorer.base.i18n import t
from explorer.base.runtime import session_id
from explorer.base.safe import md
from explorer.charts.views import chart
from explorer.vision import view
from explorer.vision.runs import VISION_RUNS as RUNS


def kinds(c: VisionConfig, compare: bool) -> dict[str, VisionConfig]:
    """The runs the page shows: its own model's, and with ``compare`` the other kind's at the same budget."""
    other = _other(c)
    return {c.model: c} | ({other.model: other} if compare else {})


def _other(c: VisionConfig) -> VisionConfig:
    return replace(c, model="swin" if c.model == "vit" else "vit")


def key(c: VisionConfig) -> tuple:
    return tuple(asdict(c).items())


def mine(c: VisionConfig):
    """The run this session shows for ``c`` (None after its Reset, until Play or Step)."""
    return None if key(c) in set(session.get("vi_left", [])) else RUNS.get(c, session_id())


def controls_ui(configs: dict[str, VisionConfig]) -> None:
    """Play, Pause, Step and Reset (as the Lab's); the runs this session watched with other settings are left."""
    me, playing = session_id(), session.get("vi_playing", False)
    keys = sorted(key(c) for c in configs.values())
    for items in session.get("vi_watching", []):
        if items not in keys and (old := RUNS.get(VisionConfig(**dict(items)), me)) is not None:
            RUNS.leave(old, me)
    session.put("vi_watching", keys)
    b = st.columns(4)
    if b[0].button(
        t("lab_play"), icon=":material/play_arrow:", type="primary", key="vi_play", shortcut="p", width="stretch"
    ):
        playing = True
        session.put("vi_left", [])
        for c in configs.values():
            RUNS.resume(RUNS.start(c, me))
    if b[1].button(t("lab_pause"), icon=":material/pause:", key="vi_pause", width="stretch"):
        playing = False
        for run in filter(None, (RUNS.get(c, me) for c in configs.values())):
            RUNS.pause(run)
    if b[2].button(t("lab_step"), icon=":material/skip_next:", key="vi_step", width="stretch"):
        playing = False
        session.put("vi_left", [])
        for c in configs.values():
            RUNS.step(RUNS.get(c, me) or RUNS.start(c, me))
    if b[3].button(t("lab_reset"), icon=":material/restart_alt:", key="vi_reset", width="stretch"):
        playing = False
        for run in filter(None, (RUNS.get(c, me) for c in configs.values())):
            RUNS.leave(run, me)
        session.put("vi_watching", [])
        session.put("vi_left", keys)
    if playing:  # a changed setting while playing starts its run at once
        for c in configs.values():
            run = RUNS.get(c, me)
            if run is None or run.state == "stopped":
                RUNS.start(c, me)
    session.put("vi_playing", playing)


def moving(configs: dict[str, VisionConfig]) -> bool:
    return any((r := mine(c)) is not None and r.state in ("queued", "running") for c in configs.values())


def status_line(name: str, run) -> str:
    if run is None:
        return t("lab_not_started", name=name)
    if run.state == "queued":
        return t("lab_queued", name=name, n=RUNS.position(run))
    if run.state == "failed":
        return t("lab_failed_why", name=name, why=t("lab_failed_other", detail=run.message))
    last = run.snaps[-1] if run.snaps else None
    acc = f"{last.val_acc:.1%}" if last else "–"
    return t(f"lab.state.{run.state}", name=name, step=last.step if last else 0, total=run.cfg.steps, acc=acc)


def latest_model(c: VisionConfig) -> VisionModel | None:
    """The model of the latest snapshot of this session's run for ``c`` (None before the first)."""
    run = mine(c)
    if run is None or not run.snaps:
        return None
    snap = run.snaps[-1]
    return view.trained(key(c) + (("at_step", snap.step),), snap.state)


def live(configs: dict[str, VisionConfig], image: torch.Tensor, query: int, polling: bool) -> None:
    """The runs' state, their curve and the heads at the latest snapshot (the page's fragment)."""
    runs = {m: mine(c) for m, c in configs.items()}
    if polling and not moving(configs):  # the run has ended (or paused): one whole rerun to stop polling
        st.rerun()
    for m, run in runs.items():
        st.markdown(f"**{md(t(f'vision.model.{m}'))}** · {md(status_line(t(f'vision.model.{m}'), run))}")
        if run is not None and run.active:
            st.progress(min(run.progress, 1.0))
    own = next(iter(configs.values()))
    have = {m: r.snaps for m, r in runs.items() if r is not None and r.snaps}
    if own.model not in have:
        st.info(t("lab_press_play"))
        return
    curve_chart(have, own, compare=len(configs) > 1)
    if len(have) > 1 and all(not runs[m].active for m in have):
        compare_note(list(configs.values()), {m: s[-1].val_acc for m, s in have.items()})
    snap = have[own.model][-1]
    st.caption(t("vision.heads_at", step=snap.step, total=own.steps))
    view.attention_ui(latest_model(own), image, own, query, "vi_attn")


def curve_chart(have: dict[str, list], own: VisionConfig, compare: bool) -> None:
    xs = max(([s.step for s in snaps] for snaps in have.values()), key=len)
    series = {
        (t(f"vision.model.{m}") if compare else t("vision.val_acc")): [s.val_acc for s in snaps]
        + [None] * (len(xs) - len(snaps))
        for m, snaps in have.items()
    }
    last = have[own.model][-1]
    title = t("vision.curve_title", step=last.step, acc=f"{last.val_acc:.3f}", n=last.val_n)
    figure = charts.line(xs, series, title=title, x_title="step")
    figure.update_layout(yaxis_range=[0.0, 1.02], xaxis_range=[0, own.steps])
    chart(figure, "vi_curve")


def compare_note(kinds_: list[VisionConfig], acc: dict[str, float]) -> None:
    """The budget both kinds share (steps, batch, parameters) and what differs: the pairs a layer scores."""
    params = {k.model: sum(p.numel() for p in VisionModel(k).parameters()) for k in kinds_}
    pairs = {k.model: int(sum(int(k.mask(layer).sum()) for layer in range(k.layers))) for k in kinds_}
    c = kinds_[0]
    st.caption(
        t(
            "vision.compare_note",
            steps=c.steps,
            batch=c.batch,
            params=f"{params['vit']:,} / {params['swin']:,}",
            vit=f"{acc['vit']:.3f}",
            swin=f"{acc['swin']:.3f}",
            pairs_vit=f"{pairs['vit']:,}",
            pairs_swin=f"{pairs['swin']:,}",
        )
    )

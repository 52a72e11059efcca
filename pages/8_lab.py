"""Attention Lab: a tiny attention model trains live on a toy task; its heads' patterns form beside the ideal one."""

from dataclasses import replace

import streamlit as st

from attn_core import AttentionConfigError
from attn_core import lab as engine
from explorer import figures as fig
from explorer.boot import run_through_app
from explorer.controls import PAGE, draw
from explorer.i18n import error_text, kernel_label, t
from explorer.lab_runs import RUNS
from explorer.safe import md
from explorer.server import session_id
from explorer.state import current_settings
from explorer.views import chart

run_through_app()  # before anything is drawn; see explorer/boot.py

st.title(t("page_lab"))
st.caption(t("lab_intro"))


def apply_preset(name: str) -> None:
    """A preset's A settings into the sidebar and the Lab's controls, its B as the comparison."""
    shared, a, _ = engine.PRESETS[name]
    cfg = engine.LabConfig(**shared, **a).resolved()
    sidebar = {"heads": cfg.heads, "d_model": cfg.d_model, "d_k": cfg.d_k, "d_q": cfg.d_k, "d_v": cfg.d_v}
    sidebar |= {"score": cfg.score, "kernel": cfg.kernel, "mask": "none", "layout": "tutorial", "temperature": 1.0}
    sidebar |= {"dropout_on": False}
    page = {"lab_task": cfg.task, "lab_length": cfg.length, "lab_layers": cfg.layers, "lab_pos": cfg.pos}
    page |= {"lab_mlp": cfg.mlp, "lab_lr": cfg.lr, "lab_batch": cfg.batch, "lab_steps": cfg.steps, "lab_b": name}
    for key, value in (sidebar | page).items():
        st.session_state[key] = value
    st.session_state["lab_playing"] = True


with st.expander(t("lab_presets"), expanded=True):
    cols = st.columns(len(engine.PRESETS))
    for col, name in zip(cols, engine.PRESETS):
        col.button(
            t(f"lab_title_{name}"), key=f"lab_preset_{name}", on_click=apply_preset, args=(name,), width="stretch"
        )
        col.caption(t(f"lab_preset_{name}"))

s = current_settings()
c = st.columns(5)
task = draw(PAGE["lab_task"], c[0])
spec = engine.TASKS[task]
length = draw(PAGE["lab_length"], c[1], default=spec.length)
layers = draw(PAGE["lab_layers"], c[2])
pos = draw(PAGE["lab_pos"], c[3])
mlp = draw(PAGE["lab_mlp"], c[4])
c = st.columns(5)
lr = draw(PAGE["lab_lr"], c[0], format="%.5f")
batch = draw(PAGE["lab_batch"], c[1])
steps = draw(PAGE["lab_steps"], c[2], default=spec.steps)
seed = draw(PAGE["lab_seed"], c[3])
b_choice = draw(PAGE["lab_b"], c[4])
st.caption(t("lab_from_sidebar", kernel=kernel_label(s.kernel)))

cfg = engine.LabConfig(
    task=task,
    length=length,
    layers=layers,
    heads=s.heads,
    d_model=s.d_model,
    d_k=s.d_k,
    d_v=s.d_v,
    score=s.score,
    temperature=s.temperature,
    pos=pos,
    mask=s.mask,
    kernel=s.kernel,
    window=min(s.window, engine.LAB_LIMITS["window"][1]),
    dropout=s.dropout,
    mlp=mlp,
    lr=lr,
    batch=batch,
    steps=steps,
    seed=seed,
)
configs = {"A": cfg}
if b_choice != "off":
    b_own = engine.PRESETS[b_choice][2]
    configs["B"] = replace(cfg, **b_own)
try:
    configs = {k: engine.validate(v) for k, v in configs.items()}
except AttentionConfigError as err:
    message, fix = (md(x) for x in error_text(err))
    st.error(f"{message}\n\n**{t('fix_prefix')}** {fix}", icon=":material/warning:")
    st.stop()

me = session_id()
playing = st.session_state.get("lab_playing", False)
# the runs this session watched before: if the settings changed, it leaves them (the last watcher stops a run)
keys = sorted((name, c_.key()) for name, c_ in configs.items())
for name, items in st.session_state.get("lab_watching", []):
    if (name, items) not in keys:
        old = RUNS.get(engine.LabConfig(**dict(items)), me)
        if old is not None:
            RUNS.leave(old, me)
st.session_state["lab_watching"] = keys

b1, b2, b3, b4 = st.columns(4)
if b1.button(
    t("lab_play"), icon=":material/play_arrow:", type="primary", key="lab_play", shortcut="p", width="stretch"
):
    playing = True
    for c_ in configs.values():
        RUNS.resume(RUNS.start(c_, me))
if b2.button(t("lab_pause"), icon=":material/pause:", key="lab_pause", width="stretch"):
    playing = False
    for c_ in configs.values():
        run = RUNS.get(c_, me)
        if run is not None:
            RUNS.pause(run)
if b3.button(t("lab_step"), icon=":material/skip_next:", key="lab_step", width="stretch"):
    playing = False
    for c_ in configs.values():
        RUNS.step(RUNS.get(c_, me) or RUNS.start(c_, me))
if b4.button(t("lab_reset"), icon=":material/restart_alt:", key="lab_reset", width="stretch"):
    playing = False
    for c_ in configs.values():
        run = RUNS.get(c_, me)
        if run is not None:
            RUNS.leave(run, me)
    st.session_state["lab_watching"] = []
if playing:  # like a playground: a changed setting while playing starts its run at once
    for c_ in configs.values():
        run = RUNS.get(c_, me)
        if run is None or run.state in ("stopped", "failed"):
            RUNS.start(c_, me)
st.session_state["lab_playing"] = playing

probe_x, probe_y, _ = engine.probe(configs["A"])
ideal = engine.ideal(configs["A"])
labels = [f"{i} {v}" for i, v in enumerate(probe_x.tolist())]


def status_line(name: str, run) -> str:
    if run is None:
        return t("lab_not_started", name=name)
    if run.state == "queued":
        return t("lab_queued", name=name, n=RUNS.position(run))
    last = run.snaps[-1] if run.snaps else None
    acc = f"{last.val_acc:.1%}" if last else "–"
    return t(f"lab_state_{run.state}", name=name, step=last.step if last else 0, total=run.cfg.steps, acc=acc)


def draw_run(name: str, run, at: int | None) -> None:
    st.markdown(f"**{name}** · {md(status_line(name, run))}")
    if run is None:
        return
    st.progress(min(run.progress, 1.0))
    snaps = run.snaps
    if not snaps:
        return
    snap = snaps[-1] if at is None else next((x for x in snaps if x.step >= at), snaps[-1])
    if run.state == "diverged":
        st.error(t("lab_diverged", step=snaps[-1].step), icon=":material/trending_up:")
    done = [x for x in snaps if x.status != "diverged"]
    xs = [x.step for x in done]
    chart(
        fig.line(
            xs,
            {t("lab_train_loss"): [x.train_loss for x in done], t("lab_val_loss"): [x.val_loss for x in done]},
            title=t("lab_loss"),
            x_title="step",
        ),
        f"lab_loss_{name}",
    )
    chart(
        fig.line(
            xs,
            {t("lab_train_acc"): [x.train_acc for x in done], t("lab_val_acc"): [x.val_acc for x in done]},
            title=t("lab_acc"),
            x_title="step",
        ),
        f"lab_acc_{name}",
    )
    if not snap.weights:
        return
    st.caption(t("lab_heads_at", step=snap.step, grad=snap.grad_qk or 0.0))
    for layer, w in enumerate(snap.weights):
        cols = st.columns(min(w.shape[0], 4))
        for h in range(w.shape[0]):
            with cols[h % len(cols)]:
                chart(
                    fig.heatmap(w[h], labels, labels, title=t("lab_head", layer=layer, head=h), height=300),
                    f"lab_w_{name}_{layer}_{h}",
                )


def live() -> None:
    runs = {name: RUNS.get(c_, me) for name, c_ in configs.items()}
    moving = any(r is not None and r.state in ("queued", "running") for r in runs.values())
    if polling and not moving:  # the run has ended (or paused): one whole rerun to stop polling
        st.rerun()
    active = any(r is not None and r.active for r in runs.values())
    finished = all(r is not None and not r.active for r in runs.values())
    at = None
    if finished:  # a scrubber over the snapshots, to replay the run
        marks = sorted({x.step for r in runs.values() for x in r.snaps})
        if len(marks) > 1:
            at = st.select_slider(t("lab_replay"), options=marks, value=marks[-1], key="lab_replay")
    left, right = st.columns([1, 3] if len(runs) == 1 else [1, 2])
    with left:
        chart(
            fig.heatmap(ideal, labels, labels, title=t("lab_ideal", task=t(f"lab_task_{task}")), height=300),
            "lab_ideal",
        )
        st.caption(t("lab_probe", x=probe_x.tolist(), y=probe_y.tolist()))
    with right:
        cols = st.columns(len(runs))
        for col, (name, run) in zip(cols, runs.items()):
            with col:
                draw_run(name, run, at)
    if len(runs) > 1:
        rows = []
        for name, run in runs.items():
            reached = engine.steps_to([{"step": x.step, "val_acc": x.val_acc} for x in run.snaps]) if run else None
            rows.append(
                {
                    t("lab_run"): name,
                    t("lab_steps_to_99"): str(reached) if reached else t("lab_not_reached"),
                    t("lab_val_acc"): f"{run.snaps[-1].val_acc:.1%}" if run and run.snaps else "–",
                }
            )
        st.dataframe(rows, hide_index=True)
    if not active and not finished:
        st.info(t("lab_press_play"))


# redrawn every second alone while a run moves, and not at all otherwise (a class of 30 on this page)
polling = any((r := RUNS.get(c_, me)) is not None and r.state in ("queued", "running") for c_ in configs.values())
st.fragment(run_every=1.0 if polling else None)(live)()

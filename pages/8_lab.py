"""Attention Lab: a tiny attention model trains live on a toy task; its heads' patterns form beside the ideal one."""

from dataclasses import replace

import streamlit as st

from attn_core import AttentionConfigError
from attn_core import lab as engine
from explorer import charts
from explorer import figures as fig
from explorer.base import session, widgets
from explorer.base.i18n import error_text, kernel_label, label, t
from explorer.base.runtime import session_id
from explorer.base.safe import md, plot
from explorer.boot import run_through_app
from explorer.charts.views import chart
from explorer.controls import PAGE, assign, draw
from explorer.controls.state import current_settings
from explorer.lab import checkpoints, refresh, sinks
from explorer.lab import config as lab_config
from explorer.lab import record as lab_record
from explorer.lab.runs import RUNS
from explorer.steps import qk_view

run_through_app()  # before anything is drawn; see explorer/boot.py

st.title(t("page.lab"))
st.caption(t("lab_intro"))
IDEAL_MEANS = {  # what each task's ideal pattern means, under its chart
    "reverse": "lab_ideal_reverse",
    "sort": "lab_ideal_sort",
    "shift": "lab_ideal_shift",
    "repeat": "lab_ideal_repeat",
    "recall": "lab_ideal_recall",
}


def apply_preset(name: str) -> None:
    """A preset's A settings into the sidebar and the Lab's controls, its B as the comparison."""
    shared, a, _ = engine.PRESETS[name]
    values = lab_config.to_controls(engine.LabConfig(**shared, **a).resolved())  # the seed stays the sidebar's
    assign(values | {"lab_b": name})
    session.put("lab_playing", True)


def measured(name: str) -> str:
    """The preset's claim as measured, quoted from its record (lab_record.RECORD), dated in words."""
    date, presets = lab_record.read()
    item = presets.get(name)
    if item is None:
        return t("lab_no_record")
    a, b = item["a"], item["b"]

    def steps(side: dict) -> str:
        pair = side.get("steps_to_99")
        return t("lab_after_steps", steps=lab_record.span(pair)) if pair else t("lab_never")

    text = t(
        "lab_measured",
        seeds=", ".join(str(s) for s in a["seeds"]),
        when=t("lab_record_when", date=date) if date else t("lab_record_undated"),
        n=len(a["seeds"]),
        a_acc=lab_record.span(a["acc"], percent=True),
        a_n=a["reached"],
        a_steps=steps(a),
        b_acc=lab_record.span(b["acc"], percent=True),
        b_n=b["reached"],
        b_steps=steps(b),
    )
    if name == "induction":
        text += " " + t(
            "lab_measured_induction",
            b_ind=lab_record.span(b["induction_last"], 2),
            a_ind=lab_record.span(a["induction_last"], 2),
            b_prev=lab_record.span(b["prev_first"], 2),
            phase=lab_record.span(b["phase_change"]) if b.get("phase_change") else t("lab_never"),
        )
    if name == "heads" and b.get("apart"):
        sa, sb = a.get("steps_to_99"), b.get("steps_to_99")
        faster = bool(sa and sb and sb[1] < sa[0])  # every B run reached 99 % before every A run
        key = "lab_measured_heads_faster" if faster else "lab_measured_heads_same"
        text += " " + t(key, apart=lab_record.span(b["apart"], 2))
    return text


# a preset's title wraps in a narrow column instead of ending in "…" ("An induction patt…")
WRAP = """<style>[class*="st-key-lab_preset_"] button, [class*="st-key-lab_preset_"] button * {
white-space: normal !important; overflow: visible !important; text-overflow: clip !important; height: auto; }
</style>"""

with st.expander(t("lab_presets"), expanded=True):
    st.html(WRAP)
    cols = st.columns(len(engine.PRESETS))
    for col, name in zip(cols, engine.PRESETS):
        col.button(
            t(f"lab.title.{name}"), key=f"lab_preset_{name}", on_click=apply_preset, args=(name,), width="stretch"
        )
        col.caption(t(f"lab.preset.{name}"))
        col.caption(md(measured(name)))

s = current_settings()
c = st.columns(5)
page = {"lab_task": draw(PAGE["lab_task"], c[0])}
spec = engine.TASKS[page["lab_task"]]
high = min(spec.high, engine.LAB_LIMITS["length"][1])
page["lab_length"] = draw(PAGE["lab_length"], c[1], default=spec.length, high=high)
page["lab_layers"] = draw(PAGE["lab_layers"], c[2])
pos_label = label("lab.pos.")


def pos_name(value: str) -> str:
    return t("lab_pos_sidebar", pos=label()(s.pos)) if value == "sidebar" else pos_label(value)


page["lab_pos"] = draw(PAGE["lab_pos"], c[3], format_func=pos_name)
page["lab_mlp"] = draw(PAGE["lab_mlp"], c[4])
c = st.columns(4)
page["lab_lr"] = draw(PAGE["lab_lr"], c[0], format="%.5f")
page["lab_batch"] = draw(PAGE["lab_batch"], c[1])
page["lab_steps"] = draw(PAGE["lab_steps"], c[2], default=spec.steps)
b_choice = draw(PAGE["lab_b"], c[3])
st.caption(
    t(
        "lab_settings_where",
        heads=s.heads,
        d_model=s.d_model,
        d_k=s.d_k,
        d_v=s.d_v,
        score=label()(s.score),
        pos=label()(s.pos),
        seed=s.seed,
        kernel=kernel_label(s.kernel),
    )
)

cfg = lab_config.from_controls(s, page)
configs = {"A": cfg}
if b_choice != "off":
    b_own = engine.PRESETS[b_choice][2]
    configs["B"] = replace(cfg, **b_own)
    st.caption(t("lab_b_is", changes=md(lab_config.in_words(b_own))))
try:
    configs = {k: engine.validate(v) for k, v in configs.items()}
    need = {k: engine.check_memory(v) for k, v in configs.items()}  # refused before anything starts
except AttentionConfigError as err:
    message, fix = (md(x) for x in error_text(err))
    st.error(f"{message}\n\n**{t('fix_prefix')}** {fix}", icon=":material/warning:")
    st.stop()


def cli_line(name: str, c_: engine.LabConfig) -> str:
    """The command that reproduces this run: the preset's side when it is exactly that, else every setting."""
    order = [b_choice] if b_choice in engine.PRESETS else []  # the preset compared with first: its sides
    for preset in order + [p for p in engine.PRESETS if p not in order]:
        for side, p in zip("ab", engine.preset(preset)):
            if engine.validate(replace(p, seed=c_.seed)) == c_:
                return f"python -m attn_core train --preset {preset} --side {side} --seed {c_.seed} --json"
    return "python -m attn_core train " + " ".join(engine.train_flags(c_)) + " --json"


mib = ", ".join(f"{k} {v / 2**20:.0f} MiB" for k, v in need.items())
st.caption(t("lab_memory_ok", need=mib, limit=engine.MAX_BYTES // 2**20))
# sent only once opened: Streamlit's syntax highlighter cost a new tab about 0.2-0.3 s of its main thread before the
# ideal pattern's chart (first_load_cpu.txt), for a fold most never open
cli_fold = widgets.expander(st, t("lab_cli"), key="lab_cli")
if cli_fold.open:
    cli_fold.code("\n".join(f"# {k}\n{cli_line(k, v)}" for k, v in configs.items()), language="bash")

me = session_id()
playing = session.get("lab_playing", False)
# the runs this session watched before: if the settings changed, it leaves them (the last watcher stops a run)
keys = sorted((name, c_.key()) for name, c_ in configs.items())
for name, items in session.get("lab_watching", []):
    if (name, items) not in keys:
        old = RUNS.get(engine.LabConfig(**dict(items)), me)
        if old is not None:
            RUNS.leave(old, me)
session.put("lab_watching", keys)

b1, b2, b3, b4 = st.columns(4)
if b1.button(
    t("lab_play"), icon=":material/play_arrow:", type="primary", key="lab_play", shortcut="p", width="stretch"
):
    playing = True
    session.put("lab_left", [])
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
    session.put("lab_left", [])
    for c_ in configs.values():
        RUNS.step(RUNS.get(c_, me) or RUNS.start(c_, me))
if b4.button(t("lab_reset"), icon=":material/restart_alt:", key="lab_reset", width="stretch"):
    playing = False
    for c_ in configs.values():
        run = RUNS.get(c_, me)
        if run is not None:
            RUNS.leave(run, me)
    session.put("lab_watching", [])
    session.put("lab_left", keys)
if playing:  # like a playground: a changed setting while playing starts its run at once (a failed one waits)
    for c_ in configs.values():
        run = RUNS.get(c_, me)
        if run is None or run.state == "stopped":
            RUNS.start(c_, me)
session.put("lab_playing", playing)
left = set(session.get("lab_left", []))  # runs this session reset: not shown, not watched

probe_x, probe_y, _ = engine.probe(configs["A"])
ideal = engine.ideal(configs["A"])
labels = [f"{i}·{v}" for i, v in enumerate(probe_x.tolist())]


def status_line(name: str, run) -> str:
    if run is None:
        return t("lab_not_started", name=name)
    if run.state == "queued":
        return t("lab_queued", name=name, n=RUNS.position(run))
    last = run.snaps[-1] if run.snaps else None
    acc = f"{last.val_acc:.1%}" if last else "–"
    return t(f"lab.state.{run.state}", name=name, step=last.step if last else 0, total=run.cfg.steps, acc=acc)


def failure(name: str, run) -> str:
    """Why a run failed, in the UI's language: the engine's error, the system's signal, else the worker's words."""
    code, params = run.error
    if code:
        try:
            message, fix = error_text(AttentionConfigError(params.get("field", "batch"), code, **params))
            return t("lab_failed_why", name=name, why=f"{message} {fix}")
        except (KeyError, TypeError, ValueError):
            pass
    if "signal" in run.message:
        signal = run.message.rsplit(" ", 1)[-1]
        return t("lab_failed_why", name=name, why=t("lab_failed_killed", signal=signal))
    return t("lab_failed_why", name=name, why=t("lab_failed_other", detail=run.message))


def axes(runs: dict) -> dict:
    """The y ranges every run's charts share: accuracy on 0–1, the loss from 0 to the largest loss drawn."""
    losses = [v for r in runs.values() if r for x in r.snaps for v in (x.train_loss, x.val_loss) if v is not None]
    return {"acc": [0.0, 1.02], "loss": [0.0, 1.05 * max(losses, default=1.0)]}


def small_legend(figure, y_range) -> None:
    """A shared y range and the legend in a line under the chart, so it does not take the chart's width."""
    figure.update_layout(
        yaxis_range=y_range,
        legend=dict(orientation="h", x=0.0, y=-0.28, xanchor="left", yanchor="top"),
        margin=dict(b=90),
    )


def scores_table(run) -> None:
    last = next((x for x in reversed(run.snaps) if x.scores), None)
    if last is None:
        return
    rows = []
    for layer, heads in enumerate(last.scores):
        for h, sc in enumerate(heads):
            row = {
                t("lab_score_layer"): layer,
                t("lab_score_head"): h,
                t("lab_score_prev"): f"{sc['prev']:.3f}",
                t("lab_score_induction"): f"{sc['induction']:.3f}",
            }
            if "first" in sc:  # runs kept from before the sink score have none
                row[t("lab_score_first")] = f"{sc['first']:.3f}"
            if "apart" in sc:
                row[t("lab_score_apart")] = f"{sc['apart']:.3f}"
            rows.append(row)
    st.caption(t("lab_scores"))
    # a table, not a data grid: its headers wrap in a narrow column, where the grid cut them ("induction (a…")
    st.table(rows, hide_index=True)


def draw_run(name: str, run, at: int | None, shared: dict) -> None:
    st.markdown(f"**{name}** · {md(status_line(name, run))}")
    if run is None:
        return
    if run.state == "failed":
        st.error(md(failure(name, run)), icon=":material/error:")
    st.progress(min(run.progress, 1.0))
    snaps = run.snaps
    if not snaps:
        return
    snap = snaps[-1] if at is None else next((x for x in snaps if x.step >= at), snaps[-1])
    if run.state == "diverged":
        st.error(t("lab_diverged", step=snaps[-1].step), icon=":material/trending_up:")
    done = [x for x in snaps if x.status != "diverged"]
    xs = [x.step for x in done]
    loss = charts.line(
        xs,
        {t("lab_train_loss"): [x.train_loss for x in done], t("lab_val_loss"): [x.val_loss for x in done]},
        title=t("lab_loss"),
        x_title="step",
    )
    small_legend(loss, shared["loss"])
    if run.cfg.task == "repeat":  # the induction mechanism's forming, where the loss falls
        phase = engine.phase_change([{"step": x.step, "scores": x.scores} for x in done])
        if phase is not None:
            loss.add_vline(x=phase, line_dash="dash", annotation_text=t("lab_phase", step=phase))
    chart(loss, f"lab_loss_{name}")
    acc = charts.line(
        xs,
        {t("lab_train_acc"): [x.train_acc for x in done], t("lab_val_acc"): [x.val_acc for x in done]},
        title=t("lab_acc"),
        x_title="step",
    )
    small_legend(acc, shared["acc"])
    chart(acc, f"lab_acc_{name}")
    if not snap.weights:
        return
    st.caption(t("lab_heads_at", step=snap.step, grad=snap.grad_qk or 0.0))
    for layer, w in enumerate(snap.weights):
        cols = st.columns(min(w.shape[0], 4))
        for h in range(w.shape[0]):
            with cols[h % len(cols)]:
                chart(
                    charts.heatmap(
                        w[h],
                        labels,
                        labels,
                        title=t("lab_head", layer=layer, head=h),
                        height=300,
                    ),
                    f"lab_w_{name}_{layer}_{h}",
                )
    qk_view.lab_section(name, snap, labels)  # computed nothing until opened
    sinks.section(name, done)
    scores_table(run)


def mine(name: str, c_: engine.LabConfig):
    """The run this session shows for ``name`` (None after its Reset, until Play or Step)."""
    return None if (name, c_.key()) in left else RUNS.get(c_, me)


def live() -> None:
    runs = {name: mine(name, c_) for name, c_ in configs.items()}
    moving = any(r is not None and r.state in ("queued", "running") for r in runs.values())
    if polling and not moving:  # the run has ended (or paused): one whole rerun to stop polling
        st.rerun()
    active = any(r is not None and r.active for r in runs.values())
    finished = all(r is not None and not r.active for r in runs.values())
    at = None
    if finished:  # a scrubber over the snapshots, to replay the run
        marks = sorted({x.step for r in runs.values() for x in r.snaps})
        if len(marks) > 1:
            at = widgets.select_slider(st, t("lab_replay"), marks, marks[-1], key="lab_replay")
    left, right = st.columns([2, 3] if len(runs) == 1 else [1, 2])
    with left:
        chart(
            charts.heatmap(
                ideal,
                labels,
                labels,
                title=t("lab_ideal_title"),
                x_title=t("lab_ideal_x"),
                y_title=t("lab_ideal_y"),
                height=420,
            ).update_layout(  # the task on a line of its own: in a third of the page, one line was cut
                title_subtitle_text=plot(t(f"lab.task.{cfg.task}")), margin_t=fig.MARGIN["t"] + 24
            ),
            "lab_ideal",
        )
        st.caption(t(IDEAL_MEANS[cfg.task]) + " " + t("lab_ideal_ticks"))
        st.caption(t("lab_probe", x=probe_x.tolist(), y=probe_y.tolist()))
    shared = axes(runs)
    with right:
        cols = st.columns(len(runs))
        for col, (name, run) in zip(cols, runs.items()):
            with col:
                draw_run(name, run, at, shared)
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
        st.table(rows, hide_index=True)
    if not active and not finished:
        st.info(t("lab_press_play"))


# redrawn alone while a run moves (every second, less often while many learners watch runs: explorer/lab/refresh.py),
# and not at all otherwise (a class of 30 on this page)
polling = any((r := mine(n, c_)) is not None and r.state in ("queued", "running") for n, c_ in configs.items())
st.fragment(run_every=refresh.interval_s() if polling else None)(live)()
checkpoints.section({n: mine(n, c_) for n, c_ in configs.items()}, labels, polling)  # two snapshots compared

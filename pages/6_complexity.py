"""Complexity: time and memory of full vs sparse vs linear attention on this machine."""

from dataclasses import asdict

import pandas as pd
import streamlit as st

from attn_core import AttentionConfigError, bench
from attn_core.bench.record import fallback_slopes as record_slopes
from attn_core.bench.record import load as recorded
from attn_core.kernels import KERNELS
from attn_core.knobs import KNOBS
from explorer import charts
from explorer import figures as fig
from explorer.base import widgets
from explorer.base.i18n import error_text, kernel_label, t
from explorer.base.safe import md
from explorer.boot import run_through_app
from explorer.charts.views import chart
from explorer.controls import CHOICES
from explorer.jobs import sweeps

run_through_app()  # before anything is drawn; see explorer/boot.py

st.title(t("page.complexity"))
st.caption(t("cx_intro"))

devices = bench.available_devices()
c = st.columns([1, 3])
device = widgets.selectbox(c[0], t("cx_device"), devices, key="cx_device")
info = bench.device_info(device)
mem = info.get("total_bytes") or info.get("free_bytes")
c[1].caption(
    f"{info.get('name', device)} · {t('cx_threads', n=info['threads'])} · {mem / 2**30:.1f} GiB · "
    f"torch {info['torch']}"
)

CHOICES.add("cx_kernels")  # labels in the UI's language: re-pinned on a switch (see controls)
kernels = widgets.multiselect(
    st,
    t("cx_kernels"),
    list(KERNELS),
    default=list(bench.DEFAULT_KERNELS),
    format_func=kernel_label,
    key="cx_kernels",
)
lengths = widgets.multiselect(
    st, t("cx_lengths"), [2**p for p in range(6, 17)], default=[256, 512, 1024, 2048, 4096], key="cx_lengths"
)
c = st.columns(6)
batch = widgets.number(c[0], t("cx_batch"), 1, 64, 1, key="cx_batch")


def swept(col, name: str, label: str):
    """A knob's input (``cx_<name>``): its range and default are its sweep span's (attn_core.knobs)."""
    span = KNOBS[name].span("sweep")
    return widgets.number(col, label, span.low, span.high, span.default, key=f"cx_{name}")


heads = swept(c[1], "heads", t("cx_heads"))
d_head = widgets.number(c[2], t("cx_dhead"), 8, 256, 64, step=8, key="cx_dhead")
window = swept(c[3], "window", t("cx_window"))
dtypes = ["fp32", "bf16"] + (["fp16"] if device != "cpu" else [])
dtype = widgets.selectbox(c[4], t("cx_dtype"), dtypes, key="cx_dtype")
causal = widgets.checkbox(c[5], t("cx_causal"), key="cx_causal")
cfg = bench.SweepConfig(
    kernels=tuple(kernels),
    lengths=tuple(sorted(lengths)),
    device=device,
    dtype=dtype,
    shape=bench.Shape(batch=batch, heads=heads, d_head=d_head, window=window, causal=causal),
)


try:
    bench.validate_sweep(cfg)
except AttentionConfigError as err:
    st.error(t("cx_bad", msg=md(" ".join(error_text(err)))), icon=":material/warning:")
    st.stop()

b1, b2 = st.columns([2, 5])  # wide enough for the label in both languages at 1280 px
if b1.button(t("cx_run"), type="primary", key="cx_run"):
    sweeps.RUNNER.submit(cfg)
job = sweeps.RUNNER.get(cfg)
if job is not None and job.active and b2.button(t("cx_stop"), key="cx_stop"):
    sweeps.RUNNER.stop(job)


def shown(frame: pd.DataFrame) -> pd.DataFrame:
    """A table as the page shows it: kernels by their names, headers in the UI's language."""
    frame = frame.assign(kernel=frame["kernel"].map(kernel_label)) if "kernel" in frame else frame
    return frame.rename(columns={c: t(f"cx_col.{c}") for c in frame.columns if c in bench.CSV_COLUMNS})


@st.fragment(run_every=1.0)
def progress_ui(job: sweeps.Job) -> None:
    """Polls the sweep (it runs in another process); the whole page reruns once it has ended."""
    if not job.active:
        st.rerun()
    position = sweeps.RUNNER.position(job)
    if position:
        st.info(t("cx_queued", n=position), icon=":material/hourglass_top:")
    done = len(job.rows)
    last = job.rows[-1] if job.rows else None
    text = t("cx_running", kernel=last.kernel, L=last.seq_len, i=done, n=job.total) if last else t("cx_starting")
    st.progress(done / job.total, text=text)
    if job.rows:
        st.dataframe(shown(pd.DataFrame([asdict(r) for r in job.rows])), hide_index=True)


if job is not None and job.active:
    progress_ui(job)
    st.stop()
if job is not None and job.state == "failed":  # with the rows it measured before, if any
    st.error(t("cx_failed", msg=md(job.message)), icon=":material/warning:")
if job is None or not job.rows:
    st.info(t("cx_none"))
    st.stop()
rows = job.rows
if job.state == "stopped":
    st.info(t("cx_stopped"))
st.caption(t("cx_measured", s=job.ended - job.started if job.started and job.ended else 0.0, n=job.sessions_max))
if job.sessions_max > 0:
    st.warning(t("cx_under_load", n=job.sessions_max), icon=":material/groups:")

df = pd.DataFrame([asdict(r) for r in rows])


st.dataframe(shown(df), hide_index=True)
if df["compile_s"].notna().any():
    st.caption(t("cx_compile"))


def _csv() -> str:
    buf = pd.io.common.StringIO()
    bench.rows_to_csv(rows, buf)
    return buf.getvalue()


st.download_button(t("cx_csv"), _csv, "attention_benchmark.csv", "text/csv", key="cx_download", on_click="ignore")

result = bench.analyse(rows, cfg.shape, peak_gflops=job.matmul_gflops)  # every number below; the page draws them
colours = fig.kernel_colours(cfg.kernels, style=fig.run_style())  # one colour per kernel, the same in both charts
a, b = st.columns(2)
with a:
    times = charts.loglog(
        result.times,
        title=t("cx_time"),
        y_title="ms",
        theory=result.theory,
        label=kernel_label,
        colours=colours,
    )
    chart(times, "cx_time_chart")
    st.caption(t("cx_theory"))
with b:
    memory = charts.loglog(result.memory, title=t("cx_mem"), y_title="MiB", label=kernel_label, colours=colours)
    chart(memory, "cx_mem_chart")

st.subheader(t("cx_slopes"))
record = recorded()
fitted = record_slopes(rows, record, cfg) or result.slopes  # a recorded sweep's when this one cannot fit them
if fitted is not result.slopes:  # said as such: when and on what the slopes shown were measured
    when = record.measured.replace("T", " ").removesuffix("Z") + " UTC"
    st.info(
        t("cx_recorded", n=len(result.noisy), when=when, machine=md(record.machine), torch=md(record.torch)),
        icon=":material/history:",
    )
st.dataframe(  # text, so a slope that cannot be fitted is a dash with its reason below, not "None"
    {
        t("cx_col.kernel"): [kernel_label(k) for k in fitted],
        t("cx_col_slope"): ["—" if v is None else f"{v:.2f}" for v in fitted.values()],
        t("cx_col_double"): ["—" if v is None else f"× {2**v:.1f}" for v in fitted.values()],
    },
    hide_index=True,
)
if None in fitted.values():
    st.caption(f"— {t('cx_slope_none')}")
if result.noisy:
    st.warning(t("cx_noisy", n=len(result.noisy)), icon=":material/ssid_chart:")

if result.baseline:  # the heading names the kernel the column compares with: the baseline actually used
    st.subheader(
        t("cx_cross", base=kernel_label(result.baseline))
    )  # one type per column: the lengths as text beside "never"
    st.dataframe(
        {
            t("cx_col.kernel"): [kernel_label(k) for k in result.crossovers],
            t("cx_from", base=kernel_label(result.baseline)): [
                str(v) if v else t("cx_never") for v in result.crossovers.values()
            ],
        },
        hide_index=True,
    )

if result.share is not None:  # the matmul is measured at the end of a sweep that ran to completion
    st.subheader(t("cx_gflops", peak=job.matmul_gflops))
    share = pd.DataFrame(result.share, columns=["kernel", "seq_len", "gflops", "share", "flag"])
    flags = {"implausible": t("cx_share_flag"), "noisy": t("cx_share_noisy")}
    share = shown(
        share.assign(share=share["share"].round(1), flag=[flags.get(f, t("cx_share_ok")) for f in share["flag"]])
    )
    st.dataframe(share.rename(columns={"share": t("cx_col_share"), "flag": t("cx_col_reliable")}), hide_index=True)
    if any(r["flag"] for r in result.share):
        st.caption(t("cx_share_note"))
verdict = ", ".join(f"{kernel_label(k)}: L ≥ {v}" for k, v in result.verdict) or t("cx_never")
st.info(t("cx_rule", verdict=verdict))
d_model, params = bench.projection_params(heads, d_head)
st.caption(t("cx_params", d=d_model, p=params))

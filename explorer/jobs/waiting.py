"""A page's view of its background jobs (``explorer.jobs.heavy``): which ones this session waits for, and
while one computes, a progress bar with "computing…, N ahead of you" that polls the job without
holding the script thread; when a part arrives (or the job ends) the page is drawn again with it."""

from __future__ import annotations

import time

import streamlit as st

from attn_core import AttentionConfigError
from explorer.base import session
from explorer.base.i18n import error_text, t
from explorer.base.runtime import session_id
from explorer.base.safe import md
from explorer.jobs.heavy import HEAVY, Job, key_of

POLL_S = 0.25  # how often a page looks at a job that computes
# ... and at one still in the queue: its position moves at most once per job ahead. A class typing 30 sentences of
# its own at once had 30 pages polling 4 times a second, reruns taken from everyone else's pages
# (benchmarks/results/explain_burst_cpu.txt). A job that starts is seen within this, and its parts as they come.
QUEUED_POLL_S = 1.0
EXPECTED_S = {  # a job that sends one part: its bar moves by time, up to 95 %, at this pace (a quiet 2-core machine)
    "shapley": 3.0,
    "pair": 1.0,
    "pair_shapley": 4.0,
    "importance": 1.5,
    "patching": 3.0,
    "pruning": 6.0,
    "head_stats": 8.0,
    "next_token_importance": 1.0,  # the shipped decoder's 16 heads: 0.1 s (benchmarks/results/decoder_cpu.txt)
    "next_token_patching": 1.0,
    "decoder_roles": 4.0,
    "next_token_copying": 0.5,  # one batch of 1 + 16 rows, 49 tokens: ~0.1 s (benchmarks/results/copying_cpu.txt)
    "next_token_generation": 0.5,  # 8 tokens, their check: 0.2-0.5 s (benchmarks/results/nexttoken_page_cpu.txt)
    "next_token_branches": 0.5,
    "why_weight": 0.5,  # MiniLM, layer 4: 0.25 s, two forward passes (benchmarks/results/why_cpu.txt)
    "atlas": 0.3,
    # minimal pairs: both sentences' runs, ~0.1 s on MiniLM (the two views alone: 0.09 s); a decoder's 16 heads
    # ablated in both, ~0.08 s; heads matched on the probe set, 5-12 s (benchmarks/results/pair_cpu.txt)
    "minimal_pair": 0.3,
    "minimal_pair_ablation": 0.3,
    "match_heads": 12.0,
    "match_lab": 0.2,
}


def ask(page: str, requests: dict[str, tuple[str, dict]]) -> dict[str, Job]:
    """The jobs for this run of ``page`` ({name: (kind, args)}); the jobs the session waited for on
    its last run of this page and no longer asks for are left (cancelled if nobody else waits)."""
    me = session_id()
    jobs = {name: HEAVY.ask(kind, args, me) for name, (kind, args) in requests.items()}
    keys = [list(key_of(job.kind, job.args)) for job in jobs.values()]
    slot = f"heavy_watching_{page}"
    for old in session.get(slot) or []:
        if old not in keys:
            job = HEAVY.get(tuple(old))
            if job is not None:
                HEAVY.leave(job, me)
    session.put(slot, keys)
    return jobs


def warm() -> None:
    HEAVY.warm()


def share(job: Job) -> float:
    """How far the job has come, 0 to 1 (a job of one part: by its time against the expected)."""
    if job.done:
        return 1.0
    if job.state != "running" or job.started is None:
        return 0.0
    if job.kind in EXPECTED_S:
        return min(0.95, (time.time() - job.started) / EXPECTED_S[job.kind])
    return max(0.02, job.progress)


def failed(job: Job) -> None:
    code, params = job.error
    if code:
        params = dict(params)
        try:
            err = AttentionConfigError(params.pop("field", "sentence"), code, **params)
        except (KeyError, TypeError, ValueError):
            err = None
        if err is not None:
            st.warning(t("invalid", msg=md(" ".join(error_text(err)))), icon=":material/warning:")
            return
    st.error(t("heavy_failed", msg=md(job.message or job.state)), icon=":material/warning:")
    if st.button(t("heavy_retry"), key=f"heavy_retry_{job.id}"):  # its worker died: compute it anew
        HEAVY.retry_now()
        st.rerun()


def status(job: Job) -> bool:
    """Draw the job's state where it is called; True when it is done (its result complete)."""
    if job.done:
        return True
    if job.state in ("failed", "stopped"):
        failed(job)
        return False
    POLLERS[pace(job)](job, seen(job))
    return False


def seen(job: Job) -> tuple:
    """What the page has drawn of a job: its state and the parts that are new to the page (an Explain
    job's first part is what the page computed itself)."""
    return job.state, max(0, job.parts - DRAWN_ALREADY.get(job.kind, 0))


DRAWN_ALREADY = {"explain": 1}


def pace(job: Job) -> float:
    """Seconds between two looks of the page at ``job``: often while it computes, less while it waits its turn."""
    return POLL_S if job.state == "running" else QUEUED_POLL_S


def _progress(job: Job, drawn: tuple) -> None:
    if seen(job) != drawn:  # something arrived (a part, or the job started): draw the page again with it
        st.rerun(scope="app")
    ahead = HEAVY.position(job)
    text = t("heavy_ahead", n=ahead) if ahead else t("heavy_running")
    st.progress(share(job), text=text)


POLLERS = {every: st.fragment(run_every=every)(_progress) for every in (POLL_S, QUEUED_POLL_S)}


def pending() -> None:
    """In place of a section whose numbers have not arrived yet."""
    st.caption(t("heavy_pending"))

"""The class poll on the page: a student's answer sent to the lesson's store, the class's count
after the reveal, and the teacher's live view (histogram, CSV of the lesson, end of the lesson).

When the store cannot be reached (``PollUnavailable``) the page says so in the UI's language and
goes on: the student's own predict-then-reveal never depends on it. An answer that could not be
sent is kept in the session and sent again on the session's next run once the store is back.
"""

from __future__ import annotations

import csv
import io

import streamlit as st

from . import figures as fig
from . import poll, session, widgets
from .i18n import t
from .poll import PollUnavailable
from .views import chart

PENDING = "_poll_pending"


def describe(question: tuple, tok: str) -> str:
    """A question in words for the teacher's CSV: its page, its sentence and the focus token."""
    pairs = [dict(x) for x in question[1:] if isinstance(x, tuple) and all(isinstance(p, tuple) for p in x)]
    sentence = next((d["sentence"] for d in pairs if "sentence" in d), None)
    if sentence is None:
        sentence = max((x for x in question[1:] if isinstance(x, str)), key=len, default="")
    return f"{question[0]} · {sentence} · '{tok}'"


def unavailable(teacher: bool = False) -> None:
    st.warning(t("poll_unavailable_teacher" if teacher else "poll_unavailable"), icon=":material/cloud_off:")


def _send(code: str, question: tuple, token: int, meta: dict) -> bool:
    from .server import session_id

    try:
        poll.POLLS.answer(code, question, session_id(), token, meta)
    except PollUnavailable:
        return False
    return True


def submit(code: str, question: tuple, token: int, tok: str, labels: list[str]) -> None:
    """The learner's answer to the lesson's count (kept to send later when the store is down)."""
    meta = {"label": describe(question, tok), "tokens": list(labels)}
    if _send(code, question, token, meta):
        session.pop(PENDING)
    else:
        session.put(PENDING, (code, question, token, meta))


def class_count(code: str, question: tuple, labels: list[str], truth: int) -> None:
    """After the reveal: the class's answers to this question (or the notice that nobody counts now)."""
    pending = session.get(PENDING)
    if pending is not None and _send(*pending):
        session.pop(PENDING)
    try:
        counts = poll.POLLS.tally(code, question, len(labels))
    except PollUnavailable:
        unavailable()
        return
    chart(fig.bars(counts, labels, title=t("predict_class", n=sum(counts)), highlight=truth), "predict_class")


def lesson_csv(code: str) -> str:
    """The lesson's answers per question: question, key token, count (no session ids)."""
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["question", "key_token", "count"])
    try:
        w.writerows(poll.POLLS.export(code))
    except PollUnavailable:
        w.writerow([t("poll_unavailable_teacher"), "", ""])
    return out.getvalue()


def teacher_view(code: str, question: tuple, truth: int, labels: list[str], tok: str) -> None:
    st.subheader(t("predict_teacher", code=code))

    @st.fragment(run_every=2.0)  # the histogram follows the answers without reloading
    def live() -> None:
        try:
            counts = poll.POLLS.tally(code, question, len(labels))
        except PollUnavailable:
            unavailable(teacher=True)
            return
        chart(fig.bars(counts, labels, title=t("predict_class", n=sum(counts))), "predict_teacher_bars")
        st.caption(t("predict_answers", n=sum(counts), tok=tok))

    live()
    shown = widgets.toggle(st, t("predict_show_truth"), key="predict_show_truth")
    if shown:
        st.info(t("predict_truth", tok=tok, truth=labels[truth]))
    c1, c2 = st.columns(2)
    c1.download_button(
        t("poll_download"),
        data=lambda: lesson_csv(code),  # made when clicked: the whole lesson as it is then
        file_name=f"lesson-{code}.csv",
        mime="text/csv",
        on_click="ignore",
        key="poll_download",
    )
    if c2.button(t("predict_end"), key="predict_end"):
        try:
            poll.POLLS.end(code)
        except PollUnavailable:
            unavailable(teacher=True)
        else:
            st.rerun()
    if not shown:  # the projector shows the class's answers, not the weights, until the answer is shown
        st.caption(t("predict_teacher_hidden"))
        st.stop()


def predict_then_reveal(row, question: tuple, tok: str, k_words: list[str]) -> None:
    """Predict mode: the learner picks the key that ``tok`` will attend to most (``row``: its
    weights), then reveals the truth with the answer marked. ``question``: plain values naming what
    is asked (the page, its settings, the head, the focus); the same question on every session is
    one tally. With ``?lesson=CODE`` the answers of every session that opened the lesson are
    tallied; ``?teacher=1`` shows the tally live instead. Stops the page (or the fragment) until
    the answer is in."""
    code = session.url("lesson")  # checked by poll.check_url before the page ran
    code = code if poll.valid_code(code) else None
    teacher = session.url("teacher") in ("1", "true")
    row = [float(w) for w in row]
    truth = max(range(len(row)), key=row.__getitem__)
    labels = fig.labels(k_words)
    if teacher and code:
        teacher_view(code, question, truth, labels, tok)
        return
    state = session.get("_predict")
    if not state or state.get("q") != question:
        state = {"q": question, "answer": None}
        session.put("_predict", state)
    if state["answer"] is None:
        st.info(t("predict_ask", tok=tok), icon=":material/psychology_alt:")
        pick = widgets.radio(  # a stale label (another sentence's) is dropped: nothing picked
            st,
            t("predict_pick"),
            range(len(k_words)),
            format_func=lambda j: labels[j],
            horizontal=True,
            default=None,
            key="predict_pick",
        )
        if st.button(
            t("predict_reveal"), type="primary", disabled=pick is None, key="predict_reveal", shortcut="Enter"
        ):
            state["answer"] = int(pick)
            if code:
                submit(code, question, int(pick), tok, labels)
            st.rerun()
        st.stop()  # the weights stay hidden until the answer is in
    right = state["answer"] == truth
    (st.success if right else st.warning)(
        t(
            "predict_right" if right else "predict_wrong",
            tok=tok,
            mine=labels[state["answer"]],
            truth=labels[truth],
            w=row[truth],
        ),
        icon=":material/check_circle:" if right else ":material/lightbulb:",
    )
    if code:
        class_count(code, question, labels, truth)

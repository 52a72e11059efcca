"""The class poll on the page: a student's answer sent to the lesson's store, the class's count
after the reveal, and the teacher's live view (histogram, CSV of the lesson, end of the lesson).

When the store cannot be reached (``PollUnavailable``) the page says so in the UI's language and
goes on: the student's own predict-then-reveal never depends on it. An answer that could not be
sent is kept in the session and sent again on the session's next run once the store is back.
"""

from __future__ import annotations

import csv
import html
import io

import streamlit as st

from attn_core.classroom import check, store
from attn_core.classroom.base import PollUnavailable
from explorer import charts
from explorer import figures as fig
from explorer.base import session, widgets
from explorer.base.i18n import t
from explorer.base.safe import plot
from explorer.charts.views import chart
from explorer.poll import link as poll

PENDING = "_poll_pending"
# the pages that ask a predict-then-reveal question
QUESTION_PAGES = ("steps", "multihead", "cross", "model", "next_token")
# the question, the answers and the truth in words (a page may ask another question: ``predict_then_reveal``)
TEXTS = {"ask": "predict_ask", "right": "predict_right", "wrong": "predict_wrong", "truth": "predict_truth"}
QUESTIONS = ("lesson_questions_one", "lesson_questions")  # "1 question", "{n} questions"


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
    from explorer.base.runtime import session_id

    try:
        store.POLLS.answer(code, question, session_id(), token, meta)
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
        counts = store.POLLS.tally(code, question, len(labels))
    except PollUnavailable:
        unavailable()
        return
    chart(class_figure(counts, labels, truth=truth), "predict_class")


def plural(n: int, one: str, many: str, **fmt) -> str:
    """The catalogue's text for a count: ``one`` when it is 1 (English says "1 answer"), else ``many``."""
    return t(one if n == 1 else many, n=n, **fmt)


def whole_step(most: int, marks: int = 6) -> int:
    """The count axis's step: a whole number of answers (1, 2, 5, 10, 20, ...) that marks 0 to ``most`` with at
    most ``marks`` steps. Left to Plotly, 3 answers were marked at half-steps, and written as whole numbers they read
    "0, 1, 1, 2, 2"."""
    step = 1
    while most > step * marks:
        step = step * 5 // 2 if str(step).startswith("2") else step * 2
    return step


def class_figure(counts: list[int], labels: list[str], *, truth: int | None, title: str | None = None):
    """The class's answers as bars: whole numbers on the bars, the count in the title in the
    singular or the plural, and a text alternative that names a tie as a tie."""
    counts = [int(c) for c in counts]
    n = sum(counts)
    f = charts.bars(
        counts,
        labels,
        title=title or plural(n, "predict_class_one", "predict_class"),
        highlight=truth,
    )
    f.update_traces(text=[str(c) for c in counts], hovertemplate="%{x}<br>%{y:d}<extra></extra>")
    step = whole_step(max(counts, default=0))
    yaxis = dict(tickformat="d", rangemode="tozero", tick0=0, dtick=step)
    f.update_layout(yaxis=yaxis, meta={"alt": class_alt(counts, labels)})
    return f


def class_alt(counts: list[int], labels: list[str]) -> str:
    """The chart's main fact: the key token with the most answers, or the tie, or no answers."""
    most = max(counts, default=0)
    if most == 0:
        return t("class_alt_none")
    top = [f"'{html.unescape(labels[i])}'" for i, c in enumerate(counts) if c == most]
    if len(top) == 1:
        return plural(most, "class_alt_top_one", "class_alt_top", name=top[0])
    return plural(most, "class_alt_tie_one", "class_alt_tie", names=t("list_join").join(top))


def lesson_csv(code: str) -> str:
    """The lesson's answers per question: question, key token, count (no session ids)."""
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["question", "key_token", "count"])
    try:
        w.writerows(store.POLLS.export(code))
    except PollUnavailable:
        w.writerow([t("poll_unavailable_teacher"), "", ""])
    return out.getvalue()


def teacher_view(code: str, question: tuple, truth: int, labels: list[str], tok: str, texts: dict = TEXTS) -> None:
    st.subheader(t("predict_teacher", code=code))

    @st.fragment(run_every=2.0)  # the histogram follows the answers without reloading
    def live() -> None:
        try:
            counts = store.POLLS.tally(code, question, len(labels))
        except PollUnavailable:
            unavailable(teacher=True)
            return
        chart(class_figure(counts, labels, truth=None), "predict_teacher_bars")
        st.caption(plural(sum(counts), "predict_answers_one", "predict_answers", tok=tok))

    live()
    shown = widgets.toggle(st, t("predict_show_truth"), key="predict_show_truth")
    if shown:
        st.info(t(texts["truth"], tok=tok, truth=labels[truth]))
    teacher_tools(code)
    if not shown:  # the projector shows the class's answers, not the weights, until the answer is shown
        st.caption(t("predict_teacher_hidden"))
        st.stop()


def lesson_questions(code: str) -> list[tuple[str, list[str], list[int]]]:
    """Every question of the lesson, in order: (its description, key-token labels, counts)."""
    questions: dict[str, tuple[list[str], list[int]]] = {}
    for label, token, count in store.POLLS.export(code):
        names, counts = questions.setdefault(label, ([], []))
        names.append(token)
        counts.append(int(count))
    return [(label, names, counts) for label, (names, counts) in questions.items()]


SHORT = 60  # characters of a question's sentence in its chart's title


def question_title(label: str) -> tuple[str, str]:
    """A question of the lesson in words, in the UI's language, for its chart's title: (the page's name and the
    question asked, its sentence shortened), from the description a student's answer stored (``describe``: the
    page's key, the sentence and the token, in no language). A description of another form is shown as it is, with
    no second line. Plain text: the title escapes it (the sentence and the token are what the learner typed)."""
    page, _, rest = label.partition(" · ")
    sentence, _, quoted = rest.rpartition(" · ")
    if page not in QUESTION_PAGES or len(quoted) < 2 or quoted[0] != "'" or quoted[-1] != "'":
        return label, ""
    if len(sentence) > SHORT:
        sentence = sentence[: SHORT - 1].rstrip() + "…"
    asked = t("lesson_q_next" if page == "next_token" else "lesson_q_attend", tok=quoted[1:-1])
    return t("lesson_q_title", page=t(f"page.{page}"), question=asked), t("lesson_q_sentence", sentence=sentence)


def lesson_view(code: str) -> None:
    """The teacher's link on a page without a question (the start page): the lesson's tally, every
    question asked so far with the class's answers, live; the lesson's CSV and its end."""
    st.subheader(t("lesson_tally", code=code))

    @st.fragment(run_every=2.0)
    def live() -> None:
        try:
            questions = lesson_questions(code)
        except PollUnavailable:
            unavailable(teacher=True)
            return
        n = sum(sum(counts) for _, _, counts in questions)
        if not questions:
            pages = t("list_join").join(t(f"page.{key}") for key in QUESTION_PAGES)
            st.caption(t("lesson_tally_empty", pages=pages))
        else:
            answers = plural(n, "lesson_answers_one", "lesson_answers")
            st.caption(t("lesson_tally_count", answers=answers, questions=plural(len(questions), *QUESTIONS)))
        for i, (label, names, counts) in enumerate(questions):
            asked, sentence = question_title(label)
            figure = class_figure(counts, names, truth=None, title=asked)
            if sentence:  # a second line: the title's text is escaped, the line break is the figure's own
                figure.update_layout(title_text=f"{plot(asked)}<br>{plot(sentence)}", margin=dict(t=70))
            chart(figure, f"lesson_tally_{i}")

    live()
    teacher_tools(code)


def teacher_tools(code: str) -> None:
    """The lesson's CSV and the button that ends it."""
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
            store.POLLS.end(code)
            check.end(check.CHECKS, code)  # the lesson's concept check ends with it
        except PollUnavailable:
            unavailable(teacher=True)
        else:
            st.rerun()


def ask(
    state: dict, code: str | None, question: tuple, tok: str, labels: list[str], texts: dict, slot: str = ""
) -> None:
    """The question and the keys to pick from; Reveal records the answer (and sends it to the lesson's poll)."""
    st.info(t(texts["ask"], tok=tok), icon=":material/psychology_alt:")
    pick = widgets.radio(  # a stale label (another sentence's) is dropped: nothing picked
        st,
        t("predict_pick"),
        range(len(labels)),
        format_func=lambda j: labels[j],
        horizontal=True,
        default=None,
        key="predict_pick" + slot,
    )
    reveal = st.button(
        t("predict_reveal"), type="primary", disabled=pick is None, key="predict_reveal" + slot, shortcut="Enter"
    )
    if reveal:
        state["answer"] = int(pick)
        if code:
            submit(code, question, int(pick), tok, labels)
        st.rerun()


def predict_then_reveal(
    row,
    question: tuple,
    tok: str,
    k_words: list[str],
    *,
    texts: dict = TEXTS,
    slot: str = "",
    labels: list[str] | None = None,
) -> None:
    """Predict mode: the learner picks the key that ``tok`` will attend to most (``row``: its
    weights), then reveals the truth with the answer marked. ``question``: plain values naming what
    is asked (the page, its settings, the head, the focus); the same question on every session is
    one tally. With ``?lesson=CODE`` the answers of every session that opened the lesson are
    tallied; ``?teacher=1`` shows the tally live instead. Stops the page (or the fragment) until
    the answer is in. ``texts``: the catalogue keys of its question, answers and truth (``TEXTS``; the Next token
    page asks "which token comes next?", ``row`` then the candidates' probabilities). ``slot``: a second question
    on the same page keeps its own answer (and its own widgets) under this suffix. ``labels``: the options' names
    when the page's chart names them otherwise than ``fig.labels`` (numbered from 0), escaped as a chart's are (the
    Next token page's bars: the rank from 1 and the token's label), so that an option reads as its bar."""
    code = poll.lesson()  # checked and carried by poll.check_url before the page ran
    teacher = poll.teacher()
    row = [float(w) for w in row]
    truth = max(range(len(row)), key=row.__getitem__)
    labels = fig.labels(k_words) if labels is None else list(labels)
    if teacher and code:
        teacher_view(code, question, truth, labels, tok, texts)
        return
    state = session.get("_predict" + slot)
    if not state or state.get("q") != question:
        state = {"q": question, "answer": None}
        session.put("_predict" + slot, state)
    if state["answer"] is None:
        ask(state, code, question, tok, labels, texts, slot)
        st.stop()  # the weights stay hidden until the answer is in
    right = state["answer"] == truth
    (st.success if right else st.warning)(
        t(
            texts["right"] if right else texts["wrong"],
            tok=tok,
            mine=labels[state["answer"]],
            truth=labels[truth],
            w=row[truth],
        ),
        icon=":material/check_circle:" if right else ":material/lightbulb:",
    )
    if code:
        class_count(code, question, labels, truth)

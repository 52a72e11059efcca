"""A live class poll for predict-then-reveal: the answers of every session on this server that opened
the same lesson code, tallied in memory.

No accounts and no personal data: an answer is a key token's index and the random id Streamlit
gives a browser session. A lesson's answers are kept per question (its sentence, focus token and
settings: a new question starts a new count), until the teacher ends the lesson or nobody has
used it for ``TIMEOUT_S``; at most ``MAX_LESSONS`` lessons are kept (the oldest is dropped first),
so the store never grows without limit. Answers from a session that left stay until the lesson ends.
"""

from __future__ import annotations

import re
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

MAX_LESSONS = 64
MAX_QUESTIONS = 32  # per lesson
TIMEOUT_S = 4 * 3600.0
CODE = re.compile(r"^[A-Za-z0-9-]{1,16}$")


@dataclass
class Lesson:
    used: float = field(default_factory=time.time)
    questions: OrderedDict = field(default_factory=OrderedDict)  # question -> {session id: token index}


class Polls:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.lessons: OrderedDict[str, Lesson] = OrderedDict()

    def _lesson(self, code: str) -> Lesson:
        now = time.time()
        for old in [c for c, lesson in self.lessons.items() if now - lesson.used > TIMEOUT_S]:
            del self.lessons[old]
        lesson = self.lessons.get(code)
        if lesson is None:
            lesson = self.lessons[code] = Lesson()
            while len(self.lessons) > MAX_LESSONS:
                self.lessons.popitem(last=False)  # the oldest lesson goes first
        lesson.used = now
        self.lessons.move_to_end(code)
        return lesson

    def answer(self, code: str, question: tuple, session: str, token: int) -> None:
        with self.lock:
            lesson = self._lesson(code)
            answers = lesson.questions.setdefault(question, {})
            lesson.questions.move_to_end(question)
            while len(lesson.questions) > MAX_QUESTIONS:
                lesson.questions.popitem(last=False)
            answers[session] = token

    def tally(self, code: str, question: tuple, n_tokens: int) -> list[int]:
        """How many sessions chose each key token for this question."""
        with self.lock:
            answers = self._lesson(code).questions.get(question, {})
            counts = [0] * n_tokens
            for token in answers.values():
                if 0 <= token < n_tokens:
                    counts[token] += 1
            return counts

    def end(self, code: str) -> None:
        with self.lock:
            self.lessons.pop(code, None)


POLLS = Polls()


def valid_code(code: str | None) -> bool:
    return code is not None and bool(CODE.match(code))


def check_url() -> None:
    """``?lesson=`` and ``?teacher=`` checked before anything is drawn: a malformed one is dropped
    from the link and named in the sidebar's notice (never an error)."""
    import streamlit as st

    from .controls import NOTICES

    code = st.query_params.get("lesson")
    if code is not None and not valid_code(code):
        del st.query_params["lesson"]
        st.session_state.setdefault(NOTICES, []).append("lesson")
    teacher = st.query_params.get("teacher")
    if teacher is not None and teacher not in ("0", "1", "true", "false"):
        del st.query_params["teacher"]
        st.session_state.setdefault(NOTICES, []).append("teacher")

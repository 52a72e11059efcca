"""A live class poll for predict-then-reveal: the answers of every session that opened the same
lesson code, tallied in one store.

No accounts and no personal data: an answer is a key token's index and the random id Streamlit
gives a browser session. A lesson's answers are kept per question (its sentence, focus token and
settings: a new question starts a new count), until the teacher ends the lesson or nobody has
used it for ``TIMEOUT_S``; at most ``MAX_LESSONS`` lessons (the oldest is dropped first), at most
``MAX_QUESTIONS`` questions per lesson and ``MAX_ANSWERS`` answers per question are kept, so the
store never grows without limit. Answers from a session that left stay until the lesson ends.

Two stores behind one interface (``answer``, ``tally``, ``export``, ``end``):

- ``Polls``, in this process's memory: the default, nothing to install; one process only.
- ``attn_core.classroom.redis_store.RedisStore`` when ``ATTN_EXPLORER_REDIS=redis://host:port/db`` is set: every
  replica behind the balancer reads and writes the same lessons, and a replica's restart loses
  nothing. When that store cannot be reached within a short timeout its calls raise
  ``PollUnavailable`` (the page says so and predict-then-reveal goes on for each student alone).

No Streamlit here: the lesson a session's link carries is read by the app.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

from .base import (
    ENV,
    MAX_ANSWERS,
    MAX_LESSONS,
    MAX_QUESTIONS,
    TIMEOUT_S,
    export_rows,
)


@dataclass
class Lesson:
    used: float = field(default_factory=time.time)
    questions: OrderedDict = field(default_factory=OrderedDict)  # question -> {session id: token index}
    meta: dict = field(default_factory=dict)  # question -> {"label": ..., "tokens": [...]}


class Polls:
    """The in-memory store (one process). ``clock``: seconds, for the idle timeout (tests move it);
    the limits default to this module's (read at each call)."""

    def __init__(self, *, clock=time.time, max_lessons=None, max_questions=None, max_answers=None, timeout_s=None):
        self.lock = threading.Lock()
        self.lessons: OrderedDict[str, Lesson] = OrderedDict()
        self.clock = clock
        self._limits = (max_lessons, max_questions, max_answers, timeout_s)

    def limits(self) -> tuple[int, int, int, float]:
        defaults = (MAX_LESSONS, MAX_QUESTIONS, MAX_ANSWERS, TIMEOUT_S)
        return tuple(d if v is None else v for v, d in zip(self._limits, defaults, strict=True))

    def _lesson(self, code: str, create: bool = True) -> Lesson:
        """The lesson, its use noted (a lesson only read and not there is not made: an empty one)."""
        max_lessons, _, _, timeout_s = self.limits()
        now = self.clock()
        for old in [c for c, lesson in self.lessons.items() if now - lesson.used > timeout_s]:
            del self.lessons[old]
        lesson = self.lessons.get(code)
        if lesson is None and not create:
            return Lesson(used=now)
        if lesson is None:
            lesson = self.lessons[code] = Lesson(used=now)
            while len(self.lessons) > max_lessons:
                self.lessons.popitem(last=False)  # the oldest lesson goes first
        lesson.used = now
        self.lessons.move_to_end(code)
        return lesson

    def answer(self, code: str, question: tuple, session: str, token: int, meta: dict | None = None) -> bool:
        """Record (or replace) ``session``'s answer; False when the question already has ``MAX_ANSWERS``."""
        _, max_questions, max_answers, _ = self.limits()
        with self.lock:
            lesson = self._lesson(code)
            answers = lesson.questions.setdefault(question, {})
            lesson.questions.move_to_end(question)
            if meta is not None:
                lesson.meta[question] = meta
            while len(lesson.questions) > max_questions:
                old, _ = lesson.questions.popitem(last=False)
                lesson.meta.pop(old, None)
            if session not in answers and len(answers) >= max_answers:
                return False
            answers[session] = int(token)
            return True

    def tally(self, code: str, question: tuple, n_tokens: int) -> list[int]:
        """How many sessions chose each key token for this question."""
        with self.lock:
            answers = self._lesson(code, create=False).questions.get(question, {})
            counts = [0] * n_tokens
            for token in answers.values():
                if 0 <= token < n_tokens:
                    counts[token] += 1
            return counts

    def questions(self, code: str) -> list[tuple[dict, list[int]]]:
        """Every question of the lesson, oldest use first: (its description, its answers), no session ids."""
        with self.lock:
            lesson = self._lesson(code, create=False)
            return [(dict(lesson.meta.get(q, {})), list(a.values())) for q, a in lesson.questions.items()]

    def export(self, code: str) -> list[tuple[str, str, int]]:
        """Every question of the lesson: (question, key token, count) rows, no session ids."""
        return export_rows(self.questions(code))

    def end(self, code: str) -> None:
        with self.lock:
            self.lessons.pop(code, None)


def make_store(url: str | None = None, *, prefix: str | None = None, **limits):
    """The store ``ATTN_EXPLORER_REDIS`` names (a Redis URL), else the in-memory one. ``prefix``: its Redis keys'
    (another store beside the poll's, such as the concept check's); ``limits``: ``Polls``'s keywords."""
    url = os.environ.get(ENV, "").strip() if url is None else url
    if not url:
        return Polls(**limits)
    from .redis_store import PREFIX, RedisStore

    try:
        return RedisStore(url, prefix=prefix or PREFIX, **limits)
    except ValueError as err:  # the operator's URL: said once on the server's console, the page says unavailable
        print(f"{ENV}={url!r} cannot be used ({err}): the class poll is unavailable", file=sys.stderr)
        from .redis_store import Unusable

        return Unusable(str(err))


POLLS = make_store()

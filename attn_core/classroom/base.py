"""What both class-poll stores share (``store.Polls`` in memory, ``redis_store.RedisStore`` over Redis): the
limits, the lesson code's form, the error for an unreachable store, question ids and the teacher's CSV rows.
A leaf module: each store imports it, neither imports the other.
"""

from __future__ import annotations

import hashlib
import json
import re

MAX_LESSONS = 64
MAX_QUESTIONS = 32  # per lesson
MAX_ANSWERS = 1000  # per question: sessions beyond it are not counted (a lecture hall is ~100)
TIMEOUT_S = 4 * 3600.0
CODE = re.compile(r"^[A-Za-z0-9-]{1,16}$")
ENV = "ATTN_EXPLORER_REDIS"


class PollUnavailable(Exception):
    """The shared store cannot be reached now (its calls gave up after a short timeout)."""


def question_id(question: tuple) -> str:
    """A question's name in a shared store: the same plain values give the same id in every process."""
    text = json.dumps(question, default=str, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def export_rows(questions: list[tuple[dict, list[int]]]) -> list[tuple[str, str, int]]:
    """(question, key token, count) rows from each question's description and its answers' tokens."""
    rows = []
    for meta, tokens in questions:
        labels = list(meta.get("tokens") or [])
        n = max([len(labels)] + [t + 1 for t in tokens if t >= 0])
        counts = [0] * n
        for token in tokens:
            if 0 <= token < n:
                counts[token] += 1
        label = meta.get("label") or "?"
        rows += [(label, labels[i] if i < len(labels) else str(i), c) for i, c in enumerate(counts)]
    return rows


def valid_code(code: str | None) -> bool:
    return code is not None and bool(CODE.match(code))

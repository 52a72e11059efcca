"""The concept check's answers, in the class poll's store (``attn_core.classroom.store``): the same two stores (in this
process, or Redis for every replica), the same lesson codes, idle timeout and bounds, under keys of their own
(``ae:check:``) so that the poll's tally and CSV never show them.

A question of this store is one item in one phase, ``("check", item id, phase)``; an answer is the option's index
under the student's session id, so answering again replaces the earlier answer (one per student and phase). A
sheet is checked whole before anything is written: a forged item id, option index or phase is a ``CheckError``
and counts nothing. The teacher's switch that opens the post check for the class is the question ``("open",)``,
answered 1. Ending the lesson (``end``) clears all of it, as the poll's end does.
"""

from __future__ import annotations

from attn_core.check.bank import MAX_CHECK, PHASES, CheckError
from attn_core.check.report import report as build_report

from .base import valid_code
from .store import make_store

PREFIX = "ae:check:"
OPEN = ("open",)
MAX_QUESTIONS = 2 * MAX_CHECK + 1  # per lesson: every item before and after, and the post check's switch


def make_check_store(url: str | None = None):
    """The check's store beside the poll's (``ATTN_EXPLORER_REDIS``, else this process's memory)."""
    return make_store(url, prefix=PREFIX, max_questions=MAX_QUESTIONS)


CHECKS = make_check_store()


def question(item_id: str, phase: str) -> tuple:
    return ("check", item_id, phase)


def validate(code: str, phase: str, items: list[dict], answers: dict) -> dict[str, int]:
    """The sheet's answers {item id: option index}, every one checked against the check's rendered ``items``."""
    if not valid_code(code):
        raise CheckError("code", value=str(code)[:40])
    if phase not in PHASES:
        raise CheckError("phase", value=str(phase)[:40])
    known = {item["id"]: item for item in items}
    sheet = {}
    for item_id, option in answers.items():
        if item_id not in known:
            raise CheckError("item", value=str(item_id)[:40])
        n = len(known[item_id]["options"])
        if isinstance(option, bool) or not isinstance(option, int) or not 0 <= option < n:
            raise CheckError("option", item=item_id, value=str(option)[:40], n=n)
        sheet[item_id] = option
    return sheet


def hand_in(store, code: str, session: str, phase: str, items: list[dict], answers: dict) -> int:
    """Record a student's sheet (``answers``: item id -> option index; an item left out is not counted): checked
    whole first (``CheckError``, nothing written), then one answer per item; how many were counted (an item whose
    count is full, ``MAX_ANSWERS``, counts no more). ``PollUnavailable`` when the store cannot be reached."""
    sheet = validate(code, phase, items, answers)
    known = {item["id"]: item for item in items}
    counted = 0
    for item_id, option in sheet.items():
        item = known[item_id]
        meta = {
            "label": f"{item_id} · {phase}",
            "item": item_id,
            "phase": phase,
            "answer": int(item["answer"]),
            "options": list(item["options"]),
            "tokens": list(item["options"]),  # the poll's CSV rows, should anyone export this store
        }
        counted += bool(store.answer(code, question(item_id, phase), session, option, meta))
    return counted


def report(store, code: str) -> dict:
    """The lesson's report (``attn_core.check.report``), from the store."""
    if not valid_code(code):
        raise CheckError("code", value=str(code)[:40])
    return build_report(store.questions(code))


def open_post(store, code: str) -> None:
    """The teacher's switch: every session of the lesson, on any replica, is offered the post check."""
    store.answer(code, OPEN, "teacher", 1, {"label": "open"})


def post_open(store, code: str) -> bool:
    return store.tally(code, OPEN, 2)[1] > 0


def end(store, code: str) -> None:
    store.end(code)

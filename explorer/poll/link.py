"""The lesson a session joined, read from its link and carried across pages (``?lesson=``, ``?teacher=``,
``?predict=``): the part of the class poll that reads the Streamlit session and URL. The stores themselves
(in memory, Redis, the concept check's) are the engine's, ``attn_core.classroom``.
"""

from __future__ import annotations

from attn_core.classroom.base import valid_code

CARRY = "_lesson_carry"  # session key: the lesson this session joined, and its switches


def check_url() -> None:
    """``?lesson=``, ``?teacher=`` and ``?predict=`` read before anything is drawn, and carried.

    A malformed lesson code or switch is dropped from the link and named in the sidebar's notice
    (never an error). A lesson, once joined, stays with the session on every page: a page switch
    (the sidebar, a start-page card) opens the new page without the old page's parameters, so the
    lesson code and the teacher's switch are written back into the link, and the learner's own
    predict switch is given back to the page's checkbox. A link with another code joins that
    lesson and ``teacher=0`` leaves the teacher's view. Ending a lesson clears its answers: the
    sessions that joined it keep its code, and their next answers start a new count. The
    teacher's link turns predict on unless the teacher turns it off."""
    from explorer.base import session
    from explorer.base.urlcheck import url_switch

    carry = dict(session.get(CARRY) or {})
    code = session.url("lesson")
    if code is not None and not valid_code(code):
        session.drop_url("lesson")
        session.notice("lesson")
    elif code is not None:
        if code != carry.get("lesson"):
            carry = {"lesson": code}  # another lesson: joined afresh
    elif carry.get("lesson"):
        session.set_url("lesson", carry["lesson"])
    teacher = url_switch("teacher")
    if teacher is not None:
        carry["teacher"] = teacher
    elif carry.get("teacher") and carry.get("lesson"):
        session.set_url("teacher", "1")
    mine = session.get("predict")  # the page's checkbox, on a rerun of a page that draws it
    if isinstance(mine, bool):
        carry["predict"] = mine
    elif session.url("predict") is not None:
        value = url_switch("predict")  # a bad value: dropped and named here, on every page
        if value is not None:
            carry["predict"] = value
    elif carry.get("predict") is not None:
        session.put("predict", carry["predict"])  # a page switch: the same choice on the next page
    elif carry.get("teacher") and carry.get("lesson"):
        session.put("predict", True)  # the teacher's link: the class's answers, not the weights
    session.put(CARRY, carry)


def lesson() -> str | None:
    """The lesson this run's link names (checked and carried by ``check_url``)."""
    from explorer.base import session

    code = session.url("lesson")
    return code if valid_code(code) else None


def teacher() -> bool:
    """Whether this run shows the teacher's view of its lesson."""
    from explorer.base import session
    from explorer.base.urlcheck import switch

    return lesson() is not None and switch(session.url("teacher")) is True

"""explorer.base.session and the one way code writes a control's key (controls.assign)."""

import pytest
from streamlit.testing.v1 import AppTest


def script() -> None:
    from explorer import controls
    from explorer.base import session

    try:
        controls.assign({"heads": 3, "no_such_control": 1})
    except KeyError as err:
        session.put("refused", str(err))
    session.put("after_refusal", (session.get("heads"), session.get("no_such_control")))
    controls.assign({"heads": 2, "lab_task": "sort"})
    session.notice("heads")
    ctx = session.run_context()
    ctx.lang = "zh"
    session.put("same_context", session.run_context() is ctx and session.run_context().lang == "zh")
    session.put("fresh_context", session.begin_run().lang is None)


@pytest.fixture
def at():
    app = AppTest.from_function(script, default_timeout=60)
    app.run()
    assert not app.exception
    return app


def test_assign_refuses_a_name_that_is_no_control_and_writes_nothing(at):
    assert "no_such_control" in at.session_state["refused"]
    assert at.session_state["after_refusal"] == (None, None)  # the refused call wrote no part of itself
    assert at.session_state["heads"] == 2
    assert at.session_state["lab_task"] == "sort"


def test_notices_and_the_run_context(at):
    assert at.session_state["_url_notices"] == ["heads"]
    assert at.session_state["same_context"] is True and at.session_state["fresh_context"] is True

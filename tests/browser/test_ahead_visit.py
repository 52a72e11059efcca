"""The tab a server's start visits its lessons with (explorer.classroom.ahead.visit), against a real server."""

from explorer.classroom.ahead.visit import visit
from explorer.classroom.tour import TOUR


def test_a_visit_draws_the_lesson_and_reads_its_buttons(server):
    v = visit(server, "steps", "step=st_qkv&tour=qkv")
    assert v.error is None and v.reruns == 1 and not v.timers  # nothing on a timer: one run
    assert "reset" in v.buttons and v.buttons["reset"].endswith("-reset")
    assert any(f"Lesson 1 of {len(TOUR)}" in text for text in v.said)  # the lesson's own banner: its link was read


def test_a_visit_presses_play_and_stays_until_the_run_has_ended(server):
    seed = 4242  # a run no other test trains on the shared server
    v = visit(server, "lab", f"lab_task=shift&lab_steps=60&seed={seed}", press="lab_play", limit_s=600)
    assert v.error is None and v.pressed
    assert v.reruns > 2 and not v.timers  # the page's poll followed until it stopped
    assert any(text.startswith("**A** · done") and "60 steps" in text for text in v.said), v.said[-5:]


def test_a_page_that_does_not_exist_and_a_button_that_is_not_drawn_are_said(server):
    assert visit(server, "no_such_page").error == "page not found"
    v = visit(server, "steps", "", press="lab_play")
    assert v.error == "no button lab_play" and not v.pressed and v.reruns == 1


def test_a_server_that_does_not_answer_is_a_result_not_a_raise():
    v = visit("http://127.0.0.1:9", "steps", limit_s=5)  # port 9 (discard): nothing listens there
    assert v.error is not None and v.error.startswith("connect") and v.reruns == 0


def test_an_address_that_is_not_the_apps_stream_is_a_result_not_a_raise(server):
    v = visit(server + "/no/such/base", "steps", limit_s=5)  # the server answers, but not with its stream
    assert v.error is not None and v.error.startswith("connect") and v.reruns == 0

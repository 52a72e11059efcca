"""A server's start computes what the tour's lessons ask for (explorer.classroom.ahead): the order, and what it
reports."""

import logging
import threading
import time
from urllib.parse import urlencode

import pytest

from explorer.classroom import ahead
from explorer.classroom.ahead.visit import Visit
from explorer.classroom.tour import TOUR, params


@pytest.fixture(autouse=True)
def _fresh_state(monkeypatch):
    monkeypatch.setattr(ahead, "STATE", {"lessons": {}, "runs": [], "ready": False})


class Lines(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(record.getMessage())

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


@pytest.fixture
def log():
    """What explorer.classroom.ahead writes to the server's log (the suite runs without pytest's logging plugin)."""
    handler = Lines()
    logger = logging.getLogger("explorer.classroom.ahead")
    logger.addHandler(handler)
    yield handler
    logger.removeHandler(handler)


class Recorder:
    """A fake visit and a fake training: what happened, in order."""

    def __init__(self, fail: str = "", train_s: float = 0.2):
        self.events: list[tuple] = []
        self.fail = fail
        self.train_s = train_s

    def visit(self, url, page, query, press="", limit_s=None):
        self.events.append(("visit", page, query, press))
        v = Visit(page, query, seconds=0.01, reruns=1)
        v.pressed = bool(press)
        if page == self.fail:
            v.error = "exception: ValueError"
        return v

    def train(self):
        time.sleep(self.train_s)
        self.events.append(("trained",))
        return []


def run_ahead(rec: Recorder) -> None:
    loading = threading.Thread(target=lambda: time.sleep(0.1))
    loading.start()
    ahead.start(loading, url="http://127.0.0.1:1", train=rec.train, visit=rec.visit).join(30)


def test_every_lesson_is_visited_then_its_button_pressed_once_the_presets_are_trained(log):
    rec = Recorder()
    run_ahead(rec)
    visits = [e for e in rec.events if e[0] == "visit"]
    first = [(e[1], e[2]) for e in visits if not e[3]]
    assert first == [(x.page, urlencode(params(x), safe=",")) for x in TOUR]  # each lesson's own link, in order
    trained = rec.events.index(("trained",))
    presses = [e for e in rec.events[trained:] if e[0] == "visit"]
    assert [(e[1], e[3]) for e in presses] == [(x.page, x.press) for x in TOUR if x.press]
    assert {"lab_play", "cx_run", "vi_play"} <= {e[3] for e in presses}
    assert all(e[3] == "" for e in rec.events[:trained])  # no button pressed while the presets train
    assert ahead.STATE["ready"] and len(ahead.STATE["lessons"]) == len(TOUR) + len(presses)
    assert any(line.startswith(ahead.READY) and "all complete" in line for line in log.lines)


def test_a_lesson_that_fails_is_named_in_the_ready_line_and_the_others_still_run(log):
    rec = Recorder(fail="cross")
    run_ahead(rec)
    line = next(line for line in log.lines if line.startswith(ahead.READY))
    assert "not complete: cross" in line and "all complete" not in line
    assert sum(e[0] == "visit" for e in rec.events) == len(TOUR) + sum(bool(x.press) for x in TOUR)


def test_a_button_the_page_did_not_draw_is_a_lesson_not_complete(log):
    rec = Recorder()

    def no_button(
        url, page, query, press="", limit_s=None
    ):  # as explorer.classroom.ahead.visit says a button not drawn
        v = rec.visit(url, page, query, press)
        v.pressed, v.error = False, f"no button {press}" if press else None
        return v

    loading = threading.Thread(target=lambda: None)
    loading.start()
    ahead.start(loading, url="http://127.0.0.1:1", train=rec.train, visit=no_button).join(30)
    assert ahead.STATE["lessons"]["cost+cx_run"]["error"] == "no button cx_run"
    assert "not complete: cost+cx_run, positions+lab_play, vision+vi_play" in log.text


def test_the_servers_own_address_follows_its_options(monkeypatch):
    from streamlit import config

    options = {
        "server.address": "0.0.0.0",
        "server.port": 8765,
        "server.baseUrlPath": "/class/",
        "server.sslCertFile": None,
    }
    monkeypatch.setattr(config, "get_option", options.get)
    assert ahead.server_url() == "http://127.0.0.1:8765/class"
    options.update({"server.address": "", "server.baseUrlPath": "", "server.sslCertFile": "cert.pem"})
    assert ahead.server_url() == "https://127.0.0.1:8765"

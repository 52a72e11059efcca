"""What a lesson will ask for, ready before it asks: computed at a server's start, in the background, and kept.

Once every offered model is loaded and warmed (``explorer.model.real.load_every_offered``), two threads start:

- the Lab's presets, and the tour's Lab lesson, train one run after another (``explorer.classroom.ahead.lab``): the
runs
  a learner's press asks for, shared by their settings, kept among the server's finished runs;
- every lesson of the tour (``explorer.classroom.tour.TOUR``) is visited once over the server's own protocol, by a tab
  that stays until its page has nothing left to compute (``explorer.classroom.ahead.visit``): the page's cached traces
  and the background jobs it starts (a decoder's generation, a model's parts) are computed as for a learner,
  one lesson at a time, and kept for everyone after as any result is (the traces in the bounded caches, which let
  go of what nobody asked for in three minutes and cost tens of ms to redo; the jobs' results in their stores, the
  oldest dropped first beyond their bounds; only the Lab's runs are pinned). Once the presets are
  trained, each lesson whose question asks for a button (Play in the Lab and on Vision, the Complexity page's
  sweep) is visited again and the button pressed, one after another, the tab staying until the work is done:
  the sweep runs last, with nothing else of this start running beside it (its timings are the machine's).

The jobs run in workers at the lowest CPU priority and the visits one at a time, so a class arriving
meanwhile shares the machine with one lesson's work. Each lesson's and each run's result is written to the
server's log, and a last line says when everything is ready (``benchmarks/lesson_ready.py`` waits for it).
``ATTN_EXPLORER_WARM=models`` warms the models and skips this; ``0`` skips both (``explorer.server``).
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable
from urllib.parse import urlencode

_LOG = logging.getLogger(__name__)
READY = "ahead: ready"  # the log line's start when everything is ready
STATE: dict = {"lessons": {}, "runs": [], "ready": False, "started": False, "total": 0, "seconds": 0.0}  # plain values


def status() -> str | None:
    """What the start page says about it, in the UI's language (None: this server computes nothing ahead)."""
    from explorer.base.i18n import t

    if not STATE["started"]:
        return None
    if not STATE["ready"]:
        return t("ahead_preparing", done=len(prepared()), total=STATE["total"])
    gaps = sorted({k.split("+")[0] for k, v in STATE["lessons"].items() if v["error"]})  # "cost+cx_run": cost's
    if gaps:
        return t("ahead_gaps", names=", ".join(t(f"tour.{key}.title") for key in gaps))
    return t("ahead_ready", total=STATE["total"], seconds=STATE["seconds"])


def prepared() -> list[str]:
    """The tour's lessons whose visit, and the button press it asks for, have ended without an error."""
    from explorer.classroom.tour import TOUR

    done = {k for k, v in STATE["lessons"].items() if v["error"] is None}
    return [x.key for x in TOUR if x.key in done and (not x.press or f"{x.key}+{x.press}" in done)]


def server_url() -> str:
    """This server's own address (its port and base path), from Streamlit's options."""
    from streamlit import config

    address = config.get_option("server.address") or "127.0.0.1"
    if address in ("0.0.0.0", "::"):
        address = "127.0.0.1"
    base = (config.get_option("server.baseUrlPath") or "").strip("/")
    scheme = "https" if config.get_option("server.sslCertFile") else "http"
    return f"{scheme}://{address}:{config.get_option('server.port')}" + (f"/{base}" if base else "")


def lessons(url: str, visit: Callable | None = None, before_presses: Callable = lambda: None) -> dict:
    """Visit every lesson of the tour once, then (after ``before_presses`` returns) each lesson whose question asks
    for a button again, pressing it and staying until its work is done: each one's result by its key."""
    from explorer.classroom.ahead.visit import PRESS_LIMIT_S
    from explorer.classroom.ahead.visit import visit as visit_page
    from explorer.classroom.tour import TOUR, params

    visit = visit or visit_page
    out = {}

    def one(lesson, press: str = "") -> None:
        limit = {"limit_s": PRESS_LIMIT_S} if press else {}
        v = visit(url, lesson.page, urlencode(params(lesson), safe=","), press=press, **limit)
        name = f"{lesson.key}+{press}" if press else lesson.key
        out[name] = STATE["lessons"][name] = {"seconds": round(v.seconds, 2), "reruns": v.reruns, "error": v.error}
        _LOG.info("ahead: lesson %s in %.1f s, %d reruns%s", name, v.seconds, v.reruns, f": {v.error}" * bool(v.error))

    for lesson in TOUR:
        one(lesson)
    before_presses()
    for lesson in TOUR:
        if lesson.press:
            one(lesson, lesson.press)
    return out


def start(loading: threading.Thread, url: str | None = None, train=None, visit=None) -> threading.Thread:
    """After ``loading`` (the models' warm-up) ends: the Lab's runs and the tour's lessons, in two threads."""
    from explorer.classroom.ahead import lab as lab_ahead

    if not _LOG.handlers:  # the server's log (Streamlit sets up only its own loggers)
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
        _LOG.addHandler(handler)
    if _LOG.level == logging.NOTSET:
        _LOG.setLevel(logging.INFO)

    def trained() -> None:
        try:
            STATE["runs"] = (train or lab_ahead.train_presets)()
        except Exception as err:  # noqa: BLE001 - never a server's problem: said in its log
            _LOG.warning("ahead: the Lab's runs stopped: %s", err)

    from explorer.classroom.tour import TOUR

    STATE.update(started=True, total=len(TOUR))

    def everything() -> None:
        t0 = time.perf_counter()
        loading.join()
        runs = threading.Thread(target=trained, name="ahead-lab", daemon=True)
        runs.start()
        try:  # a lesson's button (a Lab run, a sweep, Vision's run) once the presets are trained: never both at once
            visited = lessons(url or server_url(), visit, runs.join)
        except Exception as err:  # noqa: BLE001 - never a server's problem: said in its log
            _LOG.warning("ahead: the lessons' visits stopped: %s", err)
            visited = {}
        runs.join()
        STATE.update(ready=True, seconds=time.perf_counter() - t0)
        states = [r.state for r in STATE["runs"]]
        failed = sorted(k for k, v in visited.items() if v["error"])
        _LOG.info(
            "%s in %.1f s: %d lesson visits (%s), %d Lab runs (%s)",
            READY,
            time.perf_counter() - t0,
            len(visited),
            f"not complete: {', '.join(failed)}" if failed else "all complete",
            len(states),
            ", ".join(f"{states.count(s)} {s}" for s in sorted(set(states))),
        )

    thread = threading.Thread(target=everything, name="ahead", daemon=True)
    thread.start()
    return thread

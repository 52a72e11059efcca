"""One page visited over a Streamlit server's own protocol, as a browser tab visits it.

The tab connects to ``/_stcore/stream``, asks for a page with a link's query, reads the run to its end, and
then does what a browser does while nobody touches it: reruns every fragment that asked to be rerun on a
timer (a page's "computing, N ahead of you" poll, a model still loading), until none asks any more. The
page's own code does all the work, so whatever it computes (its cached traces, the background jobs it
starts and waits for) is computed as for a learner, and kept for the next one. Used by ``explorer.classroom.ahead``
at a
server's start, and by ``benchmarks/lesson_ready.py``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.sync.client import connect

LIMIT_S = 300.0  # the longest a visit waits for its page's timers to stop
PRESS_LIMIT_S = 900.0  # and one that pressed a button (a training, a sweep)
SAID = 200
OK = ("FINISHED_SUCCESSFULLY", "FINISHED_FRAGMENT_RUN_SUCCESSFULLY")


@dataclass
class Visit:
    page: str
    query: str
    seconds: float = 0.0  # from the request to the last run's end (the page complete)
    first_s: float = 0.0  # from the request to the first run's end (the page drawn)
    reruns: int = 0
    error: str | None = None  # the first problem: an exception on the page, a page not found, a timeout...
    timers: dict = field(default_factory=dict)  # fragment id -> seconds: the fragments still rerun on a timer
    buttons: dict = field(default_factory=dict)  # a drawn button's key -> its widget id (to press it)
    pressed: bool = False
    said: list = field(default_factory=list)  # the Markdown texts drawn, the latest last (at most ``SAID``)
    pages: dict = field(default_factory=dict)  # url path -> page script hash (the server's navigation)


class Tab:
    """One connection; ``run`` sends a rerun and reads it to its end."""

    def __init__(self, url: str, timeout: float = 60.0) -> None:
        ws_url = url.replace("http", "ws", 1).rstrip("/") + "/_stcore/stream"
        self.ws = connect(ws_url, subprotocols=["streamlit"], max_size=2**27, open_timeout=timeout)

    def close(self) -> None:
        self.ws.close()

    def run(self, visit: Visit, fragment: str = "", limit: float = LIMIT_S, press: str = "") -> None:
        """One rerun (of ``fragment``, else the whole page; with the button whose widget id is ``press`` pressed)."""
        msg = BackMsg()
        msg.rerun_script.page_name = visit.page
        msg.rerun_script.query_string = visit.query
        msg.rerun_script.fragment_id = fragment
        if visit.page in visit.pages:  # as a browser does: a page's own st.rerun() reruns that page, not the first
            msg.rerun_script.page_script_hash = visit.pages[visit.page]
        if press:
            msg.rerun_script.widget_states.widgets.add(id=press, trigger_value=True)
        if not fragment:
            visit.timers = {}  # a whole run draws its fragments again, and with them their timers
        self.ws.send(msg.SerializeToString())
        visit.reruns += 1
        while True:
            fm = ForwardMsg()
            fm.ParseFromString(self.ws.recv(timeout=limit))
            if self._read(fm, visit):
                return

    @staticmethod
    def _read(fm: ForwardMsg, visit: Visit) -> bool:
        """Note what one message says; whether the run is over."""
        kind = fm.WhichOneof("type")
        if kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
            element = fm.delta.new_element.WhichOneof("type")
            if element == "exception":
                shown = fm.delta.new_element.exception
                visit.error = visit.error or f"exception: {shown.type}: {shown.message}"[:300]
            elif element == "markdown":
                visit.said = [*visit.said[1 - SAID :], fm.delta.new_element.markdown.body]
            elif element == "button":  # its id ends with its key: "$$ID-<hash>-<key>"
                wid = fm.delta.new_element.button.id
                visit.buttons[wid.split("-", 2)[-1]] = wid
        elif kind == "navigation":
            visit.pages = {p.url_pathname: p.page_script_hash for p in fm.navigation.app_pages}
        elif kind == "auto_rerun":
            visit.timers[fm.auto_rerun.fragment_id] = fm.auto_rerun.interval
        elif kind == "stop_auto_rerun":
            for fragment in fm.stop_auto_rerun.fragment_ids:
                visit.timers.pop(fragment, None)
        elif kind == "page_not_found":
            visit.error = visit.error or "page not found"
        elif kind == "script_finished":
            status = ForwardMsg.ScriptFinishedStatus.Name(fm.script_finished)
            if status == "FINISHED_EARLY_FOR_RERUN":  # the server runs the whole page again itself (an st.rerun):
                visit.timers = {}  # read that run too; it draws its fragments again, and with them their timers
                return False
            if status not in OK:
                visit.error = visit.error or status.lower()
            return True
        return False


def visit(url: str, page: str, query: str = "", press: str = "", limit_s: float = LIMIT_S) -> Visit:
    """Visit ``page`` (its url path) with ``query``, press the button whose key is ``press`` (a page that does not
    draw it is an error: "no button <key>"), and follow the page's timers until none is left or ``limit_s`` passed."""
    out = Visit(page, query)
    start = time.perf_counter()
    try:
        tab = Tab(url)
    except Exception as err:  # noqa: BLE001 - refused, timed out, or a handshake another server answered (a wrong path)
        out.error = f"connect: {type(err).__name__}"
        return out
    try:
        tab.run(out, limit=limit_s)
        out.first_s = time.perf_counter() - start
        if press and out.error is None:
            if press not in out.buttons:
                out.error = f"no button {press}"
            else:
                tab.run(out, limit=limit_s, press=out.buttons[press])
                out.pressed = True
        while out.timers and out.error is None:
            left = limit_s - (time.perf_counter() - start)
            if left <= 0:
                out.error = "timeout"
                break
            fragment, every = min(out.timers.items(), key=lambda item: item[1])
            time.sleep(min(every, left))
            tab.run(out, fragment, limit=max(left, 1.0))
    except TimeoutError:
        out.error = "timeout"
    except Exception as err:  # noqa: BLE001 - a closed socket, a server ending: the visit's result, never a raise
        out.error = f"{type(err).__name__}: {err}"
    finally:
        tab.close()
    out.seconds = time.perf_counter() - start
    return out

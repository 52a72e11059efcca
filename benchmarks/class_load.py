"""A classroom on one server: simulated students that speak Streamlit's own websocket protocol.

Each student is one websocket on ``/_stcore/stream`` sending ``BackMsg`` protobufs and reading
``ForwardMsg`` protobufs, as the browser does, so 30 students cost the server and not 30 browsers.
Every 2-5 s a student changes a setting (a sidebar control or one of the page's own controls,
chosen among the widgets the server last drew) or opens another page (among them Step by step and Variants from a
teacher's comparison link: A pinned in ``a=``, A and B drawn on every rerun). After ``--sweep-after``
seconds a teacher opens Complexity and runs the default sweep. Measured:

- rerun latency: from the ``BackMsg`` sent to the ``script_finished`` received (p50/p95/p99),
  overall, per page and per phase (before, during and after the teacher's sweep);
- errors by kind: an exception element drawn, a run that did not finish, a timeout, a closed socket;
The class comes in once the server has warmed (every page visited once, then its start-up work done: every
offered model loaded and warmed), as a teacher's server has before a lesson. Also measured:

- server memory (RSS of the server process and its children) over time, and again after the class
  has left (``--linger`` seconds after the last socket closed).

    python benchmarks/class_load.py                       # start a server, 30 students, 3 minutes
    python benchmarks/class_load.py --url http://127.0.0.1:8080 --pid 1234   # an existing server
    python benchmarks/class_load.py --students 5 --duration 30 --sweep-after 10 --linger 10   # a quick look
    python benchmarks/class_load.py --replicas 2          # through HAProxy in front of 2 replicas
    python benchmarks/class_load.py --lab-trainers 3      # and 3 learners training Lab presets meanwhile
    python benchmarks/class_load.py --replicas 2 --lesson hall   # students in a predict lesson (the shared poll)

The numbers are written as JSON with ``--json`` (the recorded runs live in ``benchmarks/results/``).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import multiprocessing
import os
import random
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from urllib.parse import quote, urlencode

import psutil
import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "browser"))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

SENTENCES = [
    "Life is short, eat dessert first",
    "The animal didn't cross the street because it was too tired",
    "我爱自然语言处理",
    "Attention is all you need",
    "the cat sat on the mat and the dog sat on the log",
    "注意力 机制 让 模型 关注 重要 的 词",
    "A student reads a book in the library",
    "Das Leben ist kurz, iss zuerst den Nachtisch",
]
# What a student changes, and to what: plain, reasonable values (the hostile ones are another test).
NUMBER_CHOICES = {
    "heads": [1, 2, 3, 4, 6, 8],
    "d_model": [8, 16, 24, 32, 64],
    "d_q": [8, 16, 24, 32],
    "d_k": [8, 16, 24, 32, 64],
    "d_v": [8, 16, 28, 32],
    "temperature": [0.5, 1.0, 2.0],
    "seed": [0, 1, 7, 123, 2024],
    "window": [1, 2, 3],
    "dilation": [1, 2],
    "global_tokens": [1, 2],
    "block": [2, 3, 4],
    "head_steps": [0, 1],
    "cross_head": [0, 1],
    "rm_layer": [0, 1, 2, 3, 4, 5],
    "rm_head": [0, 3, 5, 9, 11],
    "rm_pad": [0],
}
SIDEBAR = {
    "sentence",
    "source",
    "heads",
    "d_model",
    "d_q",
    "d_k",
    "d_v",
    "temperature",
    "causal",
    "window",
    "dilation",
    "global_tokens",
    "block",
    "seed",
    "dropout_on",
    "dropout",
    "residual_norm",
    "layout",
    "score",
    "mask",
    "pos",
    "init",
    "lang",
}
SKIP = {
    "cx_run",
    "cx_stop",
    "reset",
    "rm_model",
    "cx_lengths",
    "cx_kernels",
    "cx_batch",
    "cx_heads",
    "cx_dhead",
    "cx_window",
    "cx_dtype",
    "cx_causal",
    "cx_device",
    "rm_floor",
    "png_chart",  # which chart to download as PNG: reruns only its own fragment, not the page
}
TEACHER_PAGE = "complexity"
# A page given as PAGE@MODEL opens that real-model page on another model the server offers, as its link does
# (inside@fortune-gpt: ?model=fortune-gpt): the decoder's Real model, Inside and Explain in the class's mix.
MODEL_PARAM = {"model": "rm_model", "inside": "model", "explain": "model", "next_token": "model"}
BEACON = "first_screen_"  # the key of a page's beacon (explorer/controls/later.py), which a browser answers


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q / 100 * (len(s) - 1))))]


def ms(seconds: list[float]) -> dict:
    """``summary`` of latencies in seconds, as milliseconds."""
    return {k: (round(v * 1000, 1) if isinstance(v, float) else v) for k, v in summary(seconds).items()}


def summary(values: list[float]) -> dict:
    return {
        "n": len(values),
        "p50": percentile(values, 50),
        "p95": percentile(values, 95),
        "p99": percentile(values, 99),
        "max": max(values) if values else None,
    }


@dataclass
class Widget:
    key: str
    id: str
    kind: str
    proto: object
    fragment_id: str


@dataclass
class Result:
    t: float
    page: str
    latency: float
    error: str | None
    phase: str = ""


@dataclass
class Session:
    """One browser tab's worth of protocol: its socket, the widgets last drawn, the pages."""

    url: str
    name: str
    ws: object = None
    widgets: dict[str, Widget] = field(default_factory=dict)
    states: dict[str, object] = field(default_factory=dict)  # widget id -> WidgetState set by this tab
    pages: dict[str, str] = field(default_factory=dict)  # url path -> page script hash
    page: str = ""
    query: str = ""  # the tab's URL query (a lesson link)
    auto: dict[str, float] = field(default_factory=dict)  # fragment id -> seconds: the fragments rerun on a timer

    async def connect(self) -> None:
        ws_url = self.url.replace("http", "ws", 1) + "/_stcore/stream"
        self.ws = await websockets.connect(
            ws_url, subprotocols=["streamlit"], max_size=2**27, open_timeout=60, ping_interval=None
        )

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()

    def _message(self, page: str | None, fragment_id: str, trigger: str | None) -> BackMsg:
        """The rerun request a browser tab sends: its page, the widget values it set, a click."""
        if page is not None and page != self.page:  # another page: only the sidebar's widgets carry over
            self.page = page
            keep = {w.id for w in self.widgets.values() if w.key.split("__")[0] in SIDEBAR}
            self.states = {k: v for k, v in self.states.items() if k in keep}
            self.widgets = {k: w for k, w in self.widgets.items() if w.id in keep}
        msg = BackMsg()
        cs = msg.rerun_script
        spec, _, own = self.page.partition("?")  # PAGE?QUERY: the page opened from a link with its own query
        page_name, _, model = spec.partition("@")
        if page_name in self.pages:
            cs.page_script_hash = self.pages[page_name]
        cs.page_name = page_name
        parts = (self.query, model and f"{MODEL_PARAM[page_name]}={model}", own)
        cs.query_string = "&".join(q for q in parts if q)
        cs.fragment_id = fragment_id
        cs.widget_states.widgets.extend(self.states.values())
        if trigger is not None:
            cs.widget_states.widgets.add(id=trigger, trigger_value=True)
        return msg

    def _handle(self, fm: ForwardMsg, seen: dict[str, Widget]) -> tuple[bool, str | None]:
        """(is the run over, error kind) for one message from the server."""
        kind = fm.WhichOneof("type")
        if kind == "delta":
            self._read_delta(fm.delta, seen)
            el = fm.delta.new_element
            if fm.delta.WhichOneof("type") == "new_element" and el.WhichOneof("type") == "exception":
                return False, f"exception: {el.exception.type}: {el.exception.message[:120]}"
        elif kind == "navigation":
            self.pages = {p.url_pathname: p.page_script_hash for p in fm.navigation.app_pages}
        elif kind == "auto_rerun":  # a fragment with run_every: the browser reruns it on its own timer
            self.auto[fm.auto_rerun.fragment_id] = fm.auto_rerun.interval
        elif kind == "stop_auto_rerun":
            for fragment in fm.stop_auto_rerun.fragment_ids:
                self.auto.pop(fragment, None)
        elif kind == "page_not_found":
            return False, "page not found"
        elif kind == "script_finished":
            status = ForwardMsg.ScriptFinishedStatus.Name(fm.script_finished)
            if status == "FINISHED_EARLY_FOR_RERUN":
                return False, None  # the server restarts the run itself; wait for that one
            ok = status in ("FINISHED_SUCCESSFULLY", "FINISHED_FRAGMENT_RUN_SUCCESSFULLY")
            return True, None if ok else status.lower()
        return False, None

    async def run(
        self,
        *,
        page: str | None = None,
        fragment_id: str = "",
        trigger: str | None = None,
        extra: list | None = None,
        timeout: float = 120.0,
    ) -> tuple[float, str | None]:
        """Send one rerun (``extra``: widget states sent with it once, a component's trigger); wait for its end.
        Returns (seconds, error kind or None)."""
        msg = self._message(page, fragment_id, trigger)
        msg.rerun_script.widget_states.widgets.extend(extra or [])
        if not fragment_id:
            self.auto = {}  # a whole run draws its fragments again, and with them their timers
        t0 = time.perf_counter()
        await self.ws.send(msg.SerializeToString())
        error = None
        seen: dict[str, Widget] = {}
        try:
            done = False
            while not done:
                raw = await asyncio.wait_for(self.ws.recv(), timeout=max(0.1, timeout - (time.perf_counter() - t0)))
                fm = ForwardMsg()
                fm.ParseFromString(raw)
                done, problem = self._handle(fm, seen)
                error = error or problem
        except TimeoutError:
            error = "timeout"
        except websockets.ConnectionClosed:
            error = "socket closed"
        elapsed = time.perf_counter() - t0
        if fragment_id:
            self.widgets.update(seen)
        elif seen:
            self.widgets = seen
        return elapsed, error

    async def first_screen(self, timeout: float = 120.0) -> tuple[float, str | None] | None:
        """What a browser tab does once the page's first chart is drawn, where the page left the sections under its
        first screen to a beacon (explorer/controls/later.py): the beacon's trigger sent, those sections drawn by
        the run it asks for (the page's, or its fragment's where the beacon stands in one). Returns that run's
        (seconds, error kind), or None where the page drew no beacon."""
        from streamlit.components.v2.bidi_component.main import _make_trigger_id  # the browser's own widget id
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        drawn = self.widgets.values()
        beacon = next((w for w in drawn if w.kind == "bidi_component" and w.key.startswith(BEACON)), None)
        if beacon is None:
            return None
        events = json.dumps([{"event": "drawn", "value": True}])
        answer = WidgetState(id=_make_trigger_id(beacon.id, "events"), json_trigger_value=events)
        return await self.run(fragment_id=beacon.fragment_id, extra=[answer], timeout=timeout)

    def _read_delta(self, delta, seen: dict[str, Widget]) -> None:
        if delta.WhichOneof("type") != "new_element":
            return
        el = delta.new_element
        kind = el.WhichOneof("type")
        proto = getattr(el, kind, None)
        wid = getattr(proto, "id", "")
        if not isinstance(wid, str) or not wid.startswith("$$ID"):
            return
        key = wid.split("-", 2)[2] if wid.count("-") >= 2 else wid
        seen[key] = Widget(key=key, id=wid, kind=kind, proto=proto, fragment_id=delta.fragment_id)

    def change(self, rng: random.Random) -> tuple[str, str] | None:
        """Set a random drawn widget to a plausible new value; returns (key, fragment id) or None."""
        candidates = [
            w
            for w in self.widgets.values()
            if w.key not in SKIP
            and not w.key.startswith("dl_")
            and w.kind in ("number_input", "selectbox", "radio", "checkbox", "text_area", "slider")
        ]
        if not candidates:
            return None
        w = rng.choice(candidates)
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        state = WidgetState(id=w.id)
        if w.kind == "number_input":
            choices = NUMBER_CHOICES.get(w.key) or [w.proto.min, w.proto.max]
            lo = w.proto.min if w.proto.has_min else -1e9
            hi = w.proto.max if w.proto.has_max else 1e9
            state.double_value = float(min(max(rng.choice(choices), lo), hi))
        elif w.kind in ("selectbox", "radio"):
            opts = list(w.proto.options)
            if not opts:
                return None
            state.string_value = rng.choice(opts)
        elif w.kind == "checkbox":
            state.bool_value = rng.random() < 0.5
        elif w.kind == "text_area":
            state.string_value = rng.choice(SENTENCES)
        elif w.kind == "slider" and w.proto.options:  # a select slider: Streamlit 1.67's browser sends its label
            state.string_array_value.data.append(rng.choice(list(w.proto.options)))
        elif w.kind == "slider":
            state.double_array_value.data.append(
                round(rng.uniform(w.proto.min, w.proto.max) / w.proto.step) * w.proto.step
            )
        self.states[w.id] = state
        return w.key, w.fragment_id


def browser_tab(url: str, results: list[tuple[float, float]], stop, chromium: str, charts: list[int]) -> None:
    """A real Chromium tab on Step by step: key press in the sidebar to the last chart redrawn, again and again."""
    from browser_latency import CHANGED, SIGNATURE, timed
    from playwright.sync_api import sync_playwright
    from serve import CHROMIUM_ARGS

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{url}/steps")
        page.wait_for_selector(".js-plotly-plot", timeout=120_000)
        d_v = page.locator("input[aria-label='d_v']")
        dims = ["20", "28"]

        def act(i: int) -> None:
            d_v.fill(dims[i % 2])
            d_v.press("Enter")

        # how many charts a change redraws, counted once its run has finished (a fixed wait, as in
        # browser_latency.redrawn, counts too few under load, and then times a redraw that has not happened)
        page.wait_for_timeout(400)
        before = page.evaluate(SIGNATURE)
        act(0)
        changed = f"(before) => ({CHANGED})(before) > 0"  # the run has reached the page (under load: late)
        page.wait_for_function(changed, arg=before, polling="raf", timeout=120_000)
        idle = "() => !document.querySelector(\"[data-testid='stStatusWidget'], [data-stale='true']\")"
        page.wait_for_function(idle, polling="raf", timeout=120_000)
        expected = page.evaluate(CHANGED, before)
        charts.append(expected)
        i = 1
        while not stop.is_set():
            try:
                results.append((time.time(), timed(page, lambda i=i: act(i), expected) / 1000))
            except Exception:  # noqa: BLE001 - a tab that never redrew is a result
                results.append((time.time(), float("inf")))
            i += 1
            time.sleep(1.0)
        browser.close()


class _ToQueue(list):
    """What ``browser_tab`` appends, sent to the parent instead (tagged)."""

    def __init__(self, queue, tag: str) -> None:
        super().__init__()
        self.queue, self.tag = queue, tag

    def append(self, item) -> None:
        self.queue.put((self.tag, item))


def browser_process(url: str, queue, stop, chromium: str) -> None:
    """``browser_tab`` in a process of its own: in a thread of this one, playwright's work took the interpreter
    from the students' event loop (its wake-ups late by up to 40 ms at p99) and billed the server for it."""
    browser_tab(url, _ToQueue(queue, "time"), stop, chromium, _ToQueue(queue, "charts"))


def collect(procs: list, queue, times: list, charts: list, limit_s: float = 60.0) -> None:
    """What the tabs' processes sent, until they have ended (at most ``limit_s``; then they are killed)."""
    import queue as queues

    deadline = time.time() + limit_s
    while any(p.is_alive() for p in procs) and time.time() < deadline or not queue.empty():
        try:
            tag, item = queue.get(timeout=0.2)
        except queues.Empty:
            continue
        (times if tag == "time" else charts).append(item)
    for p in procs:
        if p.is_alive():
            p.kill()
        p.join(5)


def server_rss(pids: list[int], children: bool = True) -> int:
    """RSS of the server processes and their children (a running sweep, Lab workers; not with ``children=False``)."""
    total = 0
    for pid in pids:
        try:
            p = psutil.Process(pid)
            total += p.memory_info().rss
            total += sum(c.memory_info().rss for c in p.children(recursive=True)) if children else 0
        except psutil.Error:
            pass
    return total


class CpuLedger:
    """CPU seconds spent during the class, by who spent them: the server processes, their children (jobs, workers),
    this load generator (30 students' protocol, the trainers, the teacher), its own children (the Chromium tab and
    playwright's driver; HAProxy with replicas) and the rest of the machine. Sampled each second, so a process that
    lives under a second is missed, and one that exits loses at most its last second."""

    def __init__(self, server_pids: list[int]) -> None:
        self.server_pids = list(server_pids)
        self.first: dict[tuple[int, float], tuple[str, float]] = {}
        self.last: dict[tuple[int, float], float] = {}
        self.machine0 = psutil.cpu_times()
        self.wall0 = time.perf_counter()
        self.sample()

    def _groups(self) -> list[tuple[str, psutil.Process]]:
        out, servers = [], set()
        for pid in self.server_pids:
            try:
                p = psutil.Process(pid)
                out.append(("server", p))
                servers.add(pid)
                for c in p.children(recursive=True):
                    out.append(("server_children", c))
                    servers.add(c.pid)
            except psutil.Error:
                pass
        me = psutil.Process()
        out.append(("load_generator", me))
        out += [("load_generator_children", c) for c in me.children(recursive=True) if c.pid not in servers]
        return out

    def sample(self) -> None:
        for group, p in self._groups():
            try:
                key = (p.pid, p.create_time())
                t = p.cpu_times()
                used = t.user + t.system
            except psutil.Error:
                continue
            self.first.setdefault(key, (group, used))
            self.last[key] = used

    def report(self) -> dict:
        """CPU seconds per group and the machine's busy total over the class, and per wall second (cores used)."""
        self.sample()
        wall = time.perf_counter() - self.wall0
        out: dict[str, float] = {}
        for key, (group, used0) in self.first.items():
            out[group] = out.get(group, 0.0) + self.last[key] - used0
        m1 = psutil.cpu_times()
        busy = sum(getattr(m1, f) - getattr(self.machine0, f) for f in m1._fields if f not in ("idle", "iowait"))
        out["machine_busy"] = busy
        out["rest_of_machine"] = busy - sum(v for k, v in out.items() if k != "machine_busy")
        # a VM's time taken by its host (counted in busy above): the same code measured 4-5x apart on other days
        out["stolen_by_host"] = getattr(m1, "steal", 0.0) - getattr(self.machine0, "steal", 0.0)
        return {"wall_s": round(wall, 1), **{k: round(v / wall, 3) for k, v in out.items()}}


async def loop_lag(lags: list[float], stop: asyncio.Event, every: float = 0.05) -> None:
    """How late this load generator's own event loop wakes: a late loop reads the server's answers late and bills
    the server for it (the students' browsers, in a class, are other machines)."""
    while not stop.is_set():
        t0 = time.perf_counter()
        await asyncio.sleep(every)
        lags.append(time.perf_counter() - t0 - every)


def tree_cpu_s(proc: psutil.Process) -> float:
    """CPU seconds of a process and its children (those that have ended are not counted)."""
    total = 0.0
    for p in [proc, *proc.children(recursive=True)]:
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.Error:
            pass
    return total


def settle(proc: psutil.Process, limit_s: float = 900.0) -> None:
    """Wait until the server and its children are idle (under 5 % of a core for two seconds in a row): what a
    server computes once at its start (the models' warm-up, the lessons computed ahead: its Lab runs, its sweep)
    is not a page's rerun, and a teacher's server has done it before the class comes in."""
    deadline = time.time() + limit_s
    last, still = tree_cpu_s(proc), 0
    while time.time() < deadline and still < 2:
        time.sleep(1.0)
        now = tree_cpu_s(proc)
        still = still + 1 if now - last < 0.05 else 0
        last = now


async def below_first_screen(s: Session, results: list[Result], phase) -> None:
    """The rerun a browser asks for once the page's first screen is drawn (``Session.first_screen``), recorded."""
    answered = await s.first_screen()
    if answered is not None:
        results.append(Result(time.time(), f"{s.page} (below)", *answered, phase()))


async def student(i: int, args, pages: list[str], results: list[Result], stop: asyncio.Event, phase) -> None:
    rng = random.Random(args.seed * 1000 + i)
    s = Session(args.url, f"student{i}", query=f"predict=true&lesson={args.lesson}" if args.lesson else "")
    await asyncio.sleep(rng.uniform(0, 3))  # students arrive over a few seconds
    try:
        await s.connect()
    except Exception as err:  # noqa: BLE001 - a refused connection is a result
        results.append(Result(time.time(), "connect", 0.0, f"connect: {type(err).__name__}", phase()))
        return
    page = rng.choice(pages)
    latency, error = await s.run(page=page)
    results.append(Result(time.time(), page, latency, error, phase()))
    await below_first_screen(s, results, phase)
    try:
        while not stop.is_set():
            try:
                await asyncio.wait_for(stop.wait(), timeout=rng.uniform(2, 5))
                break
            except TimeoutError:
                pass
            pick = s.widgets.get("predict_pick")
            reveal = s.widgets.get("predict_reveal")
            if args.lesson and pick is not None and reveal is not None and pick.proto.options:
                # a predict question is on screen: this student answers it (a click on a key, then Reveal)
                from streamlit.proto.WidgetStates_pb2 import WidgetState

                s.states[pick.id] = WidgetState(id=pick.id, string_value=rng.choice(list(pick.proto.options)))
                latency, error = await s.run(fragment_id=pick.fragment_id)
                results.append(Result(time.time(), s.page, latency, error, phase()))
                latency, error = await s.run(fragment_id=reveal.fragment_id, trigger=reveal.id)
            elif rng.random() < 0.25:
                page = rng.choice([p for p in pages if p != s.page])
                latency, error = await s.run(page=page)
                if error is None:  # the page's first screen drawn: the sections under it asked for, as a tab does
                    await below_first_screen(s, results, phase)
            else:
                changed = s.change(rng)
                if changed is None:
                    continue
                latency, error = await s.run(fragment_id=changed[1])
            results.append(Result(time.time(), s.page, latency, error, phase()))
            if error == "socket closed":
                return
    finally:
        await s.close()


async def teacher(args, sweep: dict) -> None:
    """Opens Complexity and runs the default sweep with a window of 64 (the default sweep itself is computed at a
    class server's start, explorer.classroom.ahead, and would be shown at once: the class would not bear a sweep's
    load);
    waits for it to finish."""
    await asyncio.sleep(args.sweep_after)
    s = Session(args.url, "teacher")
    await s.connect()
    await s.run(page=TEACHER_PAGE)
    run_button = next((w.id for w in s.widgets.values() if w.key == "cx_run"), None)
    window = next((w.id for w in s.widgets.values() if w.key == "cx_window"), None)
    if run_button is None or window is None:
        sweep["error"] = "no run button or no window"
        return
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    s.states[window] = WidgetState(id=window, double_value=64.0)
    sweep["start"] = time.time()
    _, error = await s.run(trigger=run_button)
    # The sweep runs in another process; the page shows its progress. The teacher's browser polls it
    # (the page's own fragment reruns every second); here a whole-page rerun every 2 s does the same.
    deadline = time.time() + args.sweep_timeout
    while error is None and time.time() < deadline and "cx_time_chart" not in s.widgets:
        await asyncio.sleep(2)
        _, error = await s.run()
    sweep["end"] = time.time()
    sweep["seconds"] = sweep["end"] - sweep["start"]
    sweep["error"] = error
    await s.close()


async def lab_trainer(i: int, args, stop: asyncio.Event, lab: dict) -> None:
    """A learner on the Lab page: a preset (its two runs start training), then ~16 s of watching the curves
    as the browser does (the page's live fragment rerun alone on its timer, once a second while a run moves),
    then another preset with another seed, until the class ends."""
    rng = random.Random(args.seed * 1000 + 500 + i)
    s = Session(args.url, f"lab{i}")
    await s.connect()
    await s.run(page="lab", timeout=300)
    presets = [w.id for w in s.widgets.values() if w.key.startswith("lab_preset_")]
    n = 0
    while not stop.is_set() and presets:
        seed = next((w for w in s.widgets.values() if w.key == "seed"), None)  # the Lab's seed is the sidebar's
        if seed is not None:  # a new seed: new runs, not the shared finished ones
            from streamlit.proto.WidgetStates_pb2 import WidgetState

            s.states[seed.id] = WidgetState(id=seed.id, double_value=float(rng.randrange(10**6)))
        _, error = await s.run(trigger=rng.choice(presets), timeout=300)
        lab["presses"] = lab.get("presses", 0) + 1
        if error:
            lab.setdefault("errors", []).append(error)
        watch_until = time.perf_counter() + 16
        while not stop.is_set() and time.perf_counter() < watch_until:
            if not s.auto:  # nothing on a timer: the browser sends nothing until the learner acts
                await asyncio.sleep(1)
                continue
            fragment, every = next(iter(s.auto.items()))
            await asyncio.sleep(every)
            await s.run(fragment_id=fragment, timeout=300)
            lab["fragment_reruns"] = lab.get("fragment_reruns", 0) + 1
        n += 1
    await s.close()


async def main_async(args) -> dict:
    pages = [p for p in (args.pages or default_pages()).split(",") if p]
    # Warm the server the way a first visitor does (one session through every page), then
    # note the memory before the class comes in.
    warm = Session(args.url, "warm")
    await warm.connect()
    for p in pages[: 1 if args.arrive_early else None]:
        await warm.run(page=p, timeout=300)
        await warm.first_screen(timeout=300)
    deadline = time.time() + 300  # the model loads in the background: wait until its page draws it
    while "model" in pages and "rm_layer" not in warm.widgets and time.time() < deadline and not args.arrive_early:
        await asyncio.sleep(1)
        await warm.run(page="model", timeout=300)
    await warm.close()
    for pid in args.pid if not args.arrive_early else []:  # and until the servers' start-up work is done (the
        settle(psutil.Process(pid))  # models, the lessons ahead), as a teacher's server has done before the class
    await asyncio.sleep(2)
    loaded = (server_rss(args.pid), server_rss(args.pid, children=False))
    reports = []
    for n in range(args.classes):  # one class after another in the same server, each with its own choices
        report = await one_class(args, pages, seed=args.seed + n)
        report["memory_mib"]["loaded_baseline"] = round(loaded[0] / 2**20)
        report["memory_mib"]["loaded_baseline_server_only"] = round(loaded[1] / 2**20)
        reports.append(report)
    return reports[0] if len(reports) == 1 else {**reports[0], "classes": reports}


async def one_class(args, pages: list[str], *, seed: int) -> dict:
    args = argparse.Namespace(**{**vars(args), "seed": seed})
    results: list[Result] = []
    sweep: dict = {}
    stop = asyncio.Event()
    memory: list[tuple[float, int]] = []
    t_start = time.time()

    def phase() -> str:
        if "start" not in sweep:
            return "before"
        return "during" if "end" not in sweep else "after"

    async def sample_memory(until: asyncio.Event) -> None:
        while not until.is_set():
            memory.append((time.time() - t_start, server_rss(args.pid)))
            cpu.sample()
            try:
                await asyncio.wait_for(until.wait(), timeout=1.0)
            except TimeoutError:
                pass

    rss_before = server_rss(args.pid)
    cpu = CpuLedger(args.pid)
    lags: list[float] = []
    mem_done = asyncio.Event()
    mem_task = asyncio.create_task(sample_memory(mem_done))
    lag_task = asyncio.create_task(loop_lag(lags, stop))
    tasks = [asyncio.create_task(student(i, args, pages, results, stop, phase)) for i in range(args.students)]
    browser_times: list[tuple[float, float]] = []
    charts: list[int] = []  # charts each Chromium tab waits for per change
    spawn = multiprocessing.get_context("spawn")
    browser_stop, browser_queue = spawn.Event(), spawn.Queue()
    browsers = [
        spawn.Process(target=browser_process, args=(args.url, browser_queue, browser_stop, args.chromium), daemon=True)
        for _ in range(args.browsers)
    ]
    for b in browsers:
        b.start()
    teacher_task = asyncio.create_task(teacher(args, sweep)) if args.sweep_after >= 0 else None
    lab: dict = {}
    tasks += [asyncio.create_task(lab_trainer(i, args, stop, lab)) for i in range(args.lab_trainers)]
    await asyncio.sleep(args.duration)
    stop.set()
    browser_stop.set()
    await asyncio.gather(*tasks)
    cpu_used = cpu.report()  # the class itself: until the last student left (the sweep may run on)
    await lag_task
    await asyncio.to_thread(collect, browsers, browser_queue, browser_times, charts)
    if teacher_task is not None:
        if "start" in sweep and "end" not in sweep:
            print("waiting for the teacher's sweep to finish ...", flush=True)
        await teacher_task
    left_at = time.time()
    rss_left = server_rss(args.pid)
    await asyncio.sleep(args.linger)
    rss_after = server_rss(args.pid)
    server_after = server_rss(args.pid, children=False)
    mem_done.set()
    await mem_task

    report = build_report(
        args, results, sweep, memory, browser_times, rss=(rss_before, rss_left, rss_after), left_at=left_at - t_start
    )
    report["lab_trainers"] = {"learners": args.lab_trainers, **lab}
    report["browser_charts_per_change"] = charts
    report["seed"] = seed
    report["cores_used"] = cpu_used
    report["load_generator_loop_lag_ms"] = ms(lags)
    report["memory_mib"][f"{args.linger:.0f}_s_after_server_only"] = round(server_after / 2**20)
    return report


def build_report(
    args, results: list[Result], sweep: dict, memory: list, browser_times: list, *, rss: tuple, left_at: float
) -> dict:
    rss_before, rss_left, rss_after = rss
    ok = [r for r in results if r.error is None and r.page != "connect"]
    errors: dict[str, int] = {}
    for r in results:
        if r.error:
            errors[f"{r.page}: {r.error}"] = errors.get(f"{r.page}: {r.error}", 0) + 1  # where, and what
    report = {
        "students": args.students,
        "duration_s": args.duration,
        "reruns": len(results),
        "reruns_per_s": round(len(results) / args.duration, 2),
        "errors": errors,
        "latency_ms": ms([r.latency for r in ok]),
        "per_page": {},
        "per_phase": {},
        "sweep": {k: v for k, v in sweep.items() if k in ("seconds", "error")},
        "memory_mib": {
            "before_class": round(rss_before / 2**20),
            "peak": round(max(m for _, m in memory) / 2**20),
            "when_class_left": round(rss_left / 2**20),
            f"{args.linger:.0f}_s_after": round(rss_after / 2**20),
            "timeline": [(round(t), round(m / 2**20)) for t, m in memory[:: max(1, len(memory) // 40)]],
        },
        "left_at_s": round(left_at),
    }

    def phase_at(t: float) -> str:
        if "start" not in sweep or t < sweep["start"]:
            return "before"
        return "during" if t < sweep.get("end", float("inf")) else "after"

    report["browser_key_to_chart_ms"] = {
        "all": ms([x for _, x in browser_times]),
        **{ph: ms([x for t, x in browser_times if phase_at(t) == ph]) for ph in ("before", "during", "after")},
    }
    first = min((r.t for r in ok), default=0.0)  # the class's reruns by when they ended: does the class slow down?
    window = lambda r: f"{int((r.t - first) // 30) * 30:>3}-{int((r.t - first) // 30) * 30 + 30} s"
    report["per_30_s"] = {}
    for key, groups in (("per_page", lambda r: r.page), ("per_phase", lambda r: r.phase), ("per_30_s", window)):
        names = sorted({groups(r) for r in ok})
        for name in names:
            report[key][name] = ms([r.latency for r in ok if groups(r) == name])
    report["over_budget"] = over_budget(report)
    return report


BUDGET_MS = {"all_p95": 500, "all_p99": 1000, "page_p95": 1000}  # the class's goals (issue: the whole app)


def over_budget(rep: dict) -> list[str]:
    """Every goal the run missed, one line each (empty: within budget); errors count as a miss."""
    out = []
    lat = rep["latency_ms"]
    if lat["n"] and lat["p95"] >= BUDGET_MS["all_p95"]:
        out.append(f"all reruns: p95 {lat['p95']} ms >= {BUDGET_MS['all_p95']} ms")
    if lat["n"] and lat["p99"] >= BUDGET_MS["all_p99"]:
        out.append(f"all reruns: p99 {lat['p99']} ms >= {BUDGET_MS['all_p99']} ms")
    for page, s in rep["per_page"].items():
        if s["n"] and s["p95"] >= BUDGET_MS["page_p95"]:
            out.append(f"page {page}: p95 {s['p95']} ms >= {BUDGET_MS['page_p95']} ms")
    if rep["errors"]:
        out.append(f"errors: {rep['errors']}")
    return out


def default_pages() -> str:
    """Every page of the page table (pages added later join by themselves), and the real-model pages again
    on the shipped decoder."""
    sys.path.insert(0, ROOT)
    from explorer.pages import PAGES

    decoder = [f"{p}@fortune-gpt" for p in ("model", "inside", "explain")]
    return ",".join([p.url_path for p in PAGES] + decoder + list(PINNED))


# Pages opened from a teacher's comparison link (Pin as A: A's settings in a=), in every student's walk: the
# comparison's two views are drawn on each of the page's reruns, whatever the student changes next
PINNED = (
    "steps?a=" + quote(urlencode({"sentence": "Life is short, eat dessert first", "heads": "2"})),
    "variants?a=" + quote(urlencode({"sentence": "Life is short, eat dessert first", "var_window": "2"})),
)


def print_report(rep: dict) -> None:
    def row(name, s):
        return (
            f"  {name:<14} n={s['n']:<5} p50 {s['p50']:>8} ms  p95 {s['p95']:>8} ms  p99 {s['p99']:>8} ms"
            f"  max {s['max']:>8} ms"
        )

    where = f"{rep['replicas']} replica(s) behind HAProxy" if rep.get("replicas") else "one server"
    print(
        f"{rep['students']} students on {where}, {rep['duration_s']} s, {rep['reruns']} reruns "
        f"({rep['reruns_per_s']}/s)"
    )
    print(row("all", rep["latency_ms"]))
    print("per phase of the teacher's sweep:")
    for k, s in rep["per_phase"].items():
        print(row(k, s))
    print("per 30 s of class:")
    for k, s in rep.get("per_30_s", {}).items():
        print(row(k, s))
    print("per page:")
    for k, s in rep["per_page"].items():
        print(row(k, s))
    if rep["browser_key_to_chart_ms"]["all"]["n"]:
        print("real Chromium tab(s), Step by step, d_v key press to the last chart redrawn:")
        for k, v in rep["browser_key_to_chart_ms"].items():
            if v["n"]:
                print(row(k, v))
    print(f"errors: {rep['errors'] or 'none'}")
    print(f"sweep: {rep['sweep']}")
    if rep.get("lab_trainers", {}).get("learners"):
        print(f"Lab learners training meanwhile: {rep['lab_trainers']}")
    if "cores_used" in rep:
        print(
            "cores used during the class (CPU seconds per second): "
            + ", ".join(f"{k} {v}" for k, v in rep["cores_used"].items())
        )
        lag = rep["load_generator_loop_lag_ms"]
        late = "  ".join(f"{q} {lag[q]} ms" for q in ("p50", "p95", "p99", "max"))
        print(f"load generator's own event loop, late by: {late}")
    m = rep["memory_mib"]
    print("server memory (MiB): " + ", ".join(f"{k} {v}" for k, v in m.items() if k != "timeline"))
    print("  timeline (s, MiB): " + " ".join(f"{t}:{v}" for t, v in m["timeline"]))
    missed = rep.get("over_budget", over_budget(rep))
    print("OVER BUDGET:\n  " + "\n  ".join(missed) if missed else "within budget: " + str(BUDGET_MS))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", help="an existing server (default: start `streamlit run app.py` here)")
    ap.add_argument(
        "--pid",
        type=int,
        action="append",
        default=[],
        help="the server's process id(s), for its memory (with --url; repeatable)",
    )
    ap.add_argument(
        "--replicas",
        type=int,
        default=0,
        help="start N replicas behind HAProxy (scripts/replicas.py) and go through it; 0: one plain server",
    )
    ap.add_argument("--students", type=int, default=30)
    ap.add_argument(
        "--lab-trainers", type=int, default=0, help="learners pressing Lab presets meanwhile (their runs train)"
    )
    ap.add_argument("--duration", type=float, default=180.0, help="seconds of class")
    ap.add_argument("--sweep-after", type=float, default=60.0, help="seconds before the teacher's sweep; -1: none")
    ap.add_argument("--sweep-timeout", type=float, default=600.0)
    ap.add_argument("--linger", type=float, default=120.0, help="seconds to watch memory after the class left")
    ap.add_argument(
        "--pages",
        default="",
        help="pages the students open (default: every page of explorer/pages.py, the real-model pages again on "
        "fortune-gpt, and Step by step and Variants from a pinned comparison's link); PAGE@MODEL: a page on another "
        "offered model; PAGE?QUERY: a page opened from a link with its own query (a= of Pin as A)",
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--classes", type=int, default=1, help="classes one after another in the same server (each: seed + its number)"
    )
    ap.add_argument("--browsers", type=int, default=1, help="real Chromium tabs measuring key-to-chart meanwhile")
    ap.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    ap.add_argument("--json", help="also write the report to this file")
    ap.add_argument("--server-arg", action="append", default=[], help="extra `streamlit run` option (repeatable)")
    ap.add_argument(
        "--arrive-early",
        action="store_true",
        help="the class comes in right after the server's first page, while its start-up work still runs",
    )
    ap.add_argument(
        "--warm",
        default="1",
        choices=("1", "models", "0"),
        help="ATTN_EXPLORER_WARM of the server it starts (1, a class server's default: the models and the lessons)",
    )
    ap.add_argument("--lesson", default="", help="students open ?predict=true&lesson=CODE and answer each question")
    args = ap.parse_args()
    proc = cluster = None
    timings = None
    files = tempfile.mkdtemp(prefix="class-load-")  # this run's server log and poll timings
    if args.lesson:  # each answer's round trip to the poll's store, written by the servers (attn_core/classroom/)
        timings = os.path.join(files, "poll_answers.txt")
        os.environ["ATTN_EXPLORER_POLL_TIMINGS"] = timings
    if args.url is None and args.replicas > 0:
        os.environ["ATTN_EXPLORER_WARM"] = args.warm  # the replicas' (they inherit this environment)
        sys.path.insert(0, os.path.join(ROOT, "scripts"))
        from replicas import Cluster, free_port

        cluster = Cluster(port=free_port(), replicas=args.replicas, streamlit_args=args.server_arg).start()
        args.url, args.pid = cluster.url, [p.pid for p in cluster.procs]
    elif args.url is None:
        from serve import start_server

        log_path = os.path.join(files, "server.log")
        print(f"# the server's log: {log_path}", flush=True)  # an error's traceback is there
        with open(log_path, "w") as log:  # the server keeps its own copy of the file
            proc, args.url = start_server(log=log, extra=args.server_arg, warm=args.warm)
        args.pid = [proc.pid]
    try:
        rep = asyncio.run(main_async(args))
    finally:
        if proc is not None:
            proc.terminate()
        if cluster is not None:
            cluster.stop()
    rep["server_args"] = args.server_arg
    rep["replicas"] = args.replicas
    rep["lesson"] = args.lesson
    rep["warm"], rep["arrive_early"] = args.warm, args.arrive_early
    if timings is not None:
        with open(timings) if os.path.exists(timings) else io.StringIO() as f:
            rep["poll_answer_ms"] = ms([float(x) for x in f.read().split()])
        print(f"each answer's round trip to the poll's store: {rep['poll_answer_ms']}")
    for n, one in enumerate(rep.get("classes", [rep])):
        if "classes" in rep:
            print(f"## class {n + 1} of {len(rep['classes'])} (seed {one['seed']})")
        print_report({**one, "replicas": args.replicas})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rep, f, indent=1)


if __name__ == "__main__":
    main()

"""The trained models this server offers, each loaded once per server in the background (the one road from a
model's name to its weights: every page asks here, by the offered name), and their runs cached on plain values
(model name, sentence, pad).

Which models a server offers is for whoever runs it to say, never for a link (``attn_core.models.offered_paths``):
the bundled all-MiniLM-L6-v2 always, the models bundled with the app (the shipped decoder), plus local
directories named in the environment variable ``ATTN_EXPLORER_MODELS`` (``name=/path/to/dir;other=/path``, or a
directory of models). The URL's ``model`` picks one of these by name (``explorer.model.pick``); it never names a
path. The name is what ``attn_core.models.load`` is given and what the loaded model is called; the background
jobs are given it too, and their worker resolves it with the same table.
"""

from __future__ import annotations

import contextlib
import math
import threading

from attn_core import models as pt
from explorer.base.cache import bounded
from explorer.base.heap import freeze_heap

MODELS_ENV = pt.MODELS_ENV


def offered() -> list[str]:
    """The offered models' names, in menu order (the bundled encoder first)."""
    return list(pt.offered_paths())


class _Loader:
    """One background load per offered model and process; everyone who asks meanwhile is told 'not yet'.

    Keyed by the offered name; the directory it named when its load started is kept beside it, so that a name
    the operator points at another directory (a test's process does) is loaded again rather than served stale."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.threads: dict[str, threading.Thread] = {}
        self.paths: dict[str, str] = {}  # name -> the directory it named when its load started ('' bundled)
        self.done: dict[str, pt.Pretrained | pt.ModelUnavailable] = {}
        self.warming: dict[str, threading.Thread] = {}  # what is computed through the shared caches once offered
        self.warm_default = False

    def start(self, name: str, warm: bool | None = None) -> None:
        """``warm`` None: ``warm_default``, True on a server (``load_every_offered``: a model first asked for by a
        page is warmed before it is offered, as those loaded at the start are), False in a test's process.
        A name this server does not offer raises ``ModelUnavailable`` at once (nothing is tried)."""
        path = pt.offered_paths().get(name)
        if path is None:
            raise pt.ModelUnavailable("unknown_model", spec=name, options=", ".join(offered()))
        with self.lock:
            if name in self.threads and self.paths.get(name) == path:
                return
            warm = self.warm_default if warm is None else warm
            thread = threading.Thread(
                target=self._load, args=(name, path, warm), name=f"load-model-{name}", daemon=True
            )
            self.threads[name], self.paths[name] = thread, path
            self.done.pop(name, None)
        thread.start()

    def _load(self, name: str, path: str, warm: bool) -> None:
        try:
            result: pt.Pretrained | pt.ModelUnavailable = pt.load(name)  # by its name: it is called that
        except pt.ModelUnavailable as err:
            result = err
        except Exception as err:  # noqa: BLE001 - any failure of a background load becomes a message on the page
            result = pt.ModelUnavailable("model_load_failed", spec=name, reason=type(err).__name__)
        if warm and not isinstance(result, pt.ModelUnavailable):
            _warm(result)
        freeze_heap()  # transformers and the weights are long-lived too: keep them out of every gc pass
        with self.lock:
            if self.paths.get(name) != path:  # the name was pointed elsewhere meanwhile: that load answers
                return
            self.done[name] = result
        if warm and not isinstance(result, pt.ModelUnavailable):
            after = threading.Thread(target=_warm_caches, args=(result,), name=f"warm-{name}", daemon=True)
            self.warming[name] = after
            after.start()

    def get(self, name: str) -> pt.Pretrained | None:
        """The loaded model, None while it loads; raises ModelUnavailable if it cannot load."""
        self.start(name)
        with self.lock:
            result = self.done.get(name)
        if isinstance(result, pt.ModelUnavailable):
            raise result
        return result

    def wait(self, name: str, timeout: float | None = None) -> pt.Pretrained | None:
        self.start(name)
        self.threads[name].join(timeout)
        return self.get(name)


_LOADER = _Loader()


def _warm(pre: pt.Pretrained) -> None:
    """What Inside the model computes once per model (its heads' mean outputs over the probe set, seconds of
    forward passes), computed in the loading thread before the model is offered: the first learner to ablate
    a head does not pay for it inside a script run, holding a class's GIL."""
    from attn_core.interpret.corpus import corpus_means

    with contextlib.suppress(Exception):  # a warm-up that fails leaves the work to the first asker, as before
        corpus_means(pre)


def _warm_caches(pre: pt.Pretrained) -> None:
    """Once the model is offered: the probe set's attention inputs of every layer (the Real model page's query-key
    map over the probe set; ~1 s of forward passes a layer on a busy 2-core server), into the shared cache."""
    with contextlib.suppress(Exception):  # as above: what fails here is computed when first asked for
        for layer in range(pre.layers):
            probe_states(pre.name, layer)


def start_loading(name: str = pt.BUNDLED, warm: bool = False) -> None:
    """Begin loading a model in the background (the bundled one by default); returns at once. ``warm``: and
    compute what its pages need once per model (a server's start; a test's process asks only what it tests)."""
    _LOADER.start(name, warm)


def load_every_offered() -> threading.Thread:
    """A server's start: every offered model loaded and warmed in the background, one after another (the bundled
    encoder first), so that a class's first visit to a decoder's page does not pay its load and its probe-set
    passes inside script runs (measured: seconds of a shared computing slot, in ``class_load_cpu.txt``)."""

    _LOADER.warm_default = True

    def one_by_one() -> None:
        for name in offered():
            _LOADER.start(name, warm=True)
            _LOADER.threads[name].join()
            warming = _LOADER.warming.get(name)
            if warming is not None:
                warming.join()

    thread = threading.Thread(target=one_by_one, name="load-every-model", daemon=True)
    thread.start()
    return thread


def model(name: str) -> pt.Pretrained | None:
    """Shared by every session: eval mode, gradients off, never written to. None while loading."""
    return _LOADER.get(name)


def wait_for(name: str, timeout: float | None = None) -> pt.Pretrained | None:
    return _LOADER.wait(name, timeout)


def wait_on_page(name: str) -> None:
    """A page whose model ``name`` still loads: a note that looks again every half second and reruns the
    page once the model is there. The page stops here; it never blocks the script thread."""
    import streamlit as st  # here, not at the top: the heavy jobs' children import this module without a page

    from explorer.base.i18n import t

    @st.fragment(run_every=0.5)
    def wait_for_model() -> None:
        try:
            ready = model(name) is not None
        except pt.ModelUnavailable:  # the load failed: the page's next run says why
            ready = True
        if ready:
            st.rerun()
        st.info(t("rm_loading"), icon=":material/hourglass_top:")

    wait_for_model()
    st.stop()


def _loaded(name: str) -> pt.Pretrained:
    pre = wait_for(name)
    assert pre is not None
    return pre


@bounded(max_mib=160)  # a 512-piece run holds ~80 MiB of attention probabilities
def run(name: str, sentence: str, pad_to: int) -> pt.ModelRun:
    pre = _loaded(name)
    return pt.forward(pre, pt.encode(pre, sentence, pad_to=pad_to))


@bounded(max_mib=96)
def head(name: str, sentence: str, pad_to: int, layer: int, head: int) -> pt.HeadTrace:
    return pt.take_apart(run(name, sentence, pad_to), pt.head_weights(_loaded(name), layer, head), layer, head)


@bounded(max_mib=64)
def random_head(name: str, sentence: str, pad_to: int, layer: int, seed: int) -> pt.HeadTrace:
    w = pt.random_weights(_loaded(name), seed=seed)
    return pt.take_apart(run(name, sentence, pad_to), w, layer, -1, compare=False)


@bounded(max_mib=40, idle_s=math.inf)  # the 180 probe sentences' attention inputs, every layer of both shipped models
# (MiniLM 6 x 4.1 MiB, fortune-gpt 4 x 2.5 MiB): constants of the models, computed at a server's start and kept
def probe_states(name: str, layer: int):
    """``layer``'s attention input on the shipped probe set (one batched forward pass, stopped at that layer)."""
    from attn_core.interpret import corpus
    from attn_core.why import qkprobe

    return qkprobe.probe_states(_loaded(name), corpus.sentences(), layer)


@bounded(max_mib=8)  # one head's queries and keys of ~2,000 probe tokens: 0.5 MiB at d_head = 32
def probe_points(name: str, layer: int, head: int):
    """One head's queries and keys of every real token of the probe set (``why.qkprobe.ProbePoints``)."""
    from attn_core.why import qkprobe

    return qkprobe.probe_queries_keys(_loaded(name), probe_states(name, layer), head)

"""One road from a model's name to its head: the four model pages (Real model, Inside the model, Explain, Next
token) read one URL key, ``model`` (``?rm_model=``, the key before, still opens them), draw one picker and get
their model from one background loader, by the offered name: the name ``attn_core.models.load`` is given, the
loaded model's name, every background job's ``model`` and what the worker (another process) loads are the link's
name, never a directory, never renamed. A name the server does not offer gets the one message on every page; Next
token, which needs a decoder, says so when the model picked is an encoder and offers the decoders."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from tiny_decoders import NAME

from attn_core import models
from explorer.jobs.heavy import HEAVY
from explorer.model import real

PROMPT = "the cat sat on the mat"
MODEL, INSIDE, EXPLAIN, NEXT = "pages/7_model.py", "pages/9_inside.py", "pages/10_explain.py", "pages/11_next_token.py"
PAGES = {MODEL: {"rm_why": "true"}, INSIDE: {}, EXPLAIN: {}, NEXT: {"prompt": PROMPT}}  # rm_why: its jobs asked
DECODER = "fortune-gpt"  # the shipped decoder: Next token's model when nothing is picked


@pytest.fixture(scope="module")
def tiny(tiny_gpt2):
    return tiny_gpt2


def texts(at) -> str:
    kinds = ("title", "markdown", "caption", "info", "warning", "error", "success")
    return "\n".join(str(e.value) for kind in kinds for e in at.get(kind)).replace("\\", "")


def default_of(page: str) -> str:
    return DECODER if page == NEXT else real.pt.BUNDLED


def test_the_loader_gives_models_load_the_name_and_the_model_is_called_by_it(tiny, monkeypatch):
    seen: list[str] = []
    load = models.load
    monkeypatch.setattr(real.pt, "load", lambda spec="": (seen.append(spec), load(spec))[1])
    monkeypatch.setattr(real, "_LOADER", real._Loader())  # a server that has not loaded it yet
    pre = real.wait_for(NAME, timeout=300)
    assert seen == [NAME]  # by its name, not by its directory
    assert pre.name == NAME and pre is load(NAME)  # the model engine's own object: no renamed copy
    assert os.path.samefile(pre.path, tiny)  # loaded from the directory the operator named
    with pytest.raises(models.ModelUnavailable) as err:
        real.model("no-such-model")
    assert err.value.code == "unknown_model" and "no-such-model" not in real._LOADER.threads  # nothing tried


@pytest.mark.parametrize("key", ["model", "rm_model"])
@pytest.mark.parametrize("page", list(PAGES))
def test_each_model_page_opens_the_links_model_by_its_name(app, tiny, monkeypatch, page, key):
    asked: list[tuple[str, dict]] = []
    ask = HEAVY.ask
    monkeypatch.setattr(
        HEAVY, "ask", lambda kind, args, session="": (asked.append((kind, args)), ask(kind, args, session))[1]
    )
    at = app(page, query={key: NAME, "sentence": PROMPT} | PAGES[page])
    assert not at.exception and not at.error, texts(at)[:2000]
    assert at.session_state["model"] == NAME  # the one picker's value
    assert at.query_params.get("model") == NAME and "rm_model" not in at.query_params  # the link says it one way
    assert NAME in texts(at)  # the page names the model it shows
    assert asked, "no background job was asked for"
    assert all(args.get("model") == NAME for _, args in asked), asked  # the jobs are given the name (what the
    # worker loads by it: test_a_worker_resolves_the_name_with_the_operators_table)


@pytest.mark.parametrize(
    ("page", "key", "lang", "needle"),
    [
        (page, key, lang, needle)
        for page in PAGES
        for key, lang, needle in (("model", "en", "does not offer"), ("rm_model", "zh", "没有提供"))
    ],
)
def test_a_name_not_offered_gets_the_one_message_on_every_model_page(app, tiny, page, key, lang, needle):
    at = app(page, query={key: "no-such-model", "sentence": PROMPT, "lang": lang} | PAGES[page])
    said = [w.value for w in at.warning if needle in w.value]
    assert len(said) == 1 and "no-such-model" not in said[0], [w.value for w in at.warning]  # never echoed
    assert default_of(page) in said[0].replace("\\", "")  # what the page shows instead
    assert at.session_state["model"] == default_of(page) and "model" not in at.query_params
    assert not at.exception and not at.error


@pytest.mark.parametrize(("lang", "says"), [("en", "is an encoder"), ("zh", "是编码器")])
def test_next_token_on_an_encoder_says_so_and_offers_the_decoders(app, tiny, lang, says):
    at = app(NEXT, query={"model": real.pt.BUNDLED, "lang": lang})
    assert not at.exception and not at.error
    warned = [w.value for w in at.warning if says in w.value]
    assert len(warned) == 1 and DECODER in warned[0].replace("\\", "") and NAME in warned[0].replace("\\", "")
    assert at.session_state["model"] == real.pt.BUNDLED  # the learner's pick, kept
    assert at.query_params.get("model") == real.pt.BUNDLED  # not replaced in the link behind them
    buttons = {b.key: b for b in at.button if (b.key or "").startswith("nt_use_")}
    assert [b.label.replace("\\", "") for b in buttons.values()][:2] == [
        f"{'Decoder' if lang == 'en' else '解码器'} · {d}" for d in (DECODER, NAME)
    ]
    buttons["nt_use_1"].click().run()  # the tiny decoder
    assert not at.exception and at.session_state["model"] == NAME and at.query_params.get("model") == NAME
    assert not [w for w in at.warning if says in w.value]


def _leave(at, page: str):
    """Another page through the sidebar: the browser's URL loses its query, the session keeps the pick."""
    for k in list(at.query_params):
        del at.query_params[k]
    return at.switch_page(page).run()


def test_a_pick_follows_the_learner_and_a_pages_default_does_not(app, tiny):
    at = app(MODEL)  # nothing picked: the bundled encoder here ...
    assert at.session_state["model"] == real.pt.BUNDLED
    _leave(at, NEXT)  # ... and the first decoder on Next token, no message
    assert not at.exception and at.session_state["model"] == DECODER
    assert not [w for w in at.warning if "encoder" in w.value or "offer" in w.value]
    _leave(at, MODEL)
    assert at.session_state["model"] == real.pt.BUNDLED
    at.selectbox(key="model").set_value(NAME).run()  # a pick on Real model ...
    for page in (NEXT, INSIDE, EXPLAIN, MODEL):  # ... is every model page's
        _leave(at, page)
        assert not at.exception and at.session_state["model"] == NAME, page
        assert at.query_params.get("model") == NAME, page


def test_a_worker_resolves_the_name_with_the_operators_table(tiny):
    """The worker is another process: it loads the model by its name through the offered table it reads (the
    operator's ``ATTN_EXPLORER_MODELS``), the tiny decoder's 2 x 4 heads, not the bundled encoder's 6 x 12."""
    with open(os.path.join(tiny, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    request = json.dumps({"kind": "atlas", "args": {"model": NAME, "sentence": PROMPT}, "id": 1}) + "\n"

    def answer(env: dict) -> list[dict]:
        done = subprocess.run(
            [sys.executable, "-m", "attn_core.heavy"],
            input=request,
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            check=False,
        )
        return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]

    lines = answer(dict(os.environ))  # the operator's table, as a server's worker inherits it
    assert lines[-1] == {"end": "ok"}, lines
    heads = lines[0]["part"]["heads"]
    assert {(h["layer"], h["head"]) for h in heads} == {
        (la, h) for la in range(config["n_layer"]) for h in range(config["n_head"])
    }
    without = {k: v for k, v in os.environ.items() if k != real.MODELS_ENV} | {"HF_HUB_OFFLINE": "1"}
    end = answer(without)[-1]
    assert end["end"] == "error" and end["code"] == "unknown_model", end  # without the table: no such model


def test_a_worker_started_under_another_table_is_not_asked_for_its_names(tiny, monkeypatch):
    """A waiting worker knows the table it started with: once the server's table has changed (a test process's
    does; a server's is fixed), the request goes to a worker started under the new one, and the new name resolves."""
    import time

    from explorer.jobs import heavy

    jobs = heavy.Heavy()

    def done(job):
        deadline = time.monotonic() + 600
        while job.active and time.monotonic() < deadline:
            time.sleep(0.05)
        assert job.done, (job.state, job.message)
        return job

    try:
        first = done(jobs.ask("atlas", {"model": NAME, "sentence": PROMPT}, "me"))
        assert jobs.spawned == 1 and len(jobs.workers.waiting) == 1
        monkeypatch.setenv(real.MODELS_ENV, f"{os.environ[real.MODELS_ENV]};other-name={tiny}")  # the table grows
        second = done(jobs.ask("atlas", {"model": "other-name", "sentence": PROMPT}, "me"))
        assert second.result == first.result  # the same weights under the other name
        assert jobs.spawned == 2 and len(jobs.workers.waiting) == 1  # the first worker ended, not asked
    finally:
        while (proc := jobs.workers.take()) is not None:
            proc.terminate()
            proc.wait(60)

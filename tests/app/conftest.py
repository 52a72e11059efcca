import os

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

APP = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "app.py")
TIMEOUT = 120  # the first run imports torch


@pytest.fixture(autouse=True)
def _clear_caches():
    st.cache_data.clear()
    yield


@pytest.fixture(scope="session", autouse=True)
def _model_loaded():
    """The server loads every offered model in the background (the bundled encoder and the shipped decoder);
    under AppTest, wait for them once: a model page never waits for its model (it says "loading")."""
    from explorer.model import real

    for name in real.offered():
        real.wait_for(name, timeout=300)


@pytest.fixture
def app():
    def make(page: str | None = "pages/1_steps.py", query: dict | None = None) -> AppTest:
        """The app at ``page`` (Step by step unless told; None: the root, the start page)."""
        at = AppTest.from_file(APP, default_timeout=TIMEOUT)
        for k, v in (query or {}).items():
            at.query_params[k] = v
        at.run()
        if page:
            at.switch_page(page).run()
        assert not at.exception, [e.value for e in at.exception]
        return at

    return make


@pytest.fixture(scope="module")
def tiny_gpt2(tmp_path_factory):
    """The tiny GPT-2 of ``tiny_decoders`` built in a fresh directory, offered to the app under its NAME while the
    module that asks for it runs (through ``ATTN_EXPLORER_MODELS``: nothing downloads)."""
    from tiny_decoders import NAME, build

    from explorer.model import real

    path = build(tmp_path_factory.mktemp("decoders"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(real.MODELS_ENV, f"{NAME}={path}")
        real.wait_for(NAME, timeout=300)
        yield path


def run_made_up_sweep(mp, command: list[str]):
    """The Complexity page's sweep through the real job path, its child replaced by ``command`` (a process that
    prints made-up rows): the app opened, the sweep run to its end. Returns (the AppTest, the finished job)."""
    import time

    from explorer.jobs import sweeps

    mp.setattr(sweeps, "command", lambda cfg: command)
    mp.setattr(sweeps, "RUNNER", sweeps.Runner())
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/6_complexity.py").run()
    at.button(key="cx_run").click().run()
    job = next(iter(sweeps.RUNNER.jobs.values()))
    deadline = time.time() + 60
    while job.active and time.time() < deadline:
        time.sleep(0.05)
    return at, job

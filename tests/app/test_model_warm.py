"""A server's model load also computes what Inside the model needs once per model (its heads' mean outputs over
the probe set), in the loading thread: the first learner to ablate a head with the mean does not pay seconds of
forward passes inside a script run. A test's process loads without it."""

from __future__ import annotations

import pytest
import torch

from attn_core import models as pt
from attn_core.interpret import corpus, hooks
from explorer.model import real


def _load(warm: bool):
    loader = real._Loader()
    loader.start(pt.BUNDLED, warm)
    loader.threads[pt.BUNDLED].join(300)
    if warm:
        loader.warming[pt.BUNDLED].join(300)
    else:
        assert not loader.warming
    return loader.get(pt.BUNDLED)


def _probe_layers_kept(name: str) -> set[int]:
    with real.probe_states.lock:
        return {args[1] for args, _ in real.probe_states.entries if args[0] == name}


def test_a_warm_load_holds_the_probe_means_a_plain_one_does_not(monkeypatch):
    monkeypatch.setattr(corpus, "_MEANS", {})
    real.probe_states.clear()
    pre = _load(warm=False)
    assert pre is not None and pre.name not in corpus._MEANS and not _probe_layers_kept(pre.name)

    pre = _load(warm=True)
    assert pre.name in corpus._MEANS, "the warm load did not compute the means"
    assert _probe_layers_kept(pre.name) == set(range(pre.layers)), "the probe set's map inputs are not kept"
    real.probe_states.expire_idle(now=10**12)  # long after the class: a constant of the model stays
    assert _probe_layers_kept(pre.name) == set(range(pre.layers))
    kept = corpus._MEANS[pre.name]
    assert kept.shape == (pre.layers, pre.heads * pre.d_head)

    # an independent computation: transformers' own self-attention modules, hooked here (their output is the
    # heads' context before the output projection), averaged over the probe set's real tokens
    batch, _ = hooks.batch_of(pre, corpus.sentences())
    seen: dict[int, torch.Tensor] = {}
    layers = pre.hf.encoder.layer
    handles = [
        layer.attention.self.register_forward_hook(lambda m, i, out, n=n: seen.__setitem__(n, out[0]))
        for n, layer in enumerate(layers)
    ]
    try:
        with torch.no_grad():
            pre.hf(input_ids=batch.ids, attention_mask=batch.keep.long())
    finally:
        for h in handles:
            h.remove()
    rows = batch.keep.reshape(-1)
    for n in range(pre.layers):
        flat = seen[n].reshape(-1, kept.shape[1])[rows]
        torch.testing.assert_close(kept[n], flat.float().mean(0), rtol=1e-4, atol=1e-5)


def test_a_server_loads_and_warms_every_offered_model_and_keeps_both_probe_sets(monkeypatch):
    """The server's start: every offered model, one after another, each warmed before it is offered; the probe
    set's map inputs of every layer of both shipped models fit the cache's budget together (none evicted)."""
    monkeypatch.setattr(corpus, "_MEANS", {})
    monkeypatch.setattr(real, "_LOADER", real._Loader())
    real.probe_states.clear()
    names = list(real.offered())
    assert names[0] == pt.BUNDLED and "fortune-gpt" in names
    real.load_every_offered().join(600)
    for name in names:
        pre = real.model(name)
        assert pre is not None, name
        assert name in corpus._MEANS, f"{name}'s means were not computed at the start"
        assert _probe_layers_kept(name) == set(range(pre.layers)), f"{name}'s probe set's layers are not all kept"


def test_a_model_first_asked_for_on_a_server_is_warmed_before_it_is_offered(monkeypatch):
    monkeypatch.setattr(corpus, "_MEANS", {})
    loader = real._Loader()
    loader.warm_default = True  # a server's (load_every_offered)
    assert loader.get("fortune-gpt") is None  # loading: the page says so and looks again
    loader.threads["fortune-gpt"].join(300)
    pre = loader.get("fortune-gpt")
    assert pre is not None and "fortune-gpt" in corpus._MEANS  # computed before it was offered
    loader.warming["fortune-gpt"].join(300)


@pytest.mark.parametrize(
    ("serving", "setting", "started"),
    [
        (True, None, ["warm", "ahead"]),
        (True, "1", ["warm", "ahead"]),
        (True, "yes", ["warm", "ahead"]),  # a value it does not know keeps a class server's default
        (True, "models", ["warm"]),
        (True, "0", []),  # nothing until a page asks (real.model starts the load)
        (False, "1", ["cold"]),
        (False, None, ["cold"]),
    ],
)
def test_a_server_warms_every_model_and_the_lessons_unless_told_not_to(monkeypatch, serving, setting, started):
    """A server warms every offered model at its start, then computes the lessons ahead (after the models: it is
    handed their warm-up's thread); ATTN_EXPLORER_WARM=models stops after the models; 0 (a server for one person,
    the test suite's short-lived ones) loads nothing before a page asks; a test's process loads the bundled model
    cold."""
    from explorer import server
    from explorer.classroom import ahead

    calls = []
    monkeypatch.setattr(server, "serving", lambda: serving)
    monkeypatch.setattr(real, "load_every_offered", lambda: calls.append("warm") or "models' thread")
    monkeypatch.setattr(real, "start_loading", lambda *a, **k: calls.append("cold"))
    monkeypatch.setattr(ahead, "start", lambda loading: calls.append("ahead") if loading == "models' thread" else None)
    if setting is None:
        monkeypatch.delenv(server.WARM_ENV, raising=False)
    else:
        monkeypatch.setenv(server.WARM_ENV, setting)
    server.start_models()
    assert calls == started

"""The Vision page's training as the Lab's runs: the snapshot generator against the one-shot ``train`` it replaced
(numbers recorded from that function before the change), Pause between two steps that changes nothing of the run,
the worker's vision line, and identical settings shared by sessions (``explorer.vision.runs``)."""

from __future__ import annotations

import io
import json
import os
import threading
import time

import pytest
import torch
from tolerance import assert_close

from attn_core.lab.cli import Commands, serve
from attn_core.vision.model import VisionConfig, VisionModel, accuracy, digits, snapshots, train

# train(VisionConfig(model=m, steps=60, seed=0)) before it became a generator (commit 5eaac04): (step, loss, val_acc)
OLD = {
    "vit": [(50, 1.8595616817474365, 0.2888889014720917), (60, 1.6957083940505981, 0.38055557012557983)],
    "swin": [(50, 1.6801875829696655, 0.26944443583488464), (60, 1.759016752243042, 0.4166666567325592)],
}
N_HELD_OUT = 360


def curve_of(snaps) -> list[tuple[int, float, float]]:
    return [(s["step"], s["loss"], s["val_acc"]) for s in snaps]


def same_curve(got, want) -> None:
    assert [s for s, _, _ in got] == [s for s, _, _ in want]
    assert_close(torch.tensor([x for _, x, _ in got]), torch.tensor([x for _, x, _ in want]), rtol=1e-3, atol=1e-4)
    # held-out accuracy is a count of 360 digits: within one digit (float32's last bits may flip an argmax)
    for (_, _, a), (_, _, b) in zip(got, want):
        assert abs(a - b) * N_HELD_OUT <= 1 + 1e-6


@pytest.mark.parametrize("model", ["vit", "swin"])
def test_the_snapshots_give_the_old_trains_curve_and_their_weights_are_the_model(model):
    c = VisionConfig(model=model, steps=60, seed=0)
    snaps = list(snapshots(c))
    same_curve(curve_of(snaps), OLD[model])
    assert [s["status"] for s in snaps] == ["running", "done"] and snaps[-1]["val_n"] == N_HELD_OUT
    old = train(c)  # the function the CLI and the benchmark call: the same curve
    assert [(p["step"], p["loss"], p["val_acc"]) for p in old["curve"]] == curve_of(snaps)
    rebuilt = VisionModel(c)  # the last snapshot's weights, as lists, are the model that scored its accuracy
    rebuilt.load_state_dict({k: torch.tensor(v) for k, v in snaps[-1]["state"].items()})
    _, _, xv, yv = digits(0)
    assert accuracy(rebuilt, xv, yv) == snaps[-1]["val_acc"]


def test_pause_between_two_steps_holds_the_run_and_play_goes_on_to_the_same_curve():
    """A Pause arrives on the worker's input at step 25 (``Commands``); the run waits there, then Play lets it go
    on. Its curve is exactly an uninterrupted run's (same process, same seed)."""
    c = VisionConfig(model="swin", steps=60, seed=2)
    whole = curve_of(snapshots(c, every=10))
    r, w = os.pipe()
    commands, writer = Commands(os.fdopen(r)), os.fdopen(w, "w")
    calls, at_25, snaps = [0], threading.Event(), []

    def between() -> None:
        calls[0] += 1
        if calls[0] == 25:
            writer.write(json.dumps({"control": "pause"}) + "\n")
            writer.flush()
            while commands.playing.is_set():  # the worker's input thread has read it
                time.sleep(0.01)
            at_25.set()
        commands.between()

    trainer = threading.Thread(target=lambda: snaps.extend(snapshots(c, every=10, between=between)))
    trainer.start()
    assert at_25.wait(60)
    time.sleep(0.5)  # a run that did not hold would take these steps meanwhile
    assert calls[0] == 25 and [s["step"] for s in snaps] == [10, 20] and trainer.is_alive()
    writer.write(json.dumps({"control": "play"}) + "\n")
    writer.flush()
    trainer.join(60)
    writer.close()
    assert not trainer.is_alive() and calls[0] == 60
    assert curve_of(snaps) == whole


def test_the_worker_trains_a_vision_line_and_refuses_a_bad_one_with_its_code():
    good = {"vision": {"model": "vit", "steps": 20, "seed": 1}}
    bad = {"vision": {"model": "swin", "patch": 1, "window": 3}}
    out = io.StringIO()
    assert serve(io.StringIO(json.dumps(good) + "\n" + json.dumps(bad) + "\n"), out) == 0
    lines = [json.loads(x) for x in out.getvalue().splitlines()]
    assert [x.get("step") for x in lines[:1]] == [20] and lines[0]["status"] == "done"
    want = curve_of(snapshots(VisionConfig(model="vit", steps=20, seed=1)))
    assert curve_of(lines[:1]) == want
    assert lines[1] == {"end": "ok"}
    assert lines[2]["end"] == "error" and lines[2]["code"] == "vision_window"


@pytest.fixture
def runs():
    from explorer.vision.runs import VISION_RUNS

    yield VISION_RUNS
    for run in list(VISION_RUNS.runs.values()):
        VISION_RUNS.stop(run)


def wait(runs, run, until, timeout=300.0) -> None:
    deadline = time.monotonic() + timeout
    while not until(run) and time.monotonic() < deadline:
        for session in list(run.watchers):
            runs.get(run.cfg, session)  # still watched
        time.sleep(0.1)
    assert until(run), (run.state, run.message, [s.step for s in run.snaps])


def test_sessions_asking_for_the_same_settings_share_one_run_and_others_get_their_own(runs):
    c = VisionConfig(model="vit", steps=40, seed=11)
    first = runs.start(c, "student-1")
    assert runs.start(VisionConfig(model="vit", steps=40, seed=11), "student-2") is first
    assert set(first.watchers) == {"student-1", "student-2"} and runs.get(c, "student-3") is first
    other = runs.start(VisionConfig(model="swin", steps=40, seed=11), "student-2")
    assert other is not first
    wait(runs, first, lambda r: r.state == "done")
    assert [s.step for s in first.snaps] == [40] and runs.start(c, "student-4") is first  # kept, not trained again
    runs.leave(other, "student-2")
    assert other.state in ("stopped", "done")
    with pytest.raises(Exception, match="window"):
        runs.start(VisionConfig(model="swin", patch=1, window=3), "student-1")  # refused before it starts


def test_step_pauses_a_worker_run_at_a_snapshot_and_play_ends_it_on_the_uninterrupted_curve(runs):
    c = VisionConfig(model="vit", steps=150, seed=5)
    run = runs.start(c, "s")
    runs.step(run)  # the page's Step: run to the next snapshot, then pause
    wait(runs, run, lambda r: r.state == "paused")
    assert run.snaps[-1].step < c.steps and not run.holds_slot  # a paused run gives its slot back
    runs.resume(run)
    wait(runs, run, lambda r: r.state == "done")
    got = [(s.step, s.loss, s.val_acc) for s in run.snaps]
    same_curve(got, curve_of(snapshots(c)))  # the worker (one thread) against this process: float32's last bits
    state = run.snaps[-1].state
    assert set(state) == set(VisionModel(c).state_dict()) and all(v.dtype == torch.float32 for v in state.values())


def test_a_paused_worker_run_holds_until_its_input_ends_and_then_ends_stopped(runs):
    """Whether the worker really holds, without timing it: a run paused by Step whose input then ends cannot go on
    (the worker ends it "stopped" where it was); a worker that was never told would train on to its last step."""
    c = VisionConfig(model="swin", steps=3000, seed=6)
    run = runs.start(c, "s")
    runs.step(run)
    wait(runs, run, lambda r: r.state == "paused")
    run.proc.stdin.close()
    wait(runs, run, lambda r: not r.active)
    assert run.state == "failed" and run.snaps[-1].step < c.steps and run.snaps[-1].status == "running"

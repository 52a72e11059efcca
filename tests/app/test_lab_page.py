"""The Lab page under AppTest, and its runs: shared, bounded, paused, left."""

import json
import re
import time

import pytest
import torch

from attn_core import lab as engine
from explorer.lab.runs import RUNS, SLOTS

PAGE = "pages/8_lab.py"


def charts(at) -> dict:
    out = {}
    for c in at.get("plotly_chart"):
        spec = json.loads(c.proto.spec)
        out[spec["layout"].get("title", {}).get("text", "")] = spec
    return out


def wait_done(at, timeout=120):
    start = time.time()
    while time.time() - start < timeout:
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        text = " ".join(m.value for m in at.markdown)
        if "done" in text or "完成" in text:
            return at
        time.sleep(0.5)
    raise AssertionError("the run did not finish")


@pytest.fixture(autouse=True)
def _stop_all_runs():
    yield
    for run in list(RUNS.runs.values()):
        RUNS.stop(run)


def test_a_short_run_draws_the_engines_curve_and_the_heads(app):
    at = app(PAGE, query={"lab_task": "shift", "lab_steps": "60", "seed": "3"})  # the Lab's seed is the sidebar's
    assert not at.exception and any("Press Play" in i.value for i in at.info)
    at.button(key="lab_play").click().run()
    wait_done(at)
    drawn = charts(at)
    cfg = engine.LabConfig(task="shift", steps=60, seed=3, d_model=16, d_k=24, d_v=28, heads=1, pos="none")
    expect = engine.run(cfg)  # the same settings, computed here: the page shows the engine's numbers
    train_acc, acc = drawn["Accuracy"]["data"][0], drawn["Accuracy"]["data"][1]
    assert all(0.0 <= a <= 1.0 for a in train_acc["y"]) and train_acc["name"] == "train accuracy"
    assert acc["x"] == [p["step"] for p in expect["curve"]]
    assert acc["y"] == pytest.approx([p["val_acc"] for p in expect["curve"]], abs=0.01)
    head = torch.tensor(drawn["layer 0, head 0"]["data"][0]["z"])
    assert torch.allclose(head, torch.tensor(expect["weights"][0][0]), atol=1e-3)
    assert drawn["Ideal pattern"]["layout"]["title"]["subtitle"]["text"] == "shift by one"  # the task, its own line
    ideal = torch.tensor(drawn["Ideal pattern"]["data"][0]["z"])
    assert torch.equal(ideal, engine.ideal(cfg))
    assert drawn["Accuracy"]["layout"]["yaxis"]["range"] == [0.0, 1.02]  # accuracy on 0-1, whatever it reached
    assert at.select_slider(key="lab_replay").value == 60  # the scrubber, after the run: one mark per snapshot
    at.select_slider(key="lab_replay").set_value(25).run()
    assert "at step 25" in " ".join(c.value for c in at.caption)


def test_identical_runs_are_one_run_shared_by_sessions_and_different_ones_queue():
    cfgs = [engine.LabConfig(task="sort", steps=5000, seed=s) for s in range(SLOTS + 1)]
    first = RUNS.start(cfgs[0], "student-1")
    assert RUNS.start(cfgs[0], "student-2") is first and set(first.watchers) == {"student-1", "student-2"}
    others = [RUNS.start(c, "student-3") for c in cfgs[1:]]
    time.sleep(1.5)
    assert sum(r.state == "running" for r in [first, *others]) == SLOTS
    waiting = [r for r in others if r.state == "queued"]
    assert len(waiting) == 1 and RUNS.position(waiting[0]) == 1
    RUNS.leave(first, "student-1")
    assert first.state == "running"  # student-2 still watches it
    RUNS.leave(first, "student-2")
    assert first.state == "stopped"  # the last watcher left
    deadline = time.time() + 10
    while waiting[0].state == "queued" and time.time() < deadline:
        time.sleep(0.2)
    assert waiting[0].state == "running"  # the freed slot went to the queue


def wait_for(condition, timeout=180.0, where=()) -> None:
    """Until ``condition()`` holds (the workers run at the lowest priority: on a busy machine they wait)."""
    deadline = time.time() + timeout
    while not condition() and time.time() < deadline:
        time.sleep(0.2)
        for r in where:  # watched meanwhile, as a page would (else abandoned after ORPHAN_S)
            RUNS.get(r.cfg, next(iter(r.watchers), ""))
    assert condition(), [(r.state, len(r.snaps), r.message) for r in where]


def settled(run, polls=3) -> int:
    """The snapshot count once it has stopped changing (lines the worker wrote before it was
    paused may still be read): the same count on ``polls`` reads in a row."""
    count, same = len(run.snaps), 0
    while same < polls:
        time.sleep(0.5)
        RUNS.get(run.cfg, next(iter(run.watchers), ""))  # still watched
        same = same + 1 if len(run.snaps) == count else 0
        count = len(run.snaps)
    return count


def test_pause_holds_the_run_and_play_resumes_it():
    run = RUNS.start(engine.LabConfig(task="sort", steps=5000, every=5), "s")
    wait_for(lambda: bool(run.snaps), where=[run])
    RUNS.pause(run)
    assert run.state == "paused"
    held = settled(run)
    time.sleep(1.5)
    assert run.state == "paused" and len(run.snaps) == held
    RUNS.resume(run)
    wait_for(lambda: len(run.snaps) > held, where=[run])


def test_paused_runs_give_their_slots_back_and_play_queues_them_again():
    long = [engine.LabConfig(task="sort", steps=5000, every=5, seed=s) for s in range(2 * SLOTS)]
    first = [RUNS.start(c, "teacher") for c in long[:SLOTS]]
    wait_for(lambda: [(r.state, bool(r.snaps)) for r in first] == [("running", True)] * SLOTS, where=first)
    for r in first:
        RUNS.pause(r)
    others = [RUNS.start(c, "student") for c in long[SLOTS:]]  # every slot was paused: these train at once
    wait_for(lambda: all(r.state == "running" and r.snaps for r in others), where=[*first, *others])
    held = settled(first[0])
    RUNS.resume(first[0])  # Play on a paused run: no slot is free, so it queues for one
    assert first[0].state == "queued" and RUNS.position(first[0]) == 1
    time.sleep(1.0)
    assert first[0].state == "queued" and len(first[0].snaps) == held  # still stopped while it waits
    RUNS.stop(others[0])  # a slot frees: the queued run takes it and trains again
    wait_for(lambda: first[0].state == "running" and len(first[0].snaps) > held, where=[first[0], *others[1:]])
    assert first[1].state == "paused"


def test_finished_runs_are_bounded_in_bytes_the_oldest_dropped_first(monkeypatch):
    from explorer.lab import runs as lab_runs

    done = []
    for seed in (21, 22, 23):
        run = RUNS.start(engine.LabConfig(task="shift", steps=40, every=5, seed=seed), "s")
        wait_for(lambda run=run: not run.active, where=[run])
        assert run.state == "done"
        done.append(run)
    one = done[0].nbytes
    weights = sum(w.numel() * 4 for x in done[0].snaps for w in x.weights)  # float32
    maps = [h for x in done[0].snaps for layer in x.qk for h in layer]  # the query-key maps: 2 points a token
    assert all(len(h["q_norm"]) == len(h["queries"]) and len(h["k_norm"]) == len(h["keys"]) for h in maps)
    qk = sum(len(h["queries"]) + len(h["keys"]) for h in maps) * 3 * 8  # three Python floats a point: x, y, norm
    assert qk > 0 and one == weights + qk + 200 * len(done[0].snaps)
    monkeypatch.setattr(lab_runs, "KEEP_BYTES", int(2.5 * one))
    with RUNS.lock:
        RUNS._forget_old()
    kept = [r for r in RUNS.runs.values() if not r.active]
    assert RUNS.kept_bytes() <= 2.5 * one and done[0] not in kept and done[-1] in kept


def test_the_workers_run_at_the_lowest_priority():
    import os

    run = RUNS.start(engine.LabConfig(task="sort", steps=5000, every=5, seed=31), "s")
    wait_for(lambda: run.proc is not None and bool(run.snaps), where=[run])
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    assert os.getpriority(os.PRIO_PROCESS, run.proc.pid) == min(19, mine + 19)


def test_bad_lab_links_are_dropped_with_a_notice_and_the_page_still_works(app):
    at = app(PAGE, query={"lab_lr": "nan", "lab_batch": "0", "lab_steps": "1e9", "lab_task": "<b>x</b>"})
    assert not at.exception
    notice = " ".join(w.value for w in at.sidebar.warning).replace("\\", "")
    assert all(name in notice for name in ("lab_lr", "lab_batch", "lab_steps", "lab_task"))
    assert at.number_input(key="lab_lr").value == pytest.approx(3e-3)


def test_a_variant_the_lab_cannot_train_says_which_it_can_in_the_uis_language(app):
    at = app(PAGE, query={"kernel": "performer", "lang": "zh"})
    assert not at.exception
    shown = " ".join(e.value for e in at.error).replace("\\", "")  # as shown: Markdown escapes removed
    assert "实验室可训练的变体" in shown and "linear_elu" in shown


def test_a_preset_sets_both_runs_and_the_table_compares_them(app):
    at = app(PAGE)
    at.button(key="lab_preset_positions").click().run()
    assert not at.exception
    assert at.selectbox(key="pos").value == "none" and at.selectbox(key="lab_pos").value == "sidebar"  # one place
    assert at.selectbox(key="lab_b").value == "positions"
    wait_done(at, timeout=180)
    deadline = time.time() + 120
    while time.time() < deadline and len([m for m in at.markdown if "done" in m.value]) < 2:
        time.sleep(0.5)
        at.run()
    table = next(d.value for d in at.table if "run" in d.value.columns)  # A against B (not a scores table)
    reached = dict(zip(table.iloc[:, 0], table.iloc[:, 1]))
    assert reached["A"] == "did not reach it" and reached["B"].isdigit()  # positions are what reverse needs
    drawn = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    ranges = {}
    for spec in drawn:
        title = spec["layout"].get("title", {}).get("text", "")
        if title in ("Accuracy", "Loss"):
            ranges.setdefault(title, []).append(spec["layout"]["yaxis"]["range"])
    assert ranges["Accuracy"] == [[0.0, 1.02]] * 2 and ranges["Loss"][0] == ranges["Loss"][1]  # A and B share axes
    for spec in drawn:
        legend = spec["layout"].get("legend")
        if legend:
            assert legend["orientation"] == "h" and legend["y"] < 0  # under the chart, not across it


def test_a_worker_left_idle_exits_and_the_next_run_gets_a_fresh_one(monkeypatch):
    from explorer.lab import runs as lab_runs

    monkeypatch.setattr(lab_runs, "IDLE_S", 0.5)
    run = RUNS.start(engine.LabConfig(task="shift", steps=10, seed=11), "s")
    deadline = time.time() + 60
    while run.active and time.time() < deadline:
        time.sleep(0.1)
    assert run.state == "done" and len(RUNS.idle) >= 1
    worker = RUNS.idle[-1][0]
    deadline = time.time() + 10
    while worker.poll() is None and time.time() < deadline:
        time.sleep(0.1)
    assert worker.poll() is not None and all(p is not worker for p, _ in RUNS.idle)  # ended, memory returned
    again = RUNS.start(engine.LabConfig(task="shift", steps=10, seed=12), "s")
    deadline = time.time() + 60
    while again.active and time.time() < deadline:
        time.sleep(0.1)
    assert again.state == "done"


def code_text(at) -> str:
    return "\n".join(c.value for c in at.code)


def test_each_preset_runs_exactly_what_the_command_line_reproduces(app):
    """A preset's A and B on the page are the engine's ``preset(name)`` (with the sidebar's seed):
    the command shown names the preset's sides only when the runs are exactly those."""
    at = app(PAGE)
    assert not at.code  # the fold's code is sent only once it is opened
    at.session_state["lab_cli"] = True  # as the browser sends an opened fold
    at.run()
    seed = at.number_input(key="seed").value
    for name in engine.PRESETS:
        at.button(key=f"lab_preset_{name}").click().run()
        assert not at.exception, [e.value for e in at.exception]
        shown = code_text(at)
        assert f"--preset {name} --side a --seed {seed} --json" in shown, shown
        assert f"--preset {name} --side b --seed {seed} --json" in shown, shown
        a, b = engine.preset(name)
        from dataclasses import replace

        for side in (a, b):
            assert RUNS.get(replace(side, seed=seed), "other") is not None  # the page started exactly these
    at.number_input(key="lab_batch").set_value(65).run()  # no longer a preset: every setting is spelled out
    assert "--preset" not in code_text(at) and "--batch 65" in code_text(at)


def test_step_reaches_the_next_snapshot_and_pauses_reset_leaves_the_runs(app):
    at = app(PAGE, query={"lab_task": "sort", "lab_steps": "5000", "seed": "41"})
    at.button(key="lab_step").click().run()
    cfg = engine.LabConfig(task="sort", steps=5000, seed=41, d_model=16, d_k=24, d_v=28, heads=1, pos="none")
    run = RUNS.runs.get(engine.validate(cfg))  # looked up without watching it
    assert run is not None
    wait_for(lambda: run.state == "paused" and bool(run.snaps), where=[run])
    held = settled(run)
    assert [x.step for x in run.snaps[:held]] == [25]  # it ran to its first snapshot and stopped there
    at.run()
    assert any("paused at step 25" in m.value for m in at.markdown)
    at.button(key="lab_reset").click().run()
    assert run.state == "stopped" and at.session_state["lab_watching"] == []  # its only watcher left
    assert any("Press Play" in i.value for i in at.info) and not at.get("plotly_chart")[1:]
    at.run()
    assert run.state == "stopped" and any("Press Play" in i.value for i in at.info)  # and it stays left


def test_play_has_the_p_shortcut(app):
    at = app(PAGE)
    play = at.button(key="lab_play")
    assert play.proto.shortcut.lower() == "p" and at.button(key="lab_pause").proto.shortcut == ""


@pytest.mark.parametrize("lang,words", [("en", "would need about"), ("zh", "大约需要")])
def test_settings_over_the_memory_bound_are_refused_before_a_run_starts(app, lang, words):
    huge = {"heads": "8", "d_model": "256", "d_q": "512", "d_k": "512", "d_v": "256", "lab_batch": "512"}
    huge |= {"lab_length": "32", "lab_layers": "2", "score": "additive", "lang": lang}
    at = app(PAGE, query=huge)
    shown = " ".join(e.value for e in at.error).replace("\\", "")
    need = engine.estimate_bytes(
        engine.LabConfig(score="additive", heads=8, d_model=256, d_k=512, d_v=256, length=32, batch=512, layers=2)
    )
    assert words in shown and f"{-(-need // 2**20)} MiB" in shown, shown
    assert not [b for b in at.button if b.key == "lab_play"]  # the page stopped before its buttons
    assert not any(r.active for r in RUNS.runs.values())


def test_the_linked_recall_lengths_and_the_sidebars_largest_dropout(app):
    for length in ("19", "32"):
        at = app(PAGE, query={"lab_task": "recall", "lab_length": length})
        notice = " ".join(w.value for w in at.sidebar.warning).replace("\\", "")
        assert "lab_length" in notice and at.number_input(key="lab_length").value == 9, notice
        assert not at.error
    at = app(PAGE, query={"dropout_on": "true", "dropout": "0.9"})
    assert not at.error and any("Estimated peak memory" in c.value for c in at.caption)


def test_a_run_whose_worker_is_killed_says_why(app):
    import signal

    at = app(PAGE, query={"lab_task": "sort", "lab_steps": "5000", "seed": "43"})
    at.button(key="lab_play").click().run()
    cfg = engine.LabConfig(task="sort", steps=5000, seed=43, d_model=16, d_k=24, d_v=28, heads=1, pos="none")
    run = RUNS.runs.get(engine.validate(cfg))
    wait_for(lambda: run.proc is not None and bool(run.snaps), where=[run])
    run.proc.send_signal(signal.SIGKILL)  # as the kernel's out-of-memory killer would
    wait_for(lambda: run.state == "failed", where=[run])
    at.run()
    shown = " ".join(e.value for e in at.error).replace("\\", "")  # as shown: Markdown escapes removed
    assert "stopped its worker (signal 9)" in shown and "memory" in shown, shown
    assert RUNS.runs.get(engine.validate(cfg)) is run  # still playing, but a failed run is not restarted by itself


def test_the_query_key_map_of_a_finished_run_is_the_engines_at_the_replayed_step(app):
    """Opened after a short run: the map at the last step is the engine's own snapshot's (the same settings trained
    here), and moving the replay to the first step draws that step's map."""
    from attn_core.lab.training import train

    at = app(PAGE, query={"lab_task": "shift", "lab_steps": "50", "seed": "3"})
    at.button(key="lab_play").click().run()
    wait_done(at)
    assert not [c for c in charts(at) if c.startswith("Queries and keys")]  # nothing until opened
    at.session_state["lab_qk_open_A"] = True
    at.session_state["lab_qk_colour_A"] = "norm"
    at.run()
    cfg = engine.LabConfig(task="shift", steps=50, seed=3, d_model=16, d_k=24, d_v=28, heads=1, pos="none")
    snaps = list(train(cfg))
    for step in (snaps[-1].step, snaps[0].step):
        at.select_slider(key="lab_replay").set_value(step).run()
        assert not at.exception, [e.value for e in at.exception]
        spec = charts(at)[f"Queries and keys as a map (layer 0, head 0, step {step})"]
        want = torch.tensor(next(s for s in snaps if s.step == step).qk[0][0]["queries"])
        q = next(t for t in spec["data"] if t.get("name") == "queries")
        got = torch.tensor([q["x"], q["y"]]).T
        got = got * torch.where((got * want).sum(0) < 0, -1.0, 1.0)  # a principal axis's sign is arbitrary
        assert torch.allclose(got, want, rtol=1e-3, atol=1e-3 * float(want.abs().max()))
        norms = torch.tensor(next(s for s in snaps if s.step == step).qk[0][0]["q_norm"])  # colour by norm
        assert torch.allclose(torch.tensor(q["marker"]["color"]), norms, rtol=1e-3, atol=1e-4 * float(norms.max()))


def test_the_sink_chart_is_every_heads_first_token_score_over_the_steps(app):
    """Opened after a short run of two heads: one line a head, its points the engine's own snapshots' first-token
    scores (the same settings trained here), Gu et al.'s threshold drawn, the heaviest head named under it."""
    from attn_core.lab.training import train

    at = app(PAGE, query={"lab_task": "repeat", "lab_steps": "50", "seed": "3", "heads": "2"})
    at.button(key="lab_play").click().run()
    wait_done(at)
    assert "Weight on the first token (queries after it), per head" not in charts(at)  # nothing until opened
    at.session_state["lab_sink_open_A"] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    spec = charts(at)["Weight on the first token (queries after it), per head"]
    cfg = engine.LabConfig(task="repeat", steps=50, seed=3, d_model=16, d_k=24, d_v=28, heads=2, pos="none")
    snaps = list(train(cfg))
    lines = {t["name"]: t for t in spec["data"]}
    assert set(lines) == {"layer 0, head 0", "layer 0, head 1"}
    for h in (0, 1):
        line = lines[f"layer 0, head {h}"]
        assert line["x"] == [s.step for s in snaps]
        assert line["y"] == pytest.approx([s.scores[0][h]["first"] for s in snaps], abs=1e-3)
    assert any(s.get("y0") == 0.3 for s in spec["layout"]["shapes"])
    last = {h: snaps[-1].scores[0][h]["first"] for h in (0, 1)}
    told = re.compile(r"head (\d) puts the most on the first token: ([\d.]+)")
    (said,) = [told.search(c.value) for c in at.caption if "puts the most" in c.value]
    named = int(said.group(1))
    assert float(said.group(2)) == pytest.approx(last[named], abs=2e-3)  # the worker's one thread against ours
    assert last[named] >= max(last.values()) - 2e-3

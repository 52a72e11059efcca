"""The compiled kernels' C signatures are written once in Python (``native.SIGNATURES``, from which the
library is declared to ctypes): here that table is checked against the functions the C++ sources export,
read from their ``extern "C"`` blocks, so a changed argument on either side fails a test instead of
passing the wrong number of bytes."""

import ctypes
import re

import pytest

from attn_core.kernels import native

CTYPES = {"int": ctypes.c_int, "long": ctypes.c_long, "float": ctypes.c_float, "double": ctypes.c_double}


def top_level(block: str) -> str:
    """The text of a ``{ ... }`` block's own level: every nested body reduced to ``{}``."""
    out, depth = [], 0
    for ch in block:
        if ch == "}":
            depth -= 1
        if depth == 0:
            out.append(ch)
        if ch == "{":
            depth += 1
    return "".join(out)


def extern_c_blocks(source: str) -> list[str]:
    """The inside of each ``extern "C" { ... }`` block, comments removed."""
    text = re.sub(r"//[^\n]*|/\*.*?\*/", "", source, flags=re.DOTALL)
    blocks = []
    for m in re.finditer(r'extern\s+"C"\s*\{', text):
        depth, i = 1, m.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        blocks.append(text[m.end() : i - 1])
    return blocks


def ctype(declaration: str) -> type:
    """A C type (``const`` or not) as ctypes sees it: any pointer is c_void_p."""
    if "*" in declaration:
        return ctypes.c_void_p
    (word,) = [w for w in declaration.split() if w != "const"]
    return CTYPES[word]


def exported(source: str) -> dict[str, tuple[type, list[type]]]:
    """name -> (result, arguments) of every function defined or declared in the source's extern "C" blocks."""
    found = {}
    for block in extern_c_blocks(source):
        for m in re.finditer(r"([\w\s\*]+?)\b(\w+)\s*\(([^)]*)\)\s*[{;]", top_level(block)):
            params = [p.strip() for p in m.group(3).split(",") if p.strip() not in ("", "void")]
            found[m.group(2)] = (ctype(m.group(1)), [ctype(p.rsplit(None, 1)[0]) for p in params])  # less its name
    return found


def sources() -> dict[str, str]:
    return {p.name: p.read_text() for p in native.SOURCES + native.HEADERS}


def exported_by_all(texts: dict[str, str]) -> dict[str, tuple[type, list[type]]]:
    out: dict[str, tuple[type, list[type]]] = {}
    for name, text in texts.items():
        functions = exported(text)
        assert not set(out) & set(functions), f"{name} exports a name twice"
        out.update(functions)
    return out


def test_the_table_is_what_the_sources_export():
    assert exported_by_all(sources()) == native.SIGNATURES


@pytest.mark.parametrize(
    "file,old,new",
    [
        ("band.cpp", "float scale", "double scale"),  # an argument's type
        ("linear.cpp", "long Dv,\n                     long n0, long n1)", "long Dv, long n0)"),  # one argument fewer
        ("linear.cpp", "long C, long n0, long n1)", "long C, long n0, long n1, long extra)"),  # one more
        ("band.cpp", "int band_vector_width()", "long band_vector_width()"),  # the result's type
        (
            "tiles.h",
            "#pragma once",
            '#pragma once\nextern "C" {\nint stray(float* x);\n}',
        ),  # a function not in the table
    ],
)
def test_the_check_catches_a_changed_signature(file, old, new):
    texts = sources()
    assert old in texts[file]
    texts[file] = texts[file].replace(old, new, 1)
    assert exported_by_all(texts) != native.SIGNATURES


def test_the_library_is_declared_from_the_table():
    lib = native.library()
    if lib is None:
        pytest.skip(f"no compiled kernels here: {native.why()}")
    for name, (result, arguments) in native.SIGNATURES.items():
        assert getattr(lib, name).restype is result and list(getattr(lib, name).argtypes) == arguments

"""The UI's strings are the engine's package data: ``attn_core.locales`` reads them from its own package (no path
into ``explorer/``, a tie the import graph could not see), and the app reads the same strings through it."""

from __future__ import annotations

import ast
import os
from pathlib import Path

from attn_core import locales

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "attn_core"


def _names_a_ui_folder(value: str) -> bool:
    parts = value.replace("\\", "/").split("/")
    return parts[0] == "explorer" or "explorer" in parts[:-1] and len(parts) > 1


def ui_paths_in(top: Path) -> list[str]:
    """Every string constant of the engine's code that is the UI's folder or a path through it."""
    found = []
    for folder, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if not name.endswith(".py"):
                continue
            file = Path(folder, name)
            for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and _names_a_ui_folder(node.value):
                    found.append(f"{file.relative_to(top)}:{node.lineno} {node.value!r}")
    return found


def test_the_files_are_the_engines_own():
    for lang in locales.LANGS:
        file = Path(str(locales.path(lang)))
        assert file.is_file() and file.parent == ENGINE / "locales", file
        assert locales.strings(lang)["nb_setup"]  # read from there, a key the notebook export quotes
    assert not (ROOT / "explorer" / "locales").exists()  # one copy of the strings, not two


def test_the_engine_reads_no_folder_of_the_ui():
    assert ui_paths_in(ENGINE) == []


def test_a_path_into_the_ui_is_found(tmp_path):
    """The check above can fail: a module that builds a path into explorer/ (as locales.py once did) is found."""
    (tmp_path / "bad.py").write_text('FOLDER = ROOT / "explorer" / "locales"\nOTHER = "explorer/locales/en.toml"\n')
    (tmp_path / "fine.py").write_text('NAME = "attention-explorer"\nKEY = "_attn_explorer_hooks"\n')
    found = ui_paths_in(tmp_path)
    assert len(found) == 2 and all("bad.py" in f for f in found)


def test_the_app_reads_the_same_strings():
    from explorer.base import i18n

    en, zh = locales.strings("en"), locales.strings("zh")
    assert set(i18n.STRINGS) == set(en)
    assert all(i18n.STRINGS[key] == (text, zh.get(key, text)) for key, text in en.items())

"""What a page says of a measurement says it in words: no string of either catalogue names a recorded result's
file (``benchmarks/results/lab_presets_cpu.txt``, ``decoder_train.json``), which a learner cannot open. The one
exception is a note to whoever runs the server (``OPERATOR``), shown only when a record is missing."""

import re
from pathlib import Path

from attn_core import locales

OPERATOR = {"lab_no_record"}  # "run python benchmarks/lab_presets.py": an instruction to the server's operator
RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
# the folder, or any file recorded in it, named bare
FILE = re.compile("|".join(["benchmarks/", *(re.escape(p.name) for p in sorted(RESULTS.iterdir()) if p.is_file())]))


def flat(table: dict, prefix: str = "") -> dict[str, str]:
    out = {}
    for key, value in table.items():
        if isinstance(value, dict):
            out |= flat(value, f"{prefix}{key}.")
        elif isinstance(value, str):
            out[prefix + key] = value
    return out


def named_files(strings: dict[str, str]) -> dict[str, list[str]]:
    return {k: FILE.findall(v) for k, v in strings.items() if k not in OPERATOR and FILE.search(v)}


def test_no_string_names_a_file_a_learner_cannot_open():
    for lang in locales.LANGS:
        found = named_files(flat(locales.strings(lang)))
        assert not found, (lang, found)


def test_the_check_finds_a_file_name():
    found = named_files(
        {"a": "measured (benchmarks/results/x.txt)", "b": "see decoder_train.json", "c": "its config.json", "d": "3 s"}
    )
    assert set(found) == {"a", "b"}

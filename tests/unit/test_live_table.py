"""``attn_core.knobs.Live``: a table made from the registered rows each time it is read, so a row
registered later is in it, and made once per reading: a walk over its items, values or keys, ``get`` and ``in``
each build it once (Mapping's own walk built it again for every row: the Lab's settings check did so on every
rerun, a tenth of the Lab page's time under a class)."""

from __future__ import annotations

from attn_core.knobs import Live
from attn_core.lab.config import LAB_LIMITS, OWN_LIMITS


def counting(rows: dict) -> tuple[Live, list[int]]:
    made = [0]

    def make() -> dict:
        made[0] += 1
        return dict(rows)

    return Live(make), made


def test_each_reading_builds_the_table_once_and_reads_what_the_table_has():
    rows = {f"d{i}": (i, 2 * i) for i in range(12)}
    table, made = counting(rows)
    for read, expected in (
        (lambda: list(table.items()), list(rows.items())),
        (lambda: list(table.values()), list(rows.values())),
        (lambda: list(table.keys()), list(rows)),
        (lambda: list(iter(table)), list(rows)),
        (lambda: table.get("d3"), (3, 6)),
        (lambda: table.get("nope", "default"), "default"),
        (lambda: "d11" in table, True),
        (lambda: "d12" in table, False),
        (lambda: table["d5"], (5, 10)),
        (lambda: len(table), 12),
    ):
        made[0] = 0
        assert read() == expected
        assert made[0] == 1, made[0]
    assert dict(table) == rows


def test_a_row_registered_later_is_read():
    rows = {"a": 1}
    table, _ = counting(rows)
    rows["b"] = 2
    assert dict(table.items()) == {"a": 1, "b": 2} and table.get("b") == 2 and "b" in table


def test_the_labs_limits_read_once_equal_the_rows_read_one_by_one():
    assert dict(LAB_LIMITS.items()) == {name: LAB_LIMITS[name] for name in LAB_LIMITS}
    assert set(OWN_LIMITS) <= set(LAB_LIMITS.keys())

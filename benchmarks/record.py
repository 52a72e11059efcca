"""What a benchmark script does with its report: print it, and append it to a record (``--out``) when asked."""

from __future__ import annotations


def emit(lines: list[str], out: str = "") -> None:
    """Print ``lines``; with ``out``, append them to that record, one blank line after."""
    print("\n".join(lines))
    if out:
        with open(out, "a", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n\n")

"""Shared reading helpers for the line-based formats (RTTM, STM, CTM)."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Iterator

from speechkit.errors import FormatError


def read_lines(path: str | Path, comment: str) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(line_number, fields)`` for each non-blank, non-comment line of a text file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FormatError(path, "file not found") from None
    except UnicodeDecodeError as exc:
        raise FormatError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except IsADirectoryError:
        raise FormatError(path, "is a directory, expected a file") from None
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith(comment):
            continue
        yield number, stripped.split()


def parse_time(value: str, path: str | Path, line: int, field: str) -> float:
    """A finite, non-negative number of seconds, or a FormatError naming the field."""
    try:
        seconds = float(value)
    except ValueError:
        raise FormatError(path, f"expected a number of seconds, got {value!r}", line=line, field=field) from None
    if not math.isfinite(seconds) or seconds < 0:
        raise FormatError(path, f"expected a finite time >= 0, got {value!r}", line=line, field=field)
    return seconds


def fmt_time(seconds: float) -> str:
    """Seconds with millisecond precision, as the NIST formats write them."""
    return f"{seconds:.3f}"

"""Shared reading helpers for the line-based formats (RTTM, STM, CTM)."""
from __future__ import annotations

import math
import os
import stat
from pathlib import Path
from typing import Iterator

from speechkit.errors import FormatError


def check_input(path: str | Path) -> None:
    """Raise a FormatError unless ``path`` is a regular file (links followed).

    A device, a FIFO or a socket is refused before it is opened: ``/dev/zero`` never ends and a
    FIFO blocks until someone writes to it.
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise FormatError(path, "file not found") from None
    except OSError as exc:
        raise FormatError(path, f"cannot read: {exc.strerror or type(exc).__name__}") from None
    if stat.S_ISDIR(st.st_mode):
        raise FormatError(path, "is a directory, expected a file")
    if not stat.S_ISREG(st.st_mode):
        raise FormatError(path, "is not a regular file (a device, FIFO or socket); expected a file")


def read_text(path: str | Path) -> str:
    """The UTF-8 text of a regular file, or a FormatError naming it."""
    check_input(path)
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FormatError(path, "file not found") from None
    except UnicodeDecodeError as exc:
        raise FormatError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except IsADirectoryError:
        raise FormatError(path, "is a directory, expected a file") from None
    except OSError as exc:
        raise FormatError(path, f"cannot read: {exc.strerror or type(exc).__name__}") from None


def read_lines(path: str | Path, comment: str) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(line_number, fields)`` for each non-blank, non-comment line of a text file."""
    text = read_text(path)
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

"""Reading text inputs: regular files only, bounded in size; the line-based formats (RTTM, STM, CTM)."""
from __future__ import annotations

import math
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from speechkit.errors import FormatError

#: The most bytes speechkit reads from one input file (after decompression, for gzip files).
MAX_INPUT_BYTES = 256 << 20


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
        raise FormatError(path, f"cannot read: {_reason(exc)}") from None
    if stat.S_ISDIR(st.st_mode):
        raise FormatError(path, "is a directory, expected a file")
    if not stat.S_ISREG(st.st_mode):
        raise FormatError(path, "is not a regular file (a device, FIFO or socket); expected a file")


def present_input(path: str | Path, folder: str | Path, what: str = "its folder") -> bool:
    """Whether an optional input inside ``folder`` (a meeting's gold notes or questions, a run's
    notes) is there: False when nothing is at ``path``; a FormatError when something is there
    that is not a regular file (a folder, a FIFO, a link to ``/dev/zero`` or to nothing: a plain
    ``is_file()`` test would take them for absent) or that resolves outside ``folder`` (``what``
    names it)."""
    if not os.path.lexists(path):
        return False
    check_input(path)
    try:
        inside, resolved = Path(folder).resolve(), Path(path).resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop, a name too long
        raise FormatError(path, f"cannot be resolved: {exc}") from None
    if inside not in resolved.parents:
        raise FormatError(path, f"leaves {what} {inside} (it resolves to {resolved})")
    return True


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


@contextmanager
def open_input(path: str | Path) -> Iterator[BinaryIO]:
    """``path`` opened for reading in binary mode, after :func:`check_input`; errors name the file."""
    check_input(path)
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise FormatError(path, f"cannot read: {_reason(exc)}") from None
    with handle:
        yield handle


def read_text(path: str | Path) -> str:
    """The UTF-8 text of a regular file of at most MAX_INPUT_BYTES (a byte-order mark dropped),
    or a FormatError naming it."""
    with open_input(path) as handle:
        try:
            data = handle.read(MAX_INPUT_BYTES + 1)
        except OSError as exc:
            raise FormatError(path, f"cannot read: {_reason(exc)}") from None
    if len(data) > MAX_INPUT_BYTES:
        raise FormatError(path, f"larger than {MAX_INPUT_BYTES >> 20} MiB, the limit for an input file")
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise FormatError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def text_lines(text: str) -> list[str]:
    """``text`` split at line feeds only (``\\r\\n`` included), never at the other characters
    ``str.splitlines`` breaks at (U+2028, U+0085, form feed, ...), which formats keep inside a line."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def read_lines(path: str | Path, comment: str) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(line_number, fields)`` for each non-blank, non-comment line of a text file."""
    text = read_text(path)
    for number, line in enumerate(text_lines(text), start=1):
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

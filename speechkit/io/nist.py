"""Writing the line-based NIST formats (RTTM, STM, CTM): lines per transcript, written atomically.

Each format says what lines one transcript gives; :func:`write_lines` writes them for every
transcript, with the session id as one whitespace-free field (:func:`speechkit.io.names.session_token`).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from speechkit.errors import FormatError
from speechkit.io.atomic import write_text
from speechkit.io.names import session_token
from speechkit.transcript import Transcript

#: The lines of one transcript, given its session id as a field.
LinesOf = Callable[[str, Transcript], Iterable[str]]


def write_lines(path: str | Path, fmt: str, transcripts: list[Transcript], lines_of: LinesOf) -> None:
    """Write ``lines_of(session field, transcript)`` of each of ``transcripts`` to ``path`` (one
    line feed after each line), atomically; a value that cannot be written (an empty session id or
    speaker) is a FormatError naming ``path`` and the format ``fmt``."""
    try:
        lines = [line for t in transcripts for line in lines_of(session_token(t.session_id), t)]
    except ValueError as exc:
        raise FormatError(path, f"cannot write {fmt}: {exc}") from None
    write_text(path, "".join(line + "\n" for line in lines))

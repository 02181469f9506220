"""File formats: RTTM, STM, CTM, SegLST JSON and the workspace manifest.

:func:`read_transcripts` and :func:`write_transcripts` pick the format from the file name.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from speechkit.errors import FormatError
from speechkit.io.ctm import read_ctm, write_ctm
from speechkit.io.rttm import read_rttm, write_rttm
from speechkit.io.seglst import read_seglst, write_seglst
from speechkit.io.stm import read_stm, write_stm
from speechkit.transcript import Transcript

READERS: dict[str, Callable[[str | Path], dict[str, Transcript]]] = {
    "rttm": read_rttm, "stm": read_stm, "ctm": read_ctm, "seglst": read_seglst,
}
WRITERS: dict[str, Callable[[str | Path, list[Transcript]], None]] = {
    "rttm": write_rttm, "stm": write_stm, "ctm": write_ctm, "seglst": write_seglst,
}


def format_of(path: str | Path) -> str:
    """The transcript format of a file, from its extension (``.json`` is SegLST)."""
    suffix = Path(path).suffix.lower().lstrip(".")
    fmt = "seglst" if suffix == "json" else suffix
    if fmt not in READERS:
        raise FormatError(path, f"unknown transcript format {suffix!r}; expected one of "
                                ".rttm, .stm, .ctm, .json (SegLST)")
    return fmt


def read_transcripts(path: str | Path, fmt: str | None = None) -> dict[str, Transcript]:
    """Read a transcript file in any supported format into transcripts keyed by session id."""
    return READERS[fmt or format_of(path)](path)


def write_transcripts(path: str | Path, transcripts: list[Transcript], fmt: str | None = None) -> None:
    """Write transcripts in the format named by ``fmt`` or the file extension, atomically."""
    WRITERS[fmt or format_of(path)](path, transcripts)


__all__ = ["read_transcripts", "write_transcripts", "format_of", "read_rttm", "write_rttm", "read_stm",
           "write_stm", "read_ctm", "write_ctm", "read_seglst", "write_seglst"]

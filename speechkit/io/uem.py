"""NIST UEM files: the regions of each recording that are scored.

One region per line, ``<file> <channel> <start> <end>`` (seconds; ``;;`` starts a comment), as
md-eval and pyannote.metrics read them. DER and JER are then computed only inside the regions
of their session (``speechkit score --uem FILE``).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from speechkit.errors import FormatError
from speechkit.io._lines import parse_time, read_lines


@dataclass(frozen=True)
class Uem:
    """The scored regions of each session of a UEM file, ``(start, end)`` in seconds."""

    path: str
    regions: dict[str, tuple[tuple[float, float], ...]]

    def regions_of(self, session: str) -> tuple[tuple[float, float], ...]:
        """The scored regions of ``session``; a session the file does not list is an error."""
        if session not in self.regions:
            listed = ", ".join(sorted(self.regions)[:10]) + (", ..." if len(self.regions) > 10 else "")
            raise FormatError(self.path, f"no scored region for session {session!r} (the file lists {listed})")
        return self.regions[session]


def read_uem(path: str | Path) -> Uem:
    """Read a UEM file; a malformed line, an end before its start or no region at all is a
    :class:`~speechkit.errors.FormatError` naming the file and line."""
    regions: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for line, fields in read_lines(path, comment=";;"):
        if len(fields) != 4:
            raise FormatError(path, f"expected <file> <channel> <start> <end>, got {len(fields)} field(s)", line=line)
        start = parse_time(fields[2], path, line, "start")
        end = parse_time(fields[3], path, line, "end")
        if end <= start:
            raise FormatError(path, f"the end {fields[3]} is not after the start {fields[2]}", line=line)
        regions[fields[0]].append((start, end))
    if not regions:
        raise FormatError(path, "no scored region (expected lines <file> <channel> <start> <end>)")
    return Uem(str(path), {sid: tuple(sorted(r)) for sid, r in regions.items()})

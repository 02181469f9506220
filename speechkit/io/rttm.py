"""RTTM (NIST Rich Transcription Time Marked): speaker turns, no words.

Each ``SPEAKER`` line is ``SPEAKER <file> <chan> <onset> <duration> <NA> <NA> <speaker> <NA> <NA>``.
Other line types are ignored, as md-eval does. Fields are separated by whitespace: the writer maps
each run of whitespace in a file id or speaker to ``_`` (:func:`speechkit.io.names.session_token`),
and the reader refuses a ``SPEAKER`` line of more than 10 fields or with the speaker ``<NA>``, the
marks of an id holding a space, rather than read it shifted.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from speechkit.errors import FormatError
from speechkit.io._lines import fmt_time, parse_time, read_lines
from speechkit.io.names import session_token
from speechkit.io.nist import write_lines
from speechkit.transcript import Segment, Transcript


def read_rttm(path: str | Path) -> dict[str, Transcript]:
    """Read an RTTM file into one transcript (without words) per file id."""
    turns: dict[str, list[Segment]] = defaultdict(list)
    for line, fields in read_lines(path, comment="#"):
        if fields[0] != "SPEAKER":
            continue
        if len(fields) < 8:
            raise FormatError(path, f"SPEAKER line needs at least 8 fields, got {len(fields)}", line=line)
        if len(fields) > 10 or fields[7] == "<NA>":
            raise FormatError(path, f"SPEAKER line has {len(fields)} fields and speaker {fields[7][:40]!r}; expected "
                                    f"SPEAKER <file> <channel> <onset> <duration> <NA> <NA> <speaker> <NA> <NA>, "
                                    f"each without spaces (does the file id or speaker hold a space?)", line=line)
        onset = parse_time(fields[3], path, line, "onset")
        duration = parse_time(fields[4], path, line, "duration")
        turns[fields[1]].append(Segment(start=onset, end=onset + duration, speaker=fields[7]))
    return {sid: Transcript(sid, segs, has_words=False) for sid, segs in turns.items()}


def _rttm_lines(session: str, t: Transcript) -> Iterator[str]:
    for s in t.segments:
        speaker = session_token(s.speaker_name or s.speaker)
        yield f"SPEAKER {session} 1 {fmt_time(s.start)} {fmt_time(s.duration)} <NA> <NA> {speaker} <NA> <NA>"


def write_rttm(path: str | Path, transcripts: list[Transcript]) -> None:
    """Write the speaker turns of ``transcripts`` as RTTM, atomically. Named speakers are written by name."""
    write_lines(path, "RTTM", transcripts, _rttm_lines)

"""RTTM (NIST Rich Transcription Time Marked): speaker turns, no words.

Each ``SPEAKER`` line is ``SPEAKER <file> <chan> <onset> <duration> <NA> <NA> <speaker> <NA> <NA>``.
Other line types are ignored, as md-eval does.
"""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from speechkit.errors import FormatError
from speechkit.io._lines import fmt_time, parse_time, read_lines
from speechkit.io.atomic import write_text
from speechkit.transcript import Segment, Transcript


def read_rttm(path: str | Path) -> dict[str, Transcript]:
    """Read an RTTM file into one transcript (without words) per file id."""
    turns: dict[str, list[Segment]] = defaultdict(list)
    for line, fields in read_lines(path, comment="#"):
        if fields[0] != "SPEAKER":
            continue
        if len(fields) < 8:
            raise FormatError(path, f"SPEAKER line needs at least 8 fields, got {len(fields)}", line=line)
        onset = parse_time(fields[3], path, line, "onset")
        duration = parse_time(fields[4], path, line, "duration")
        turns[fields[1]].append(Segment(start=onset, end=onset + duration, speaker=fields[7]))
    return {sid: Transcript(sid, segs, has_words=False) for sid, segs in turns.items()}


def format_rttm(transcripts: list[Transcript]) -> str:
    """RTTM text for the speaker turns of ``transcripts``."""
    lines = []
    for t in transcripts:
        for s in t.segments:
            speaker = (s.speaker_name or s.speaker).replace(" ", "_")
            lines.append(f"SPEAKER {t.session_id} 1 {fmt_time(s.start)} {fmt_time(s.duration)} "
                         f"<NA> <NA> {speaker} <NA> <NA>")
    return "\n".join(lines) + ("\n" if lines else "")


def write_rttm(path: str | Path, transcripts: list[Transcript]) -> None:
    """Write ``transcripts`` as RTTM, atomically. Named speakers are written by name."""
    write_text(path, format_rttm(transcripts))

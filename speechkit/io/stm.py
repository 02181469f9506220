"""STM (NIST Segment Time Mark): one segment per line with speaker and text, no word times.

Line: ``<file> <channel> <speaker> <begin> <end> [<label>] <transcript...>``; ``;;`` starts a
comment. Segments marked ``ignore_time_segment_in_scoring`` are skipped.
"""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from speechkit.errors import FormatError
from speechkit.io._lines import fmt_time, parse_time, read_lines
from speechkit.io.atomic import write_text
from speechkit.transcript import Segment, Transcript, Word


def read_stm(path: str | Path) -> dict[str, Transcript]:
    """Read an STM file into one transcript per file id (words without times)."""
    segments: dict[str, list[Segment]] = defaultdict(list)
    for line, fields in read_lines(path, comment=";;"):
        if len(fields) < 5:
            raise FormatError(path, f"expected at least 5 fields (file channel speaker begin end), "
                                    f"got {len(fields)}", line=line)
        begin = parse_time(fields[3], path, line, "begin")
        end = parse_time(fields[4], path, line, "end")
        if end < begin:
            raise FormatError(path, f"end {end} is before begin {begin}", line=line, field="end")
        words = fields[5:]
        if words and words[0].startswith("<") and words[0].endswith(">"):
            words = words[1:]
        if words == ["ignore_time_segment_in_scoring"]:
            continue
        segments[fields[0]].append(Segment(start=begin, end=end, speaker=fields[2], text=" ".join(words),
                                           words=tuple(Word(w) for w in words)))
    return {sid: Transcript(sid, segs) for sid, segs in segments.items()}


def format_stm(transcripts: list[Transcript]) -> str:
    """STM text for ``transcripts``; named speakers are written by name (spaces as underscores)."""
    lines = []
    for t in transcripts:
        for s in t.segments:
            speaker = (s.speaker_name or s.speaker).replace(" ", "_")
            lines.append(f"{t.session_id} 1 {speaker} {fmt_time(s.start)} {fmt_time(s.end)} {s.text}".rstrip())
    return "\n".join(lines) + ("\n" if lines else "")


def write_stm(path: str | Path, transcripts: list[Transcript]) -> None:
    """Write ``transcripts`` as STM, atomically."""
    write_text(path, format_stm(transcripts))

"""STM (NIST Segment Time Mark): one segment per line with speaker and text, no word times.

Line: ``<file> <channel> <speaker> <begin> <end> [<label>] <transcript...>``; ``;;`` starts a
comment. Segments marked ``ignore_time_segment_in_scoring`` are skipped. Fields are separated by
whitespace, so the writer maps each run of whitespace in a file id or speaker to ``_``
(:func:`speechkit.io.names.session_token`: ``my meeting`` -> ``my_meeting``); a line whose begin
or end is not a number (as when an id holds a space) is an error, never a shifted reading.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from speechkit.errors import FormatError
from speechkit.io._lines import fmt_time, parse_time, read_lines
from speechkit.io.names import session_token
from speechkit.io.nist import write_lines
from speechkit.transcript import Segment, Transcript, Word


def read_stm(path: str | Path) -> dict[str, Transcript]:
    """Read an STM file into one transcript per file id (words without times)."""
    segments: dict[str, list[Segment]] = defaultdict(list)
    vocabulary = _Vocabulary()  # one Word per spelling: words without times are equal values
    for line, fields in read_lines(path, comment=";;"):
        if len(fields) < 5:
            raise FormatError(path, f"expected at least 5 fields (file channel speaker begin end), "
                                    f"got {len(fields)}", line=line)
        for index, name in ((3, "begin"), (4, "end")):
            if not _is_number(fields[index]):
                raise FormatError(path, f"expected a number of seconds, got {fields[index][:40]!r}: a line is "
                                        f"<file> <channel> <speaker> <begin> <end> <words...>, each of the first "
                                        f"five without spaces (does the file id or speaker hold a space?)",
                                  line=line, field=name)
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
                                           words=tuple(map(vocabulary.__getitem__, words))))
    return {sid: Transcript(sid, segs) for sid, segs in segments.items()}


class _Vocabulary(dict[str, Word]):
    """Spelling -> its one timeless ``Word``, made on first lookup."""

    def __missing__(self, text: str) -> Word:
        word = self[text] = Word(text)
        return word


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _stm_lines(session: str, t: Transcript) -> Iterator[str]:
    for s in t.segments:
        speaker = session_token(s.speaker_name or s.speaker)
        yield f"{session} 1 {speaker} {fmt_time(s.start)} {fmt_time(s.end)} {' '.join(s.text.split())}".rstrip()


def write_stm(path: str | Path, transcripts: list[Transcript]) -> None:
    """Write ``transcripts`` as STM, atomically; named speakers are written by name; whitespace in
    ids and names as ``_``."""
    write_lines(path, "STM", transcripts, _stm_lines)

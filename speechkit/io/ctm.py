"""CTM (NIST Conversation Time Mark): timed words, no speakers.

Line: ``<file> <channel> <begin> <duration> <word> [<confidence>]``; ``;;`` starts a comment. The
writer maps whitespace in a file id or word to ``_`` (:func:`speechkit.io.names.session_token`).
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

CTM_SPEAKER = "<unknown>"


def read_ctm(path: str | Path) -> dict[str, Transcript]:
    """Read a CTM file: each file id becomes one transcript with one segment per channel."""
    words: dict[tuple[str, str], list[Word]] = defaultdict(list)
    for line, fields in read_lines(path, comment=";;"):
        if len(fields) not in (5, 6):
            raise FormatError(path, f"expected 5 or 6 fields (file channel begin duration word [conf]), "
                                    f"got {len(fields)}", line=line)
        begin = parse_time(fields[2], path, line, "begin")
        duration = parse_time(fields[3], path, line, "duration")
        confidence = None
        if len(fields) == 6:
            try:
                confidence = float(fields[5])
            except ValueError:
                raise FormatError(path, f"expected a number, got {fields[5]!r}", line=line,
                                  field="confidence") from None
        words[(fields[0], fields[1])].append(Word(fields[4], begin, begin + duration, confidence))
    out: dict[str, list[Segment]] = defaultdict(list)
    for (sid, channel), ws in words.items():
        ws.sort(key=lambda w: w.start)
        out[sid].append(Segment.from_words(ws, speaker=f"{CTM_SPEAKER}{channel}"))
    return {sid: Transcript(sid, segs, has_speakers=False) for sid, segs in out.items()}


def _ctm_lines(session: str, t: Transcript) -> Iterator[str]:
    for w, _ in t.words():
        if w.start is None or w.end is None or not w.text.strip():
            continue
        line = f"{session} 1 {fmt_time(w.start)} {fmt_time(w.end - w.start)} {session_token(w.text)}"
        yield line if w.confidence is None else f"{line} {w.confidence:.3f}"


def write_ctm(path: str | Path, transcripts: list[Transcript]) -> None:
    """Write every timed word of ``transcripts`` as CTM, atomically."""
    write_lines(path, "CTM", transcripts, _ctm_lines)

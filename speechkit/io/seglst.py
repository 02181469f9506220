"""SegLST JSON (the CHiME-7/8 and meeteval segment list): a list of segment objects.

Each object has ``session_id``, ``speaker``, ``start_time``, ``end_time`` and ``words`` (a string).
speechkit adds optional keys that other SegLST readers ignore: ``speaker_name`` (the
identified person's name), ``word_times`` (one ``{"word", "start", "end", "confidence"}``
object per word of ``words``) and, in references, ``backchannel`` (true for a listener's short
response over someone else's turn; written only when true).
"""
from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

from speechkit.errors import FormatError
from speechkit.io._lines import read_text
from speechkit.io.atomic import write_text
from speechkit.io.jsonfile import parse_json
from speechkit.transcript import Segment, Transcript, Word

REQUIRED = ("session_id", "speaker", "start_time", "end_time", "words")


def _number(value: Any, path: Path | str, index: int, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise FormatError(path, f"expected a number, got {value!r}", field=f"[{index}].{field}")
    try:
        number = float(value)
    except ValueError:
        raise FormatError(path, f"expected a number, got {value!r}", field=f"[{index}].{field}") from None
    if not math.isfinite(number) or number < 0:
        raise FormatError(path, f"expected a finite time >= 0, got {value!r}", field=f"[{index}].{field}")
    return number


def _segment(obj: Any, path: Path | str, index: int) -> tuple[str, Segment]:
    if not isinstance(obj, dict):
        raise FormatError(path, f"expected an object, got {type(obj).__name__}", field=f"[{index}]")
    for key in REQUIRED:
        if key not in obj:
            raise FormatError(path, "missing", field=f"[{index}].{key}")
    for key in ("session_id", "speaker", "words"):
        if not isinstance(obj[key], str):
            raise FormatError(path, f"expected a string, got {obj[key]!r}", field=f"[{index}].{key}")
    start = _number(obj["start_time"], path, index, "start_time")
    end = _number(obj["end_time"], path, index, "end_time")
    if end < start:
        raise FormatError(path, f"end_time {end} is before start_time {start}", field=f"[{index}].end_time")
    tokens = obj["words"].split()
    words = tuple(Word(t) for t in tokens)
    timed = obj.get("word_times")
    if timed is not None:
        if not isinstance(timed, list) or len(timed) != len(tokens):
            raise FormatError(path, f"expected a list of {len(tokens)} objects, one per word",
                              field=f"[{index}].word_times")
        parsed = []
        for j, wt in enumerate(timed):
            if not isinstance(wt, dict) or not isinstance(wt.get("word"), str):
                raise FormatError(path, "expected an object with a string 'word'", field=f"[{index}].word_times[{j}]")
            conf = wt.get("confidence")
            if conf is not None:
                conf = _number(conf, path, index, f"word_times[{j}].confidence")
            parsed.append(Word(wt["word"], _number(wt.get("start"), path, index, f"word_times[{j}].start"),
                               _number(wt.get("end"), path, index, f"word_times[{j}].end"), conf))
        words = tuple(parsed)
    name = obj.get("speaker_name")
    if name is not None and not isinstance(name, str):
        raise FormatError(path, f"expected a string or null, got {name!r}", field=f"[{index}].speaker_name")
    backchannel = obj.get("backchannel", False)
    if not isinstance(backchannel, bool):
        raise FormatError(path, f"expected true or false, got {backchannel!r}", field=f"[{index}].backchannel")
    return obj["session_id"], Segment(start=start, end=end, speaker=obj["speaker"], text=" ".join(tokens),
                                      words=words, speaker_name=name, backchannel=backchannel)


def parse_seglst(text: str, path: str | Path = "<seglst>") -> dict[str, Transcript]:
    """Parse SegLST JSON text into one transcript per session id."""
    return seglst_transcripts(parse_json(text, path), path)


def seglst_transcripts(data: Any, path: str | Path = "<seglst>") -> dict[str, Transcript]:
    """One transcript per session id from parsed SegLST JSON (a list of segment objects)."""
    if not isinstance(data, list):
        raise FormatError(path, f"expected a JSON list of segments, got {type(data).__name__}")
    sessions: dict[str, list[Segment]] = defaultdict(list)
    for index, obj in enumerate(data):
        sid, seg = _segment(obj, path, index)
        sessions[sid].append(seg)
    return {sid: Transcript(sid, segs) for sid, segs in sessions.items()}


def read_seglst(path: str | Path) -> dict[str, Transcript]:
    """Read a SegLST JSON file into one transcript per session id."""
    return parse_seglst(read_text(path), path)


def to_seglst(transcripts: list[Transcript]) -> list[dict]:
    """SegLST objects for ``transcripts`` (word times included where known)."""
    out = []
    for t in transcripts:
        for s in t.segments:
            obj: dict[str, Any] = {"session_id": t.session_id, "speaker": s.speaker,
                                   "start_time": round(s.start, 3), "end_time": round(s.end, 3),
                                   "words": s.text}
            if s.speaker_name is not None:
                obj["speaker_name"] = s.speaker_name
            if s.backchannel:
                obj["backchannel"] = True
            if s.words and all(w.start is not None and w.end is not None for w in s.words):
                obj["word_times"] = [{"word": w.text, "start": round(w.start, 3), "end": round(w.end, 3),
                                      "confidence": None if w.confidence is None else round(w.confidence, 4)}
                                     for w in s.words]
            out.append(obj)
    return out


def write_seglst(path: str | Path, transcripts: list[Transcript]) -> None:
    """Write ``transcripts`` as SegLST JSON, atomically."""
    write_text(path, json.dumps(to_seglst(transcripts), indent=1, ensure_ascii=False) + "\n")


def segments_to_rows(segments: list[Segment]) -> list[dict]:
    """Segments of one session as SegLST rows (what the stage cache stores)."""
    return to_seglst([Transcript("_", segments)])


def segments_from_rows(rows: list[dict]) -> list[Segment]:
    """The segments that :func:`segments_to_rows` wrote."""
    parsed = parse_seglst(json.dumps(rows))
    return parsed["_"].segments if parsed else []

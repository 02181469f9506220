"""Voice enrollments for a real series: each person's solo speech cut from one meeting.

A person's solo speech is the time they speak while no one else does, by the reference speaker
turns. The clips of a person (at most ``max_seconds`` in all, longest pieces first, put back in
time order) are joined into one FLAC file; a person with less than ``min_seconds`` of solo speech
in that meeting is not enrolled. The meeting the clips come from is marked enrollment-only in the
manifest: it is neither run nor scored, so no scored audio is ever used as an enrollment.
"""
from __future__ import annotations

import io
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from speechkit.errors import SpeechkitError
from speechkit.io.atomic import write_bytes
from speechkit.transcript import Transcript


@dataclass(frozen=True)
class EnrollmentOptions:
    """Where enrollments come from: ``meeting`` (an id, or ``first`` for the first of the series),
    with at least ``min_seconds`` and at most ``max_seconds`` of solo speech per person; pieces
    shorter than ``min_piece`` seconds are dropped (too short to carry a voice)."""

    meeting: str
    min_seconds: float = 3.0
    max_seconds: float = 30.0
    min_piece: float = 0.5

    def __post_init__(self) -> None:
        if not 0 < self.min_seconds <= self.max_seconds or self.min_piece < 0:
            raise SpeechkitError("enrollment: need 0 < --enroll-min-seconds <= --enroll-max-seconds "
                                 "and --enroll-min-piece >= 0")


def solo_spans(turns: Transcript) -> dict[str, list[tuple[float, float]]]:
    """Per speaker, the stretches where they speak and nobody else does, in time order."""
    events = sorted([(s.start, 1, s.speaker) for s in turns.segments if s.end > s.start]
                    + [(s.end, -1, s.speaker) for s in turns.segments if s.end > s.start], key=lambda e: e[0])
    active: Counter = Counter()
    out: dict[str, list[tuple[float, float]]] = {}
    previous = None
    for time, delta, speaker in events:
        if previous is not None and time > previous:
            speaking = [k for k, n in active.items() if n > 0]
            if len(speaking) == 1:
                spans = out.setdefault(speaking[0], [])
                if spans and spans[-1][1] == previous:
                    spans[-1] = (spans[-1][0], time)
                else:
                    spans.append((previous, time))
        active[speaker] += delta
        previous = time
    return out


def pick_spans(spans: list[tuple[float, float]], options: EnrollmentOptions) -> list[tuple[float, float]]:
    """The longest pieces up to ``max_seconds`` in all (the last one shortened), in time order."""
    chosen, total = [], 0.0
    for start, end in sorted(spans, key=lambda s: (-(s[1] - s[0]), s[0])):
        if end - start < options.min_piece or total >= options.max_seconds:
            continue
        end = min(end, start + options.max_seconds - total)
        chosen.append((start, end))
        total += end - start
    return sorted(chosen)


def cut_enrollments(audio: Path, turns: Transcript, options: EnrollmentOptions, folder: Path,
                    root: Path) -> tuple[dict[str, Path], dict[str, Any]]:
    """Cut each person's solo speech from ``audio`` (16 kHz mono) into ``folder/<person>.flac``.

    Returns the clip of each enrolled person and the record of what was cut (for the manifest's
    metadata, paths relative to ``root``).
    """
    import soundfile as sf

    signal, rate = sf.read(audio, dtype="float32")
    clips: dict[str, Path] = {}
    persons: dict[str, Any] = {}
    skipped: dict[str, str] = {}
    solo = solo_spans(turns)
    for pid in turns.speakers:
        spans = pick_spans(solo.get(pid, []), options)
        seconds = sum(e - s for s, e in spans)
        if seconds < options.min_seconds:
            available = sum(e - s for s, e in solo.get(pid, []))
            skipped[pid] = (f"{available:.1f} s of solo speech ({seconds:.1f} s in pieces of at least "
                            f"{options.min_piece:g} s), less than {options.min_seconds:g} s")
            continue
        pieces = [signal[round(s * rate):round(e * rate)] for s, e in spans]
        buf = io.BytesIO()
        sf.write(buf, np.concatenate(pieces), rate, format="FLAC", subtype="PCM_16")
        path = folder / f"{pid}.flac"
        write_bytes(path, buf.getvalue())
        clips[pid] = path
        persons[pid] = {"clip": path.relative_to(root).as_posix(), "seconds": round(seconds, 3),
                        "spans": [[round(s, 3), round(e, 3)] for s, e in spans]}
    record = {"min_seconds": options.min_seconds, "max_seconds": options.max_seconds,
              "min_piece_seconds": options.min_piece, "rule": "solo speech by the reference speaker turns "
              "(no other speaker active), longest pieces first", "persons": persons, "not_enrolled": skipped}
    return clips, record

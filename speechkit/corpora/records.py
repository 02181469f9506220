"""What an importer hands the workspace builder: people and meetings read from a corpus."""
from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from speechkit.transcript import Transcript

#: Sample rate of the audio an importer yields and of the FLAC files it becomes.
SAMPLE_RATE = 16000

AudioBlocks = Callable[[], Iterator[np.ndarray]]


@dataclass(frozen=True)
class SourcePerson:
    """A speaker of the corpus. ``enrollments`` are clips outside the workspace, copied in."""

    id: str
    name: str
    nicknames: tuple[str, ...] = ()
    role: str | None = None
    enrollments: tuple[Path, ...] = ()


@dataclass(frozen=True)
class SourceMeeting:
    """One recording of the corpus with its references.

    ``audio`` yields the recording as float32 mono blocks at :data:`SAMPLE_RATE`; ``turns`` are
    the reference speaker turns (speaker = person id); ``reference`` the words with speakers
    (segment level, or word level when the words carry times), None when the corpus has no text.
    ``origin`` says where the meeting came from, for messages and the manifest metadata;
    ``notes`` and ``questions`` are the corpus's gold notes and gold questions files of the meeting
    (docs/workspace-format.md), if any.
    """

    id: str
    audio: AudioBlocks
    turns: Transcript
    reference: Transcript | None
    origin: str
    date: dt.date | dt.datetime | None = None
    title: str | None = None
    kind: str | None = None
    notes: Path | None = None
    questions: Path | None = None

    @property
    def reference_kind(self) -> str:
        """What the reference holds, for ``metadata.import.references``."""
        if self.reference is None:
            return "speaker turns only (no text)"
        words = [w for s in self.reference.segments for w in s.words]
        return "words with times" if words and all(w.start is not None for w in words) else "segment-level words"

"""What a run produced for one meeting, at its level: what the post-run steps read back.

:func:`read_output` reads it from a run folder (:class:`~speechkit.io.run_folder.RunFolder`):
the named transcript, the notes (when the recipe summarized) and the notes context the level
gave the meeting (nothing at L1, the system's own earlier notes at L2, also the roster, emails
and agenda at L3), its roster as the workspace's people it lists.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from speechkit.errors import FormatError
from speechkit.io import read_transcripts
from speechkit.io.jsonfile import read_json
from speechkit.io.notes import run_notes
from speechkit.io.run_folder import RunFolder
from speechkit.meeting_context import NotesContext, roster_line
from speechkit.notes import Notes
from speechkit.transcript import Transcript
from speechkit.workspace import Person, Workspace


@dataclass(frozen=True)
class MeetingOutput:
    """A run's output for one meeting: ``transcript`` (speaker-attributed, named where the level
    named speakers), ``notes`` (None when the recipe did not summarize), the notes ``context``
    of its level (and ``context_file``, the file as the run wrote it: {} when there is none), and
    the ``level`` (None when the run recorded none)."""

    meeting: str
    transcript: Transcript
    notes: Notes | None
    context: NotesContext
    level: int | None
    context_file: dict[str, Any]


def _context(path: Path, people: tuple[Person, ...]) -> tuple[NotesContext, int | None, dict[str, Any]]:
    if not path.is_file():
        return NotesContext(), None, {}
    data = read_json(path)
    raw = data.get("notes_context") if isinstance(data, dict) else None
    if not isinstance(raw, dict):
        raise FormatError(path, "expected the notes context a run writes", field="notes_context")
    lines = set(raw.get("roster") or [])
    roster = tuple(Person(p.id, p.name, p.nicknames, p.role) for p in people if roster_line(p) in lines)
    texts = {k: raw.get(k) if isinstance(raw.get(k), str) else "" for k in ("earlier_notes", "emails", "agenda")}
    level = data.get("level")
    return NotesContext(roster=roster, **texts), level if isinstance(level, int) else None, data


def read_transcript(run: RunFolder, meeting: str) -> Transcript:
    """The run's own transcript of ``meeting`` (a file of one session is that meeting's)."""
    path = run.transcript(meeting)
    if not path.is_file():
        raise FormatError(path, f"no transcript of meeting {meeting!r} in the run folder {run.root}")
    transcripts = read_transcripts(path, "seglst")
    if meeting in transcripts:
        return transcripts[meeting]
    if len(transcripts) <= 1:
        return next(iter(transcripts.values()), Transcript(meeting, []))
    raise FormatError(path, f"no session {meeting!r} in the file")


def read_output(run: RunFolder, ws: Workspace, meeting: str) -> MeetingOutput:
    """The run's output for ``meeting``."""
    context, level, raw = _context(run.context(meeting), ws.people)
    return MeetingOutput(meeting, read_transcript(run, meeting), run_notes(run.notes(meeting), meeting), context,
                         level, raw)

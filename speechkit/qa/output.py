"""What a run produced for one meeting, at its level: what the ``qa`` step answers from.

:func:`read_output` reads it back from a run folder: the named transcript
(``transcripts/<id>.json``), the notes (``notes/<id>.json``, when the recipe summarized) and the
notes context the level gave the meeting (``context/<id>.json``: nothing at L1, the system's
own earlier notes at L2, also the roster, emails and agenda at L3), its roster as the workspace's
people it lists.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from speechkit.errors import FormatError
from speechkit.io import read_transcripts
from speechkit.io.jsonfile import read_json
from speechkit.io.names import child_path
from speechkit.io.notes import run_notes
from speechkit.meeting_context import NotesContext, roster_line
from speechkit.notes import Notes
from speechkit.transcript import Transcript
from speechkit.workspace import Person, Workspace


@dataclass(frozen=True)
class MeetingOutput:
    """A run's output for one meeting: ``transcript`` (speaker-attributed, named where the level
    named speakers), ``notes`` (None when the recipe did not summarize), the notes ``context``
    of its level, and the ``level`` (None when the run recorded none)."""

    meeting: str
    transcript: Transcript
    notes: Notes | None
    context: NotesContext
    level: int | None


def _context(path: Path, people: tuple[Person, ...]) -> tuple[NotesContext, int | None]:
    if not path.is_file():
        return NotesContext(), None
    data = read_json(path)
    raw = data.get("notes_context") if isinstance(data, dict) else None
    if not isinstance(raw, dict):
        raise FormatError(path, "expected the notes context a run writes", field="notes_context")
    lines = set(raw.get("roster") or [])
    roster = tuple(Person(p.id, p.name, p.nicknames, p.role) for p in people if roster_line(p) in lines)
    texts = {k: raw.get(k) if isinstance(raw.get(k), str) else "" for k in ("earlier_notes", "emails", "agenda")}
    level = data.get("level")
    return NotesContext(roster=roster, **texts), level if isinstance(level, int) else None


def read_output(ws: Workspace, run_dir: str | Path, meeting: str) -> MeetingOutput:
    """The run's output for ``meeting`` (``run_dir``: the run folder)."""
    run = Path(run_dir)
    path = child_path(run / "transcripts", meeting, ".json")
    if not path.is_file():
        raise FormatError(path, f"no transcript of meeting {meeting!r} in the run folder {run}")
    transcripts = read_transcripts(path, "seglst")
    transcript = transcripts.get(meeting) or next(iter(transcripts.values()), Transcript(meeting, []))
    notes = run_notes(run / "notes", meeting)
    context, level = _context(child_path(run / "context", meeting, ".json"), ws.people)
    return MeetingOutput(meeting, transcript, notes, context, level)

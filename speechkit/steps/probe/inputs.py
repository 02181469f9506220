"""What a probe reads of a finished run: per meeting, the system's own output and the reference.

The system under test answers from :attr:`MeetingMaterial.system`: its transcript, its notes and
the notes context its level gave it (empty at L1), as text (:func:`~speechkit.io.run_output.read_output`).
The generator, the self-verifier and the judge read :attr:`MeetingMaterial.reference`: the
workspace's verbatim reference transcript. Both transcripts are ``[MM:SS] Name: text`` lines,
cut to ``transcript_bytes`` (UTF-8) each.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from speechkit.errors import FormatError
from speechkit.io import read_transcripts
from speechkit.io.run_folder import RunFolder
from speechkit.io.run_output import read_output
from speechkit.notes import Notes
from speechkit.stages.summarize.llm import chunk_lines, transcript_lines
from speechkit.transcript import Transcript
from speechkit.workspace import Workspace

#: The notes context's parts as the system saw them (``context/<meeting>.json``), with their titles.
CONTEXT_PARTS = (("earlier_notes", "Earlier meetings (your notes then)"), ("roster", "People"),
                 ("emails", "Emails"), ("agenda", "This meeting"))


@dataclass(frozen=True)
class MeetingMaterial:
    """One meeting of a run: ``system``, what the system under test answers from, and ``reference``."""

    meeting: str
    system: str
    reference: str


def _lines(transcript: Transcript, budget: int) -> str:
    chunks = chunk_lines(transcript_lines(transcript), budget)
    return "\n".join(chunks[0]) if chunks else "(nothing was transcribed)"


def notes_text(notes: Notes) -> str:
    """The notes as the system under test reads them: summary, action items, decisions."""
    lines = [notes.summary] if notes.summary else []
    lines += [f"Action: {a.description}" + (f" (assignee: {a.assignee})" if a.assignee else "")
              + (f" (due: {a.due})" if a.due else "") for a in notes.action_items]
    lines += [f"Decision: {d.topic}: {d.choice}" for d in notes.decisions]
    return "\n".join(lines) or "(none)"


def context_text(context: Any) -> str:
    """The notes context of ``context/<meeting>.json`` as text ("(none)" when empty, as at L1)."""
    given = context.get("notes_context") if isinstance(context, dict) else None
    given = given if isinstance(given, dict) else {}
    parts = []
    for key, title in CONTEXT_PARTS:
        value = given.get(key)
        body = "\n".join(map(str, value)) if isinstance(value, list) else str(value or "")
        if body.strip():
            parts.append(f"{title}:\n{body.strip()}")
    return "\n\n".join(parts) or "(none)"


def _reference(path: Any, meeting: str) -> Transcript:
    """The reference transcript of ``meeting`` in ``path`` (a file of one session is that meeting's)."""
    transcripts = read_transcripts(path)
    if meeting in transcripts:
        return transcripts[meeting]
    if len(transcripts) == 1:
        return next(iter(transcripts.values()))
    raise FormatError(path, f"no session {meeting!r} in the file")


def meeting_material(run: RunFolder, ws: Workspace, meeting: str, transcript_bytes: int) -> MeetingMaterial:
    """What the roles read of ``meeting`` (see the module docstring)."""
    m = ws.meeting(meeting)
    if m.reference is None:
        raise FormatError(ws.manifest_path, f"meeting {meeting!r} has no reference transcript to judge by")
    own = read_output(run, ws, meeting)
    system = (f"CONTEXT:\n{context_text(own.context_file)}\n\nYOUR NOTES OF THE MEETING:\n"
              f"{notes_text(own.notes or Notes())}\n\nTRANSCRIPT (yours):\n{_lines(own.transcript, transcript_bytes)}")
    return MeetingMaterial(meeting, system, _lines(_reference(m.reference, meeting), transcript_bytes))

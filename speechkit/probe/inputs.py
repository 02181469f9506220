"""What a probe reads of a finished run: per meeting, the system's own output and the reference.

A run folder (``speechkit run``/``recipe``; layout in :mod:`speechkit.runner`) holds ``run.json``
(the recipe, with its level, and the workspace's folder), ``transcripts/<meeting>.json``,
``notes/<meeting>.json`` and ``context/<meeting>.json``. The system under test answers from
:attr:`MeetingMaterial.system`: its transcript, its notes and the notes context its level gave
it (empty at L1), as text. The generator, the self-verifier and the judge read
:attr:`MeetingMaterial.reference`: the workspace's verbatim reference transcript. Both
transcripts are ``[MM:SS] Name: text`` lines, cut to ``transcript_bytes`` (UTF-8) each.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from speechkit.errors import FormatError
from speechkit.io import read_transcripts
from speechkit.io.jsonfile import read_json
from speechkit.io.names import child_path
from speechkit.io.notes import run_notes
from speechkit.io.run_folder import workspace_of_run
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


@dataclass(frozen=True)
class RunInfo:
    """A finished run: its folder, level and workspace."""

    folder: Path
    level: int
    workspace: Workspace

    @property
    def meetings(self) -> list[str]:
        """The run's meetings with a transcript, in the workspace's calendar order."""
        return [m.id for m in self.workspace.scored_meetings if child_path(self.folder / "transcripts", m.id, ".json").is_file()]


def open_run(folder: str | Path, workspace: str | Path | None = None) -> RunInfo:
    """The finished run in ``folder`` (it holds run.json); its workspace from run.json unless
    ``workspace`` is given."""
    run = Path(folder)
    info = read_json(run / "run.json")
    recipe = info.get("recipe") if isinstance(info, dict) else None
    level = recipe.get("level") if isinstance(recipe, dict) else None
    if type(level) is not int or not 1 <= level <= 3:
        raise FormatError(run / "run.json", f"level {level!r} is not 1, 2 or 3", field="recipe.level")
    return RunInfo(run, level, workspace_of_run(run, workspace))


def _one(path: Path, meeting: str) -> Transcript:
    """The transcript of ``meeting`` in ``path`` (a file of one session is that meeting's)."""
    transcripts = read_transcripts(path)
    if meeting in transcripts:
        return transcripts[meeting]
    if len(transcripts) == 1:
        return next(iter(transcripts.values()))
    raise FormatError(path, f"no session {meeting!r} in the file")


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


def read_transcript(run: RunInfo, meeting: str) -> Transcript:
    """The run's own transcript of ``meeting`` (``transcripts/<meeting>.json``)."""
    return _one(child_path(run.folder / "transcripts", meeting, ".json"), meeting)


def meeting_material(run: RunInfo, meeting: str, transcript_bytes: int) -> MeetingMaterial:
    """What the roles read of ``meeting`` (see the module docstring)."""
    m = run.workspace.meeting(meeting)
    if m.reference is None:
        raise FormatError(run.workspace.manifest_path, f"meeting {meeting!r} has no reference transcript to judge by")
    own = read_transcript(run, meeting)
    context_path = child_path(run.folder / "context", meeting, ".json")
    notes = run_notes(run.folder / "notes", meeting) or Notes()
    context = read_json(context_path) if context_path.is_file() else {}
    system = (f"CONTEXT:\n{context_text(context)}\n\nYOUR NOTES OF THE MEETING:\n{notes_text(notes)}\n\n"
              f"TRANSCRIPT (yours):\n{_lines(own, transcript_bytes)}")
    return MeetingMaterial(meeting, system, _lines(_one(m.reference, meeting), transcript_bytes))

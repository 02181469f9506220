"""What a probe reads of a finished run: per meeting, the system's own output and the reference.

The whole meeting is read, a part at a time: the workspace's verbatim reference transcript, as
``[MM:SS] Name: text`` lines, is cut between lines into parts of at most ``transcript_bytes``
(UTF-8) each (:func:`~speechkit.stages.summarize.llm.chunk_lines`), and the probes of a meeting
take its parts in turn (:meth:`MeetingMaterial.part`). The generator, the self-verifier and the
judge read the part's reference lines (:attr:`Excerpt.reference`). The system under test
answers from :meth:`MeetingMaterial.system`: the notes context its level gave it (empty at L1)
and its notes, whole, and the lines of its own transcript from the same stretch of time (from
:data:`MARGIN_S` before the part's first line to as long after the next part's first line; cut
to ``transcript_bytes`` too), as a retrieval step would give it
(:func:`~speechkit.io.run_output.read_output`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from speechkit.errors import FormatError
from speechkit.io import read_transcripts
from speechkit.io.run_folder import RunFolder
from speechkit.io.run_output import read_output
from speechkit.notes import Notes
from speechkit.stages.summarize.llm import chunk_lines, transcript_lines
from speechkit.transcript import Segment, Transcript
from speechkit.workspace import Workspace

#: Seconds of its own transcript the system gets on either side of a part's stretch of time.
MARGIN_S = 5.0
NOTHING = "(nothing was transcribed)"

#: The notes context's parts as the system saw them (``context/<meeting>.json``), with their titles.
CONTEXT_PARTS = (("earlier_notes", "Earlier meetings (your notes then)"), ("roster", "People"),
                 ("emails", "Emails"), ("agenda", "This meeting"))


@dataclass(frozen=True)
class Excerpt:
    """One part of a meeting: its ``reference`` lines and the ``own`` transcript lines of the same time."""

    reference: str
    own: str


@dataclass(frozen=True)
class MeetingMaterial:
    """One meeting of a run: ``notes``, the context and notes the system under test reads with
    every part, and the meeting's ``excerpts`` in order (at least one)."""

    meeting: str
    notes: str
    excerpts: tuple[Excerpt, ...]

    def part(self, number: int) -> Excerpt:
        """The part the ``number``-th probe of the meeting (from 0) reads: the parts in turn."""
        return self.excerpts[number % len(self.excerpts)]

    def system(self, excerpt: Excerpt) -> str:
        """What the system under test answers from when a probe reads ``excerpt``."""
        return f"{self.notes}\n\nTRANSCRIPT (yours):\n{excerpt.own}"


def _starts(transcript: Transcript, chunks: list[list[str]]) -> list[float]:
    """The start time of the segment each of ``chunks`` (of ``transcript``'s lines) begins in,
    following :func:`chunk_lines`' cuts (a line longer than the budget spans several chunks)."""
    segments = [seg for seg in transcript.segments if seg.text.strip()]
    lines = transcript_lines(transcript)
    index, rest, starts = 0, lines[0] if lines else "", []
    for chunk in chunks:
        starts.append(segments[index].start)
        for piece in chunk:
            rest = rest[len(piece):].lstrip()
            if not rest:
                index += 1
                rest = lines[index] if index < len(lines) else ""
    return starts


def _text(segments: list[Segment], meeting: str, budget: int) -> str:
    chunks = chunk_lines(transcript_lines(Transcript(meeting, segments)), budget)
    return "\n".join(chunks[0]) if chunks else NOTHING


def excerpts(reference: Transcript, own: Transcript, budget: int) -> tuple[Excerpt, ...]:
    """The parts of ``reference`` of at most ``budget`` bytes, each with ``own``'s lines of its time."""
    chunks = chunk_lines(transcript_lines(reference), budget)
    if not chunks:
        return (Excerpt(NOTHING, _text(own.segments, own.session_id, budget)),)
    starts = _starts(reference, chunks)
    bounds = [-math.inf, *starts[1:], math.inf]
    out = []
    for k, chunk in enumerate(chunks):
        low, high = bounds[k] - MARGIN_S, bounds[k + 1] + MARGIN_S
        window = [seg for seg in own.segments if seg.start < high and seg.end > low]
        out.append(Excerpt("\n".join(chunk), _text(window, own.session_id, budget)))
    return tuple(out)


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
    notes = (f"CONTEXT:\n{context_text(own.context_file)}\n\nYOUR NOTES OF THE MEETING:\n"
             f"{notes_text(own.notes or Notes())}")
    return MeetingMaterial(meeting, notes, excerpts(_reference(m.reference, meeting), own.transcript,
                                                    transcript_bytes))

"""The files between speechkit and a meeting system of a user's own (docs/systems.md): a meeting's
inputs folder, what the context level gives the system, and what the system writes back.

A meeting's inputs folder (:func:`write_meeting_inputs`) is the same from ``speechkit export
inputs`` and from the ``command`` backend: it is made from the meeting's
:class:`~speechkit.meeting_context.MeetingContext`, which :func:`speechkit.context.run_context`
gives the cascade's stages::

    inputs.json   speechkit-inputs/1: the meeting, its level, its audio, the CONTEXT block and its
                  parts (earlier notes, roster, emails, agenda), the roster names, the voice
                  enrollments, the vocabulary, the speaker count, the questions asked, the earlier
                  meetings, and the files the system writes
    context.txt   the CONTEXT block of the paper's notes prompt (empty at L1)
    earlier/      L2+: the system's own outputs for the earlier meetings, laid out as it wrote them

What a system writes for a meeting (:func:`read_system_outputs`) lies in a folder of hypotheses
(:meth:`~speechkit.io.run_folder.RunFolder.of_hypotheses`, which ``speechkit score --run`` reads):
``<meeting>.json`` (its SegLST transcript, required), ``<meeting>.rttm`` (its speaker turns), its
notes (``speechkit-notes/1``) and its answers (``speechkit-answers/1``: :func:`read_answers_file`)
where a run folder has them. Every file is read bounded (at most :data:`MAX_OUTPUT_BYTES`, a
regular file inside the outputs folder: no link out of it) and checked; a problem is a
:class:`~speechkit.errors.FormatError` naming the file.
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from speechkit.core.record import NOTES, TRANSCRIPT, TURNS
from speechkit.errors import FormatError, OutputError
from speechkit.io._lines import present_input
from speechkit.io.atomic import write_json, write_text
from speechkit.io.jsonfile import read_json
from speechkit.io.notes import run_notes, write_notes
from speechkit.io.references import pick
from speechkit.io.run_folder import TURNS_RTTM, RunFolder
from speechkit.io.seglst import write_seglst
from speechkit.meeting_context import MeetingContext
from speechkit.notes import Notes
from speechkit.transcript import Transcript

INPUTS_FORMAT = "speechkit-inputs/1"
ANSWERS_FORMAT = "speechkit-answers/1"
INPUTS = "inputs.json"
CONTEXT_BLOCK = "context.txt"
EARLIER = "earlier"
#: The most characters of one answer (a longer one is a garbage output).
MAX_ANSWER_CHARS = 10_000
#: The most bytes of one file a system writes, checked before it is read (the SegLST transcript
#: of two hours of speech, 18,000 words with word times, holds about 2 MB).
MAX_OUTPUT_BYTES = 64 << 20


def system_folder(root: str | Path) -> RunFolder:
    """A folder laid out as a system writes its outputs: its transcripts at its top."""
    return RunFolder(root, root)


def writes(meeting: str) -> dict[str, str]:
    """The files a system writes for ``meeting``, relative to its outputs folder."""
    rel = system_folder(".")
    return {"transcript": rel.transcript(meeting).as_posix(),
            "turns": rel.transcript(meeting, TURNS_RTTM.suffix).as_posix(),
            "notes": rel.notes(meeting).as_posix(), "answers": rel.answers(meeting).as_posix()}


def inputs_document(meeting: str, audio: str | Path, context: MeetingContext) -> dict[str, Any]:
    """``inputs.json`` of ``meeting`` (the module docstring's layout)."""
    return {
        "format": INPUTS_FORMAT, "meeting": meeting, "level": context.level,
        "audio": str(Path(audio).absolute()),
        "context": context.notes.text(),
        "notes_context": context.notes.as_dict(),
        "names": context.names,
        "enrollments": {name: [str(Path(p).absolute()) for p in clips] for name, clips in context.enrollments.items()},
        "expected_speakers": context.expected_speakers,
        "terms": context.terms,
        "asr_prompt": context.biasing.prompt,
        "hotwords": context.biasing.hotwords,
        "questions": [{"id": q.id, "type": q.type, "question": q.text} for q in context.questions],
        "earlier": [e.meeting for e in context.earlier],
        "writes": writes(meeting),
    }


def write_meeting_inputs(folder: str | Path, meeting: str, audio: str | Path, context: MeetingContext) -> None:
    """Write the inputs folder of ``meeting`` (the module docstring's layout) into ``folder``; the
    earlier outputs an earlier export left there go first (another level's, or another system's)."""
    folder = Path(folder)
    stale = folder / EARLIER
    if stale.is_symlink() or (stale.exists() and not stale.is_dir()):
        raise OutputError(stale, "expected the folder of earlier outputs an export writes, or nothing")
    if stale.exists():
        shutil.rmtree(stale)
    write_json(folder / INPUTS, inputs_document(meeting, audio, context))
    write_text(folder / CONTEXT_BLOCK, context.notes.text())
    earlier = system_folder(folder / EARLIER)
    for e in context.earlier:
        write_seglst(earlier.transcript(e.meeting), [e.transcript])
        if e.notes is not None:
            write_notes(earlier.notes(e.meeting), e.notes, e.meeting)


@dataclass(frozen=True)
class SystemOutputs:
    """What a system wrote for one meeting: its ``transcript``, its speaker ``turns`` (None: it
    wrote none), its ``notes`` and its ``answers`` (question id -> answer; None: none written)."""

    transcript: Transcript
    turns: Transcript | None = None
    notes: Notes | None = None
    answers: dict[str, str] | None = None

    def as_outputs(self) -> dict[str, Any]:
        """These as a meeting's outputs (:mod:`speechkit.core.record`): the transcript, and the
        speaker turns and notes where the system wrote them."""
        return {TRANSCRIPT: self.transcript, **({TURNS: self.turns} if self.turns is not None else {}),
                **({NOTES: self.notes} if self.notes is not None else {})}


def read_system_outputs(root: str | Path, meeting: str) -> SystemOutputs:
    """What a system wrote for ``meeting`` into the outputs folder ``root``, read as scoring reads
    it; a missing transcript or a file that is not what it should be is a :class:`FormatError`."""
    folder = system_folder(root)
    path, turns = folder.transcript(meeting), folder.transcript(meeting, TURNS_RTTM.suffix)
    answers = folder.answers(meeting)
    present = {p: _written(p, root) for p in (path, turns, answers, folder.notes(meeting))}
    if not present[path]:
        raise FormatError(path, f"not written: the system writes its SegLST transcript of meeting {meeting!r} here")
    return SystemOutputs(pick(path, meeting), pick(turns, meeting) if present[turns] else None,
                         run_notes(folder.notes(meeting), meeting),
                         read_answers_file(answers, meeting) if present[answers] else None)


def _written(path: Path, root: str | Path) -> bool:
    """Whether the system wrote ``path``: False when nothing is there; an error when what is there
    is no regular file, leaves the outputs folder ``root`` (a link) or is over :data:`MAX_OUTPUT_BYTES`."""
    if not present_input(path, root, "the system's outputs folder"):
        return False
    size = path.stat().st_size
    if size > MAX_OUTPUT_BYTES:
        raise FormatError(path, f"holds {size:,} bytes; a system's output file holds at most "
                                f"{MAX_OUTPUT_BYTES >> 20} MiB")
    return True


def read_answers_file(path: str | Path, meeting: str) -> dict[str, str]:
    """A system's answers to the questions of ``meeting`` (``speechkit-answers/1``:
    ``{"format": ..., "meeting": ID, "answers": {QUESTION_ID: TEXT}}``; ``format`` and ``meeting``
    may be left out): question id -> answer."""
    data = read_json(path)
    if not isinstance(data, dict) or set(data) - {"format", "meeting", "answers"}:
        raise FormatError(path, f"expected an object with answers (and format, meeting): {ANSWERS_FORMAT}")
    if data.get("format", ANSWERS_FORMAT) != ANSWERS_FORMAT:
        raise FormatError(path, f"expected {ANSWERS_FORMAT}", field="format")
    if data.get("meeting", meeting) != meeting:
        raise FormatError(path, f"belongs to meeting {str(data['meeting'])[:80]!r}, not {meeting!r}", field="meeting")
    answers = data.get("answers")
    if not isinstance(answers, dict):
        raise FormatError(path, "expected an object of question ids and answer texts", field="answers")
    for qid, text in answers.items():
        if not isinstance(text, str) or len(text) > MAX_ANSWER_CHARS:
            raise FormatError(path, f"expected a text of at most {MAX_ANSWER_CHARS} characters",
                              field=f"answers.{qid[:80]}")
    return answers


def write_answers_file(path: str | Path, meeting: str, answers: dict[str, str]) -> None:
    """Write a system's answers to the questions of ``meeting`` (``speechkit-answers/1``), atomically."""
    write_json(path, {"format": ANSWERS_FORMAT, "meeting": meeting, "answers": answers})


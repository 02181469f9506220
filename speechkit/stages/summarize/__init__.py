"""The ``summarize`` stage: a meeting's notes (summary, action items, decisions, outline).

It reads the meeting's final transcript, named by identification and corrected when the
correction stage ran, and the notes context the level gives (:class:`~speechkit.meeting_context.NotesContext`:
nothing at L1; the system's own notes of earlier meetings at L2; also the roster, an email digest
and the agenda at L3), and returns :class:`MeetingNotes`. Its key covers the transcript's keys,
its options and that context, so two meetings or two levels never share a result.

Backends (``BACKENDS``): ``extractive`` (rules, no language model, the offline default:
:mod:`~speechkit.stages.summarize.extractive`) and ``llm`` (one schema-constrained request per
transcript chunk through :mod:`speechkit.llm`: :mod:`~speechkit.stages.summarize.llm`). A
backend's ``stored`` says whether the stage keeps its results in the stage cache: the LLM
backend's answers are cached by the LLM client instead, so a failed request is never stored.
The stage writes each meeting's notes into the run folder (:meth:`SummarizeStage.write`) and
gives them to the context of the later meetings (the meeting output ``notes``).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from speechkit.core.record import NOTES, MeetingRecord
from speechkit.core.section import Section
from speechkit.core.stage import BackendStage, Spec, Stage, registered_class
from speechkit.io.notes import write_notes
from speechkit.io.run_folder import RunFolder
from speechkit.notes import Notes
from speechkit.stages.summarize.metrics import NotesFamily
from speechkit.stages.summarize.report import meeting_notes

BACKENDS = {
    "extractive": "speechkit.stages.summarize.extractive:ExtractiveSummarizer",
    "llm": "speechkit.stages.summarize.llm:LLMSummarizer",
}
DEFAULT_BACKEND = "extractive"
METRICS = (NotesFamily(),)
SECTIONS = (Section(110, meeting_notes),)


@dataclass
class MeetingNotes:
    """The summarize stage's result: the meeting's ``notes`` and what the backend did (``stats``)."""

    notes: Notes
    stats: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"notes": self.notes.to_dict(), "stats": self.stats}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MeetingNotes:
        return cls(Notes.from_dict(data["notes"]), data["stats"])

    def summary(self) -> dict[str, Any]:
        """What run.json records per meeting (``stages.summarize.<meeting>``)."""
        return {**self.stats, "action_items": len(self.notes.action_items),
                "decisions": len(self.notes.decisions)}


def build(spec: Spec, device: str = "auto", reads: Mapping[str, Stage] | None = None) -> SummarizeStage:
    """The summarize stage for a recipe's ``stages.summarize``."""
    return SummarizeStage(spec, device, reads)


class SummarizeStage(BackendStage[MeetingNotes]):
    """A meeting's notes from its final transcript and the level's notes context."""

    name = "summarize"
    backends = BACKENDS
    result_type = MeetingNotes
    context_fields = ("notes",)
    #: 2: the extractive backend takes "can you get us an update" for a status ask, not an action item;
    #: 3: its summary scores sentences with an order-independent sum (the same in every process);
    #: 4: it reads open calls, relays, named assignments, due-day corrections and reversed decisions.
    version = 4

    def __init__(self, spec: Spec, device: str = "auto", reads: Mapping[str, Stage] | None = None) -> None:
        # the final transcript: the named one, corrected when the recipe corrects
        self.reads = ("attribute", "identify", "correct") if reads and "correct" in reads else ("attribute", "identify")
        self.stored = bool(registered_class(BACKENDS, spec.backend, "stages.summarize.backend").stored)
        super().__init__(spec, device, reads)

    def extra_inputs(self, record: MeetingRecord) -> dict[str, Any]:
        """The level's notes context."""
        return record.context.notes.as_dict()

    def run(self, record: MeetingRecord) -> MeetingNotes:
        notes, stats = self.backend.summarize(record.transcript(), record.context.notes)
        return MeetingNotes(notes, stats)

    def outputs(self, record: MeetingRecord, so_far: Mapping[str, Any]) -> dict[str, Any]:
        """The meeting's notes, which the notes context of later meetings holds."""
        return {NOTES: record.result(self.name).notes}

    def write(self, record: MeetingRecord, run: RunFolder) -> None:
        """The meeting's notes file (``speechkit-notes/1``)."""
        write_notes(run.notes(record.session_id), record.result(self.name).notes, record.session_id)

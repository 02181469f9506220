"""The ``system`` stage: a whole meeting system, run on each meeting with what its level gives it.

It stands alone in its recipe (``WHOLE``): the meeting's audio and context in (the inputs folder
of :mod:`speechkit.io.system_files`, made from the same
:class:`~speechkit.meeting_context.MeetingContext` the cascade's stages get: at L2 and L3 with
the system's own earlier outputs), its transcript, speaker turns, notes and answers out. Those
are the meeting's outputs (:mod:`speechkit.core.record`), so the runner writes the transcripts,
the later meetings' context learns from them, and scoring reads them as any run's; the stage
writes the notes, the answers and the system's log (:data:`LOG`) into the run folder.

Backends (``BACKENDS``): ``command`` (:mod:`~speechkit.stages.system.command`: a program the user
names on the command line, once per meeting). The stage's results are never stored (so it has no
``result_type``): a program can change without its command line changing.
"""
from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from speechkit.cache import digest
from speechkit.core.record import MeetingRecord
from speechkit.core.section import Section
from speechkit.core.stage import BackendStage, Spec, Stage
from speechkit.io.atomic import write_text
from speechkit.io.markdown import code
from speechkit.io.notes import write_notes
from speechkit.io.run_folder import MeetingFile, RunFolder
from speechkit.io.run_view import RunView
from speechkit.io.seglst import to_seglst
from speechkit.io.system_files import SystemOutputs, inputs_document, write_answers_file

if TYPE_CHECKING:
    from speechkit.workspace import Workspace

BACKENDS = {"command": "speechkit.stages.system.command:CommandSystem"}
DEFAULT_BACKEND = "command"
WHOLE = True
#: The system's log of each meeting in the run folder: what its program wrote to stderr and stdout.
LOG = MeetingFile("system", ".log")


def system_section(view: RunView) -> list[str]:
    """The program that ran as the meeting system and what it wrote for each meeting (run.json's
    ``system`` block and ``stages.system``); nothing for a cascade."""
    program = view.block("system").get("program")
    if not program:
        return []
    rows = [f"| {mid} | {s['segments']} | {'yes' if s['turns'] else 'no'} | {'yes' if s['notes'] else 'no'} | "
            f"{'none' if s['answers'] is None else s['answers']} | {code(LOG.path('', mid).as_posix())} |"
            for mid, s in view.stage_summaries("system").items()]
    return ["## The system", "", f"A meeting system of the user's own, run once per meeting by the command backend "
            f"with what its level gives it (docs/systems.md): {code(shlex.join(program))}.", "",
            "| meeting | segments | speaker turns | notes | answers | log |", "|---|---|---|---|---|---|", *rows, ""]


SECTIONS = (Section(15, system_section),)


@dataclass
class SystemResult:
    """The system's ``outputs`` for one meeting, its ``log`` (stderr and stdout, bounded:
    :class:`~speechkit.stages.system.program.BoundedLog`) and the ``seconds`` it took."""

    outputs: SystemOutputs
    log: str
    seconds: float

    def summary(self) -> dict[str, Any]:
        """What run.json records per meeting (``stages.system.<meeting>``)."""
        out = self.outputs
        return {"seconds": round(self.seconds, 3), "segments": len(out.transcript.segments),
                "turns": out.turns is not None, "notes": out.notes is not None,
                "answers": None if out.answers is None else len(out.answers), "log_bytes": len(self.log.encode())}


def build(spec: Spec, device: str = "auto", reads: Mapping[str, Stage] | None = None) -> SystemStage:
    """The system stage for a recipe's ``stages.system``."""
    return SystemStage(spec, device, reads)


class SystemStage(BackendStage[SystemResult]):
    """A whole meeting system: the meeting's inputs in, its outputs out."""

    name = "system"
    backends = BACKENDS
    watched: tuple[Path, ...] = ()
    reads_audio = True
    context_fields = ("level", "notes", "names", "enrollments", "expected_speakers", "terms", "biasing",
                      "questions", "earlier")

    def identity(self) -> Any:
        """The program the backend runs (given on the command line; no option holds it)."""
        return list(getattr(self.spec.options, "program", ()))

    def extra_inputs(self, record: MeetingRecord) -> Any:
        """The meeting's inputs: the inputs document and the earlier outputs it holds."""
        return {"inputs": inputs_document(record.session_id, record.audio, record.context),
                "earlier": {e.meeting: digest(to_seglst([e.transcript]), e.notes.to_dict() if e.notes else None)
                            for e in record.context.earlier}}

    def start_run(self, workspace: Workspace, run: RunFolder) -> None:
        """The folders the system must not change while it runs: the workspace and the run folder."""
        self.watched = (workspace.root, run.root)

    def run(self, record: MeetingRecord) -> SystemResult:
        shared = () if record.cache.root is None else (record.cache.root,)  # other runs may write it meanwhile
        return self.backend.run_meeting(record.session_id, record.audio, record.context, self.watched, shared)

    def outputs(self, record: MeetingRecord, so_far: Mapping[str, Any]) -> dict[str, Any]:
        """The system's transcript, and its speaker turns and notes where it wrote them."""
        return record.result(self.name).outputs.as_outputs()

    def write(self, record: MeetingRecord, run: RunFolder) -> None:
        """The system's log, and its notes and answers where it wrote them."""
        result, meeting = record.result(self.name), record.session_id
        write_text(run.meeting_file(LOG, meeting), result.log)
        if result.outputs.notes is not None:
            write_notes(run.notes(meeting), result.outputs.notes, meeting)
        if result.outputs.answers is not None:
            write_answers_file(run.answers(meeting), meeting, result.outputs.answers)

    def run_summary(self, summaries: Mapping[str, Any]) -> Any:
        """run.json ``system``: the program the backend ran."""
        return {"program": self.identity()}

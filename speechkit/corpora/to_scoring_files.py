"""A workspace's references or a run's hypotheses as one SegLST or RTTM file, for other scoring tools.

meeteval (cpWER, tcpWER) reads SegLST and pyannote.metrics or md-eval read RTTM; each file holds every
meeting as a session. A workspace gives its references, exactly those ``speechkit score`` scores
against (:func:`speechkit.io.references.meeting_reference` and :func:`~speechkit.io.references.reference_turns`):
SegLST the reference transcripts (speaker = person id), RTTM the reference speaker turns. A run gives
its hypotheses: SegLST its transcripts (``<meeting>.json``), RTTM its speaker turns (``<meeting>.rttm``,
the diarization DER scores), never turns made from transcript segments. The file is written
atomically, and never over one of the files read.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from speechkit.errors import FormatError
from speechkit.io import WRITERS, read_transcripts
from speechkit.io.atomic import check_output_file
from speechkit.io.run_folder import RunFolder
from speechkit.transcript import Transcript
from speechkit.workspace import Workspace

#: The formats exported, with the suffix of their file.
SUFFIXES = {"seglst": ".json", "rttm": ".rttm"}


@dataclass
class Export:
    """Transcripts to write as one file: ``sources`` are the files read, ``left_out`` the meetings
    without what the format holds, each with the reason."""

    transcripts: list[Transcript]
    sources: dict[str, Path]
    left_out: dict[str, str]


def workspace_references(ws: Workspace, fmt: str) -> Export:
    """The references of the scored meetings of ``ws`` in format ``fmt`` (``seglst``: transcripts,
    ``rttm``: speaker turns); a meeting without one is left out, with the reason."""
    from speechkit.io.references import meeting_reference, reference_turns

    out = Export([], {"the workspace manifest": ws.manifest_path}, {})
    for meeting in ws.scored_meetings:
        out.sources.update({f"the {key} of meeting {meeting.id}": getattr(meeting, key)
                            for key in ("reference", "rttm") if getattr(meeting, key) is not None})
        reference = meeting_reference(meeting)
        chosen = reference if fmt == "seglst" else reference_turns(meeting, reference)
        if chosen is None:
            out.left_out[meeting.id] = ("no reference transcript" if fmt == "seglst"
                                        else "neither a reference transcript nor speaker turns")
        else:
            out.transcripts.append(chosen)
    if not out.transcripts:
        raise FormatError(ws.manifest_path, f"no meeting has a reference to export as {fmt}"
                                            + (" (speaker turns only? export rttm)" if fmt == "seglst" else ""))
    return out


def run_hypotheses(run: Path, fmt: str) -> Export:
    """The hypotheses of a run folder (its ``transcripts/``, else the folder itself, as
    ``speechkit score --run`` takes it) in format ``fmt``: every ``*.json`` SegLST transcript, or every
    ``*.rttm`` speaker-turn file, each session once."""
    folder = RunFolder.of_hypotheses(run).transcripts
    if not folder.is_dir():
        raise FormatError(run, "run folder not found")
    files = sorted(p for p in folder.glob(f"*{SUFFIXES[fmt]}") if p.name != RunFolder.SCORES and p.is_file())
    if not files:
        what = "<meeting>.json SegLST transcript files" if fmt == "seglst" else "<meeting>.rttm speaker turns"
        raise FormatError(folder, f"no hypotheses to export: no {what} in the folder")
    out = Export([], {}, {})
    seen: dict[str, Path] = {}
    for path in files:
        for session, transcript in read_transcripts(path, fmt).items():
            if session in seen:
                raise FormatError(path, f"session {session!r} is also in {seen[session]}: one file per meeting")
            seen[session] = path
            out.transcripts.append(transcript)
        out.sources[f"the hypothesis {path.name}"] = path
    return out


def write_export(export: Export, fmt: str, target: Path) -> None:
    """Write ``export`` to ``target`` as ``fmt``, atomically; ``target`` must not be a file read."""
    check_output_file(target, export.sources)
    WRITERS[fmt](target, export.transcripts)

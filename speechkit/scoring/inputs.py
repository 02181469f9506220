"""Scoring's inputs: a run folder and its workspace, or one reference/hypothesis pair, as one
:class:`~speechkit.metrics.family.MeetingInputs` per meeting.

A workspace meeting's hypothesis is the run's SegLST transcript (``<id>.json`` or
``<id>.seglst.json``), its speaker turns the RTTM beside it; its references come from the
manifest. A hypothesis file holding one session is that meeting's whatever its ``session_id``;
in a file holding several, the meeting's session is scored and the others are left out with a
remark.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from speechkit.errors import FormatError
from speechkit.io import format_of, read_transcripts
from speechkit.io.names import child_path, id_problem
from speechkit.io.references import CAPABILITIES, empty, meeting_reference, pick, reference_turns, sessions
from speechkit.io.run_folder import TURNS_RTTM, RunFolder
from speechkit.metrics.backchannels import without_backchannels
from speechkit.metrics.family import MeetingInputs
from speechkit.metrics.options import ScoreOptions
from speechkit.transcript import Transcript
from speechkit.workspace import Person, Workspace

HYPOTHESIS_SUFFIXES = (".json", ".seglst.json")


def hypothesis_path(run: RunFolder, meeting_id: str) -> Path:
    """The hypothesis file of a meeting in a run folder (``<id>.json`` or ``<id>.seglst.json``)."""
    if id_problem(meeting_id):  # a workspace built in Python, not loaded from a checked manifest
        raise FormatError(run.transcripts, f"meeting id {id_problem(meeting_id)}")
    candidates = [child_path(run.transcripts, meeting_id, suffix) for suffix in HYPOTHESIS_SUFFIXES]
    for path in candidates:
        if path.is_file():
            return path
    raise FormatError(candidates[0], f"no hypothesis for meeting {meeting_id!r}: expected the SegLST file "
                                     f"{candidates[0]} (or {candidates[1].name})")


def _words_scored(ref: Transcript | None, hyp: Transcript,
                  options: ScoreOptions) -> tuple[Transcript | None, Transcript]:
    """The reference and hypothesis the word metrics score: without backchannels when asked."""
    if ref is None or not options.exclude_backchannels:
        return ref, hyp
    return without_backchannels(ref, hyp)


def workspace_inputs(ws: Workspace, run: RunFolder, options: ScoreOptions) -> list[MeetingInputs]:
    """One :class:`MeetingInputs` per scored meeting of ``ws`` from the run folder ``run``.

    DER and JER score the meeting's speaker turns, ``<id>.rttm`` beside its SegLST file; where
    there is none they are not applicable, unless ``options.der_from_segments`` scores the SegLST
    segments instead. A reference speaker who is not a person of the workspace is an error.
    """
    people = [p.id for p in ws.people]
    out = []
    for meeting in ws.scored_meetings:  # an enrollment-only meeting has no hypothesis and is not scored
        remarks: list[str] = []
        hyp = pick(hypothesis_path(run, meeting.id), meeting.id, remarks=remarks)
        ref = meeting_reference(meeting, remarks)
        if ref is not None:
            for speaker in ref.speakers:
                if speaker not in people:
                    raise FormatError(meeting.reference, f"speaker {speaker!r} is not a person id of the workspace "
                                                         f"(known: {', '.join(people)})")
        turns = reference_turns(meeting, ref, remarks)
        rttm = run.transcript(meeting.id, TURNS_RTTM.suffix)
        hyp_turns = (pick(rttm, meeting.id, remarks=remarks) if rttm.is_file()
                     else hyp if options.der_from_segments else None)
        ref, hyp = _words_scored(ref, hyp, options)
        out.append(MeetingInputs(meeting.id, hyp, ref, turns, meeting.terms, remarks=tuple(remarks),
                                 hypothesis_turns=hyp_turns))
    return out


def workspace_files(ws: Workspace, run: RunFolder) -> dict[str, Path]:
    """Every input file of scoring ``run`` against ``ws``, named (what scores.json must never be written over)."""
    inputs = {"the workspace manifest": ws.manifest_path}
    for meeting in ws.scored_meetings:
        inputs[f"the hypothesis of meeting {meeting.id}"] = hypothesis_path(run, meeting.id)
        inputs[f"the speaker turns of meeting {meeting.id}"] = run.transcript(meeting.id, TURNS_RTTM.suffix)
        inputs[f"the notes of meeting {meeting.id}"] = run.notes(meeting.id)
    for m in ws.meetings:
        inputs.update({f"the {key} of meeting {m.id}": getattr(m, key)
                       for key in ("reference", "rttm", "audio", "notes")})
    return inputs


def pair_inputs(reference: Path, hypothesis: Path, session: str | None, options: ScoreOptions,
                ) -> tuple[list[MeetingInputs], dict[str, Person]]:
    """The meetings of a reference file and a hypothesis file, in any supported formats, and the
    people their reference speaker labels stand for (``Diane_Smith`` is "Diane Smith").

    With ``session``, only that session. Otherwise a file pair holding one session each is paired
    whatever the ids (the hypothesis is scored under the reference's id); files with several
    sessions are paired by session id, and a session on one side only is an error.
    """
    refs = read_transcripts(reference)
    hyp_fmt = format_of(hypothesis)
    if session is not None:
        ids = [session]
        refs = {session: pick(reference, session, strict=True)}
    else:
        ids = list(refs)
        if not ids:
            raise FormatError(reference, "the reference holds no segments")
    hyps = read_transcripts(hypothesis, hyp_fmt)
    single = len(ids) == 1 and len(hyps) <= 1
    if not single:
        extra = {sid: t for sid, t in hyps.items() if sid not in ids}
        if extra and session is None:
            raise FormatError(hypothesis, f"sessions not in the reference {reference}: {sessions(extra)} "
                                          f"(reference sessions: {sessions(refs)})")
    remarks: list[str] = []
    if session is not None and not single and len(hyps) > 1:
        others = {sid: t for sid, t in hyps.items() if sid != session}
        remarks.append(f"{hypothesis}: scored session {session!r} (--session); left out "
                       f"{sum(len(t.segments) for t in others.values())} segment(s) of: {sessions(others)}")
    # a file naming nobody gives only per-meeting labels: named accuracy and consistency would be a foregone 0
    named = CAPABILITIES[hyp_fmt][2] and any(seg.speaker_name for t in hyps.values() for seg in t.segments)
    pairs = []
    for sid in ids:
        if single:
            hyp = next(iter(hyps.values())) if hyps else empty(sid, hyp_fmt)
        elif sid in hyps:
            hyp = hyps[sid]
        else:
            raise FormatError(hypothesis, f"no hypothesis for session {sid!r} of the reference {reference} "
                                          f"(hypothesis sessions: {sessions(hyps)})")
        ref = refs[sid]
        hyp = hyp if hyp.session_id == sid else replace(hyp, session_id=sid)
        words_ref, words_hyp = _words_scored(ref, hyp, options)
        pairs.append(MeetingInputs(sid, words_hyp, words_ref, ref, None, hypothesis_has_names=named,
                                   hypothesis_turns=hyp if hyp_fmt == "rttm" or options.der_from_segments else None,
                                   remarks=tuple(remarks)))
    people = {label: Person(id=label, name=label.replace("_", " ")) for ref in refs.values() for label in ref.speakers}
    return pairs, people

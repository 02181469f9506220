"""Write an imported workspace: audio, references, enrollments, terms and the manifest, atomically.

The workspace is built in a temporary folder beside the target (``.NAME.*.importing``) and renamed
onto it at the end; any error removes the temporary folder, so a failed import writes no workspace.
Layout::

    workspace.yaml
    meetings/<id>/audio.flac        16 kHz mono, 16-bit
    meetings/<id>/reference.json    SegLST (speaker = person id; word_times when the corpus has them),
                                    only when the corpus has text
    meetings/<id>/reference.rttm    reference speaker turns
    meetings/<id>/notes.json        gold notes, when the corpus has them (validated, rewritten)
    meetings/<id>/questions.json    gold questions, when the corpus has them (validated, rewritten)
    enrollments/<person>.flac       solo speech cut from the enrollment meeting
    enrollments/<person>-<n>.<ext>  enrollment clips the user supplied
"""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from speechkit.corpora.enroll import EnrollmentOptions, cut_enrollments
from speechkit.corpora.records import SAMPLE_RATE, SourceMeeting, SourcePerson
from speechkit.errors import AudioError, OutputError, SpeechkitError
from speechkit.io.manifest import load_workspace, write_manifest
from speechkit.io.names import id_problem
from speechkit.io.notes import read_gold_notes, write_notes
from speechkit.io.questions import default_questions_path, read_questions, write_questions
from speechkit.io.rttm import write_rttm
from speechkit.io.seglst import write_seglst
from speechkit.transcript import Transcript
from speechkit.workspace import Meeting, Person, TermSet, Workspace


def safe_name(text: str) -> str:
    """``text`` as one file-name component (letters, digits, ``.``, ``-`` and ``_``)."""
    name = re.sub(r"[^\w.-]+", "_", text).strip("._") or "_"
    return name


def check_target(target: Path) -> None:
    """The target must be new or an empty folder: an import never mixes with existing files."""
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise SpeechkitError(f"{target}: already exists and is not an empty folder; choose a new --out")


def write_audio(path: Path, meeting: SourceMeeting, target: Path) -> float:
    """Stream the meeting's audio into a 16-bit FLAC file; returns its duration in seconds.

    A write that fails (disk full, a path too long) is an OutputError naming ``target``, the
    workspace being built.
    """
    import soundfile as sf

    samples = 0
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with sf.SoundFile(path, "w", SAMPLE_RATE, 1, "PCM_16", format="FLAC") as out:
            for block in meeting.audio():
                out.write(np.clip(block, -1.0, 1.0))
                samples += len(block)
    except (OSError, sf.LibsndfileError) as exc:
        reason = getattr(exc, "strerror", None) or getattr(exc, "error_string", None) or str(exc)
        shown = str(target) if len(str(target)) <= 200 else f"{str(target)[:90]}...{str(target)[-90:]}"
        raise OutputError(shown, f"cannot write the audio of meeting {meeting.id!r}: {reason}") from None
    if samples == 0:
        raise AudioError(meeting.origin, "holds no audio samples")
    return samples / SAMPLE_RATE


def _named(transcript: Transcript, names: dict[str, str]) -> Transcript:
    return Transcript(transcript.session_id, [s.with_speaker(speaker_name=names[s.speaker])
                                              for s in transcript.segments],
                      has_words=transcript.has_words)


def _enrollment_meeting(meetings: Sequence[SourceMeeting], options: EnrollmentOptions) -> SourceMeeting:
    ids = [m.id for m in meetings]
    wanted = ids[0] if options.meeting == "first" else options.meeting
    if wanted not in ids:
        raise SpeechkitError(f"--enroll-from {options.meeting!r}: no such meeting in the series ({', '.join(ids)})")
    if len(ids) == 1:
        raise SpeechkitError(f"--enroll-from {wanted!r}: it is the only meeting of the series; nothing would be "
                             "left to run and score")
    return meetings[ids.index(wanted)]


def build_workspace(target: str | Path, name: str, people: Sequence[SourcePerson],
                    meetings: Sequence[SourceMeeting], *, terms: TermSet = TermSet(),
                    enrollment: EnrollmentOptions | None = None, metadata: dict[str, Any] | None = None,
                    progress: bool = True) -> Workspace:
    """Write ``meetings`` (in calendar order, each with a date) and ``people`` as a workspace at ``target``.

    With ``enrollment``, each person's solo speech in the chosen meeting becomes their enrollment
    clip and that meeting is marked enrollment-only; what was cut is recorded under
    ``metadata.enrollment``. Returns the workspace as loaded (validated) from ``target``.
    """
    target = Path(target).absolute()
    check_target(target)
    known = {p.id for p in people}
    for p in people:  # before any audio is encoded: ids become file names
        if problem := id_problem(p.id):
            raise SpeechkitError(f"person id: {problem}")
    for m in meetings:
        if problem := id_problem(m.id):
            raise SpeechkitError(f"{m.origin}: meeting id: {problem}")
        if m.date is None:
            raise SpeechkitError(f"{m.origin}: meeting {m.id!r} has no date")
        for t in (m.turns, m.reference):
            stray = [s for s in (t.speakers if t else []) if s not in known]
            if stray:
                raise SpeechkitError(f"{m.origin}: speaker {stray[0]!r} is not a person of the workspace")
    enrolled_from = _enrollment_meeting(meetings, enrollment) if enrollment else None
    made = _make_folders(target.parent)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".importing", dir=target.parent))
    except OSError:
        _remove_empty(made)
        raise
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o777 & ~umask)  # mkdtemp makes it private; the workspace gets the usual permissions
    try:
        names = {p.id: p.name for p in people}
        records, folders, durations = [], set(), {}
        for m in tqdm(meetings, desc=f"import {name}", unit="meeting", disable=not progress or None):
            folder = safe_name(m.id)
            while folder in folders:
                folder += "_"
            folders.add(folder)
            base = tmp / "meetings" / folder
            durations[m.id] = round(write_audio(base / "audio.flac", m, target), 3)
            reference = None
            if m.reference is not None:
                reference = base / "reference.json"
                write_seglst(reference, [_named(m.reference, names)])
            write_rttm(base / "reference.rttm", [m.turns])
            notes = None
            if m.notes is not None:
                notes = base / "notes.json"
                write_notes(notes, read_gold_notes(m.notes, m.id, names), m.id)
            if m.questions is not None:
                write_questions(tmp / default_questions_path(m.id), read_questions(m.questions, m.id, names))
            attendees = tuple(dict.fromkeys([*m.turns.speakers, *(m.reference.speakers if m.reference else [])]))
            records.append(Meeting(id=m.id, date=m.date, audio=base / "audio.flac", title=m.title, kind=m.kind,
                                   reference=reference, rttm=base / "reference.rttm", attendees=attendees, notes=notes,
                                   enrollment_only=enrolled_from is not None and m.id == enrolled_from.id))
        clips: dict[str, list[Path]] = {p.id: [] for p in people}
        meta = dict(metadata or {})
        meta["durations_s"] = durations
        if enrolled_from is not None:
            audio = next(r.audio for r in records if r.id == enrolled_from.id)
            cut, record = cut_enrollments(audio, enrolled_from.turns, enrollment, tmp / "enrollments", tmp)
            meta["enrollment"] = {"meeting": enrolled_from.id, **record}
            for pid, path in cut.items():
                clips[pid].append(path)
        for p in people:
            for n, source in enumerate(p.enrollments, start=1):
                path = tmp / "enrollments" / f"{safe_name(p.id)}-{n}{source.suffix.lower()}"
                path.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, path)
                clips[p.id].append(path)
        ws = Workspace(name=name, root=tmp, terms=terms, meetings=tuple(records), metadata=meta,
                       people=tuple(Person(id=p.id, name=p.name, nicknames=p.nicknames, role=p.role,
                                           enrollments=tuple(clips[p.id])) for p in people))
        write_manifest(ws)
        load_workspace(tmp)
        if target.exists():
            target.rmdir()
        os.rename(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        _remove_empty(made)
        raise
    return load_workspace(target)


def _make_folders(folder: Path) -> list[Path]:
    """Create ``folder`` and its missing parents; returns the folders created, deepest first."""
    made, path = [], folder
    while not path.exists() and path != path.parent:
        made.append(path)
        path = path.parent
    folder.mkdir(parents=True, exist_ok=True)
    return made


def _remove_empty(folders: list[Path]) -> None:
    """Remove the folders a failed import created (deepest first), as long as they are empty."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            return

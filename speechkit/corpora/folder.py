"""A user's own folder of meetings to a workspace.

The folder (subfolders included; hidden files ignored) holds audio files (any format speechkit
decodes) and reference files: STM or SegLST JSON (words with speakers) and RTTM (speaker turns).
Enrollment clips named by the people CSV are not meetings. References are matched to audio by session
id: the STM/RTTM file field, the SegLST ``session_id``, must equal an audio file's name without
its extension; one reference file may hold one meeting or several; a ``.json`` file that is not a
JSON list (a ``config.json``) is no reference and is left out. Every reference session must
match an audio file and every audio file must have a reference, or the import fails naming the
file and line; so does a subfolder or file that cannot be read. A people CSV (``people.csv``
in the folder, or ``--people``; see
:mod:`speechkit.corpora.people`) names the speakers. Without one, people are the reference
speakers, named by the SegLST ``speaker_name`` or else by their label (underscores read as spaces).
A file ``<session>.notes.json`` holds that meeting's gold notes, ``<session>.questions.json`` its
gold questions (docs/workspace-format.md).
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from speechkit.corpora.build import build_workspace
from speechkit.corpora.enroll import EnrollmentOptions
from speechkit.corpora.people import read_people
from speechkit.corpora.records import SAMPLE_RATE, SourceMeeting, SourcePerson
from speechkit.corpora.series import calendar_order, meeting_dates
from speechkit.corpora.terms import term_list
from speechkit.errors import FormatError, SpeechkitError
from speechkit.io import read_transcripts
from speechkit.io._lines import open_input, read_text, text_lines
from speechkit.io.jsonfile import read_json
from speechkit.io.names import id_problem
from speechkit.io.seglst import seglst_transcripts
from speechkit.transcript import Segment, Transcript
from speechkit.workspace import TermSet, Workspace

AUDIO_SUFFIXES = frozenset({".wav", ".wave", ".flac", ".ogg", ".oga", ".opus", ".aif", ".aiff", ".aifc", ".au",
                            ".w64", ".rf64", ".caf", ".mp3", ".m4a", ".aac", ".wma", ".webm", ".mp4", ".mkv"})
REFERENCE_FORMATS = {".stm": "stm", ".rttm": "rttm", ".json": "seglst"}
PEOPLE_CSV = "people.csv"
NOTES_SUFFIX = ".notes.json"
QUESTIONS_SUFFIX = ".questions.json"
# Where each format keeps the session id and the speaker: (field index of a line, SegLST key).
_FIELDS = {"stm": {"session": 0, "speaker": 2}, "rttm": {"session": 1, "speaker": 7},
           "seglst": {"session": "session_id", "speaker": "speaker"}}


def _where(path: Path, fmt: str, key: str, value: str) -> FormatError:
    """A FormatError pointing at the first line (or SegLST entry) whose ``key`` field is ``value``."""
    where = _FIELDS[fmt][key]
    if fmt == "seglst":
        data = read_json(path)
        index = next(i for i, obj in enumerate(data) if obj.get(where) == value)
        return FormatError(path, "", field=f"[{index}].{where}")
    for number, line in enumerate(text_lines(read_text(path)), start=1):
        fields = line.split()
        if len(fields) > where and fields[where] == value and (fmt != "rttm" or fields[0] == "SPEAKER"):
            return FormatError(path, "", line=number)
    return FormatError(path, "")


def _error_at(path: Path, fmt: str, key: str, value: str, problem: str) -> FormatError:
    located = _where(path, fmt, key, value)
    return FormatError(path, problem, line=located.line, field=located.field)


@dataclass
class _Found:
    """Audio files by session id and the references read for each session."""

    audio: dict[str, Path] = field(default_factory=dict)
    words: dict[str, tuple[Path, str, Transcript]] = field(default_factory=dict)
    turns: dict[str, tuple[Path, str, Transcript]] = field(default_factory=dict)
    notes: dict[str, Path] = field(default_factory=dict)
    questions: dict[str, Path] = field(default_factory=dict)


def _files(folder: Path) -> list[Path]:
    """The regular files under ``folder`` (hidden ones left out), sorted; an unreadable subfolder is an error."""
    def refuse(exc: OSError) -> None:
        raise FormatError(exc.filename, f"cannot read this folder: {exc.strerror or type(exc).__name__}; its "
                                        "meetings would be missing") from None

    out = []
    for root, dirs, names in os.walk(folder, onerror=refuse):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        out += [Path(root) / n for n in names if not n.startswith(".") and (Path(root) / n).is_file()]
    return sorted(out)


def _references(path: Path, fmt: str) -> dict[str, Transcript] | None:
    """The transcripts of a reference file; None for a ``.json`` that is not SegLST-shaped (no JSON list)."""
    if fmt != "seglst":
        return read_transcripts(path, fmt)
    data = read_json(path)
    return seglst_transcripts(data, path) if isinstance(data, list) else None


def _scan(folder: Path, skip: set[Path]) -> _Found:
    found = _Found()
    files = [p for p in _files(folder) if p.resolve() not in skip]
    for path in files:
        suffix = path.suffix.lower()
        if suffix in AUDIO_SUFFIXES:
            problem = id_problem(path.stem)
            if problem:
                raise FormatError(path, f"the file name is the meeting id: {problem}")
            with open_input(path):  # unreadable (permission denied) is an error now, not after hours of decoding
                pass
            if path.stem in found.audio:
                raise FormatError(path, f"a second audio file for session {path.stem!r} "
                                        f"(the first is {found.audio[path.stem]})")
            found.audio[path.stem] = path
    for path in files:
        gold = next(((kind, suffix) for kind, suffix in (("notes", NOTES_SUFFIX), ("questions", QUESTIONS_SUFFIX))
                     if path.name.lower().endswith(suffix)), None)
        if gold is not None:
            session = path.name[:-len(gold[1])]
            if session not in found.audio:
                raise FormatError(path, f"{gold[0]} of session {session!r}, which matches no audio file in {folder}")
            getattr(found, gold[0])[session] = path
            continue
        fmt = REFERENCE_FORMATS.get(path.suffix.lower())
        if fmt is None:
            continue
        for session, transcript in (_references(path, fmt) or {}).items():
            if session not in found.audio:
                raise _error_at(path, fmt, "session", session,
                                f"session {session!r} matches no audio file in {folder} (audio files are matched "
                                f"by name without extension: {', '.join(sorted(found.audio)) or 'none found'})")
            slot = found.turns if fmt == "rttm" else found.words
            if session in slot:
                raise _error_at(path, fmt, "session", session, f"session {session!r} already has a "
                                f"{'speaker-turn' if fmt == 'rttm' else 'word'} reference in {slot[session][0]}")
            slot[session] = (path, fmt, transcript)
    for session in set(found.words) & set(found.turns):
        path, fmt, turns = found.turns[session]
        speakers = set(found.words[session][2].speakers)
        stray = next((s for s in turns.speakers if s not in speakers), None)
        if stray is not None:
            raise _error_at(path, fmt, "speaker", stray, f"speaker {stray!r} of session {session!r} is not a speaker "
                            f"of its word reference {found.words[session][0]} ({', '.join(sorted(speakers))})")
    for session, path in found.audio.items():
        if session not in found.words and session not in found.turns:
            refs = sorted(p.name for p in files if p.suffix.lower() in REFERENCE_FORMATS)
            raise FormatError(path, f"no reference for session {session!r}: no STM, SegLST or RTTM file in "
                                    f"{folder} names it (reference files: {', '.join(refs) or 'none'})")
    return found


def _audio_blocks(path: Path, channel: int | None):
    from speechkit.core.audio import iter_audio_chunks

    return iter_audio_chunks(path, chunk_s=60.0, sample_rate=SAMPLE_RATE, channel=channel)


def _people(found: _Found, sessions: Sequence[str], people_csv: Path | None,
            listed: list[SourcePerson] | None) -> list[SourcePerson]:
    """The CSV's people (every reference speaker must be one), or the reference speakers."""
    refs = [(found.words.get(s) or found.turns[s]) for s in sessions] + \
        [found.turns[s] for s in sessions if s in found.turns and s in found.words]
    if listed is not None:
        known = {p.id for p in listed}
        for path, fmt, transcript in refs:
            for speaker in transcript.speakers:
                if speaker not in known:
                    raise _error_at(path, fmt, "speaker", speaker,
                                    f"speaker {speaker!r} is not a person id of {people_csv}")
        return listed
    for path, fmt, transcript in refs:
        for speaker in transcript.speakers:
            problem = id_problem(speaker)
            if problem:
                raise _error_at(path, fmt, "speaker", speaker, f"the speaker is a person id: {problem}")
    out: dict[str, SourcePerson] = {}
    for _, _, transcript in refs:
        for seg in transcript.segments:
            if seg.speaker not in out:
                out[seg.speaker] = SourcePerson(seg.speaker, seg.speaker_name or seg.speaker.replace("_", " ").strip()
                                                or seg.speaker)
    return list(out.values())


def _turns(transcript: Transcript) -> Transcript:
    return Transcript(transcript.session_id, [Segment(s.start, s.end, s.speaker) for s in transcript.segments],
                      has_words=False)


def import_folder(source: str | Path, out: str | Path, *, people: str | Path | None = None,
                  terms: TermSet | None = None, derive: bool = True, enrollment: EnrollmentOptions | None = None,
                  channel: int | None = None, name: str | None = None, progress: bool = True) -> Workspace:
    """Import a folder of recordings and references (see the module docstring) into a new workspace.

    Meetings are in calendar order by id (dates are placeholders encoding that order).
    ``channel``: keep one channel of every recording (None: their mix).
    """
    folder = Path(source)
    if not folder.is_dir():
        raise SpeechkitError(f"{folder}: not a folder")
    people_csv = Path(people) if people else (folder / PEOPLE_CSV if (folder / PEOPLE_CSV).is_file() else None)
    listed = read_people(people_csv, inside=None if people else folder) if people_csv else None
    skip = {people_csv.resolve()} if people_csv else set()
    skip |= {clip.resolve() for p in listed or () for clip in p.enrollments}  # clips are not meetings
    found = _scan(folder, skip)
    if not found.audio:
        raise SpeechkitError(f"{folder}: no audio files ({', '.join(sorted(AUDIO_SUFFIXES))})")
    ordered = calendar_order(list(found.audio), {}, "id")
    days, _ = meeting_dates(ordered, {})
    persons = _people(found, ordered, people_csv, listed)
    meetings = []
    for session in ordered:
        words = found.words.get(session)
        turns = found.turns.get(session)
        reference = words[2] if words else None
        origin = ", ".join(str(r[0]) for r in (words, turns) if r)
        meetings.append(SourceMeeting(
            id=session, audio=lambda path=found.audio[session]: _audio_blocks(path, channel),
            turns=turns[2] if turns else _turns(reference), reference=reference, origin=origin, date=days[session],
            notes=found.notes.get(session), questions=found.questions.get(session)))
    metadata: dict[str, Any] = {"import": {
        "from": "folder", "folder": str(folder.resolve()), "people": str(people_csv.resolve()) if people_csv else None,
        "order": "id", "channel": "mix" if channel is None else channel,
        "dates": "placeholders (the folder has no dates): they encode the calendar order only",
        "references": {m.id: m.reference_kind for m in meetings}}}
    terms, metadata["terms"] = term_list(
        {m.id: m.reference.text for m in meetings if m.reference is not None}, terms, derive)
    return build_workspace(out, name or folder.resolve().name, persons, meetings, terms=terms,
                           enrollment=enrollment, metadata=metadata, progress=progress)

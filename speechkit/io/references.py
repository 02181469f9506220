"""A meeting's transcripts picked out of files, as scoring reads them: the session a file holds
for a meeting (:func:`pick`), a workspace meeting's reference (:func:`meeting_reference`) and its
reference speaker turns (:func:`reference_turns`)."""
from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

from speechkit.errors import FormatError, brief
from speechkit.io import format_of, read_transcripts
from speechkit.transcript import Transcript
from speechkit.workspace import Meeting

log = logging.getLogger(__name__)

#: What each format carries: words, speakers, speaker names.
CAPABILITIES = {"seglst": (True, True, True), "stm": (True, True, False),
                "rttm": (False, True, False), "ctm": (True, False, False)}


def empty(session: str, fmt: str) -> Transcript:
    """An empty transcript of ``session`` in a format ``fmt``: what that format can carry."""
    has_words, has_speakers, _ = CAPABILITIES[fmt]
    return Transcript(session, [], has_words=has_words, has_speakers=has_speakers)


def sessions(transcripts: dict[str, Transcript]) -> str:
    """The session ids of ``transcripts``, for a message."""
    return brief(", ".join(sorted(transcripts)), 200).strip("'\"") or "none"


def pick(path: Path, session: str, strict: bool = False, remarks: list[str] | None = None) -> Transcript:
    """The transcript of ``session`` in ``path``, carrying ``session`` as its id.

    Unless ``strict``, a file holding one session (or none) fits any id: it is the file of that
    meeting, whatever its ``session_id`` (``speechkit transcribe`` names it after the audio file).
    Segments of other sessions are left out, and ``remarks`` (when given) says so.
    """
    fmt = format_of(path)
    transcripts = read_transcripts(path, fmt)
    if session in transcripts:
        others = {sid: t for sid, t in transcripts.items() if sid != session}
        if others and not strict:  # strict: the caller picked the session (--session)
            remark = (f"{path}: scored session {session!r}; left out {sum(len(t.segments) for t in others.values())} "
                      f"segment(s) of other session(s): {sessions(others)}")
            log.warning(remark)
            if remarks is not None:
                remarks.append(remark)
        chosen = transcripts[session]
    elif not strict and len(transcripts) == 1:
        chosen = next(iter(transcripts.values()))
    elif not strict and not transcripts:
        return empty(session, fmt)
    else:
        raise FormatError(path, f"no session {session!r} in the file (sessions found: {sessions(transcripts)})")
    return chosen if chosen.session_id == session else replace(chosen, session_id=session)


def _has_word_times(transcript: Transcript) -> bool:
    words = [w for s in transcript.segments for w in s.words]
    return bool(words) and all(w.start is not None and w.end is not None for w in words)


def meeting_reference(meeting: Meeting, remarks: list[str] | None = None) -> Transcript | None:
    """The reference transcript of a workspace meeting (speakers are person ids), None without one;
    ``remarks`` (when given) says what of the file was left out."""
    return pick(meeting.reference, meeting.id, remarks=remarks) if meeting.reference else None


def reference_turns(meeting: Meeting, reference: Transcript | None, remarks: list[str] | None = None,
                    ) -> Transcript | None:
    """The reference speaker turns DER/JER score for ``meeting`` (``reference`` is its
    :func:`meeting_reference`): the reference's segments when its words carry times, else the
    meeting's RTTM when given, else the reference's segments (None: no turns)."""
    if meeting.rttm is not None and (reference is None or not _has_word_times(reference)):
        return pick(meeting.rttm, meeting.id, remarks=remarks)
    return reference

"""A workspace (synthetic ones included) to Lhotse manifests, for Lhotse-based training and evaluation.

Writes ``recordings.jsonl.gz`` (one recording per meeting, its audio by absolute path),
``supervisions.jsonl.gz`` (one supervision per reference segment: speaker = person id, text,
a ``word`` alignment when the reference has word times, ``custom["speaker_name"]``; a meeting
without a word reference gets its RTTM turns, without text) and ``cuts.jsonl.gz`` (one cut per
meeting, ``custom`` holding the ``workspace`` name, its ``date``, ``title``, ``kind``, and for the
meeting the enrollments were
cut from ``enrollment_only`` and the ``enrollment`` settings, so an import cuts them again). People's
nicknames and roles, terms, enrollment clips and artifacts have no place in Lhotse manifests
and are not exported. The three files are written as one set (all or none; a target that is a
link, a FIFO or a device is refused) with the permissions of any other output (0666 less the umask).
"""
from __future__ import annotations

import gzip
import json
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from speechkit.errors import FormatError, OutputError, SpeechkitError
from speechkit.io import read_transcripts
from speechkit.io.atomic import atomic_open, check_target
from speechkit.transcript import Transcript
from speechkit.workspace import Meeting, Workspace

FILES = {"recordings": "recordings.jsonl.gz", "supervisions": "supervisions.jsonl.gz", "cuts": "cuts.jsonl.gz"}


def _reference(meeting: Meeting) -> Transcript | None:
    """The words reference of a meeting, else its speaker turns (RTTM), else None."""
    for path in (meeting.reference, meeting.rttm):
        if path is None:
            continue
        transcripts = read_transcripts(path)
        if meeting.id in transcripts:
            return transcripts[meeting.id]
        if len(transcripts) == 1:
            return next(iter(transcripts.values()))
        if transcripts:
            raise FormatError(path, f"no session {meeting.id!r} in the file")
    return None


def _supervisions(ws: Workspace, meeting: Meeting) -> list[Any]:
    from lhotse import SupervisionSegment
    from lhotse.supervision import AlignmentItem

    names = {p.id: p.name for p in ws.people}
    ref = _reference(meeting)
    out = []
    for i, seg in enumerate(ref.segments if ref else []):
        timed = bool(seg.words) and all(w.start is not None and w.end is not None for w in seg.words)
        alignment = {"word": [AlignmentItem(symbol=w.text, start=w.start, duration=round(w.end - w.start, 3),
                                            score=w.confidence) for w in seg.words]} if timed else None
        out.append(SupervisionSegment(
            id=f"{meeting.id}-{i:05d}", recording_id=meeting.id, start=seg.start, duration=round(seg.duration, 3),
            channel=0, text=seg.text if ref.has_words else None, speaker=seg.speaker, language="English",
            custom={"speaker_name": names.get(seg.speaker, seg.speaker)}, alignment=alignment))
    return out


def _jsonl_gz(manifest: Any) -> bytes:
    """A Lhotse manifest as gzip-compressed JSON lines, as ``to_file`` writes it (without a time stamp,
    so that one workspace always gives the same bytes)."""
    lines = "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in manifest.to_dicts())
    return gzip.compress(lines.encode("utf-8"), mtime=0)


def _write_all(files: dict[Path, bytes]) -> None:
    """Write ``files`` as one set: every target is checked first (a link, FIFO or device is refused),
    then each is written to a temporary file, and only when all are written are they renamed."""
    for path in files:
        check_target(path)
    with ExitStack() as stack:
        for path, data in files.items():
            handle = stack.enter_context(atomic_open(path, "wb"))
            try:
                handle.write(data)
            except OSError as exc:
                raise OutputError(path, f"cannot write: {exc.strerror or exc}") from None


def export_lhotse(ws: Workspace, out: str | Path) -> dict[str, Path]:
    """Write the Lhotse manifests of ``ws`` into the folder ``out``; returns the files written."""
    from lhotse import CutSet, Recording, RecordingSet, SupervisionSet
    from lhotse.utils import fastcopy

    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise SpeechkitError(f"{folder}: exists and is not a folder")
    recordings, supervisions = [], []
    for meeting in ws.meetings:
        try:
            recordings.append(Recording.from_file(meeting.audio, recording_id=meeting.id))
        except Exception as exc:  # lhotse's audio backends raise anything
            raise FormatError(meeting.audio, f"cannot read the audio with lhotse: {exc}") from None
        supervisions += _supervisions(ws, meeting)
    recs = RecordingSet.from_recordings(recordings)
    sups = SupervisionSet.from_segments(supervisions)
    custom = {m.id: {"workspace": ws.name, "date": m.date.isoformat(), "title": m.title, "kind": m.kind,
                     "enrollment_only": m.enrollment_only or None} for m in ws.meetings}
    cut_from = ws.metadata.get("enrollment") or {}
    if cut_from.get("meeting") in custom:  # how the enrollments were cut, so that an import cuts them again
        custom[cut_from["meeting"]]["enrollment"] = {"min_seconds": cut_from.get("min_seconds"),
                                                     "max_seconds": cut_from.get("max_seconds"),
                                                     "min_piece": cut_from.get("min_piece_seconds")}
    cuts = CutSet.from_manifests(recordings=recs, supervisions=sups)
    cuts = CutSet.from_cuts(fastcopy(c, custom={k: v for k, v in custom[c.recording_id].items() if v is not None})
                            for c in cuts)
    written = {key: folder / name for key, name in FILES.items()}
    _write_all({written["recordings"]: _jsonl_gz(recs), written["supervisions"]: _jsonl_gz(sups),
                written["cuts"]: _jsonl_gz(cuts)})
    return written

"""Lhotse manifests to a workspace: one meeting per recording, people from the speaker ids.

Reads a ``RecordingSet`` and a ``SupervisionSet`` (several files each, e.g. the train/dev/test
parts of ``lhotse prepare ami``), or a ``CutSet``, with the ``lhotse`` package. Supervisions give
the references: speaker turns always; the words when they carry text (word times when they carry
a ``word`` alignment, else segment level). A supervision's ``custom["speaker_name"]`` names its
person; a cut's ``custom`` may give the ``workspace`` name, its recording's ``date``, ``title`` and ``kind``, and mark
the meeting enrollments are cut from (``enrollment_only``, ``enrollment`` settings) unless
``--enroll-from`` says otherwise; ``speechkit export lhotse`` writes them, so export then import
gives back the same workspace.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from speechkit.corpora.build import build_workspace
from speechkit.corpora.enroll import EnrollmentOptions
from speechkit.corpora.records import SAMPLE_RATE, SourceMeeting, SourcePerson
from speechkit.corpora.series import calendar_order, meeting_dates, parse_date, select_series
from speechkit.corpora.terms import term_list
from speechkit.errors import AudioError, FormatError, SpeechkitError
from speechkit.transcript import Segment, Transcript, Word
from speechkit.workspace import TermSet, Workspace

_BLOCK_S = 60.0  # seconds of audio loaded per read
ALIGNMENT_SLACK_S = 0.5  # how far a word may stick out of its supervision
CUT_CUSTOM = ("workspace", "date", "title", "kind", "enrollment_only", "enrollment")  # the cut custom fields read


@dataclass
class LhotseCorpus:
    """Recordings, their supervisions (recording time) and the custom fields of their cuts."""

    recordings: dict[str, Any]
    supervisions: dict[str, list[Any]]
    custom: dict[str, dict]
    sources: dict[str, str]  # recording id -> the manifest file it came from


def _read(kind: str, path: Path):
    from lhotse import CutSet, RecordingSet, SupervisionSet

    loader = {"recordings": RecordingSet, "supervisions": SupervisionSet, "cuts": CutSet}[kind]
    if not path.is_file():
        raise FormatError(path, "file not found")
    try:
        return list(loader.from_file(path))
    except Exception as exc:  # lhotse raises anything from json/yaml/dataclass errors
        raise FormatError(path, f"not a Lhotse {kind} manifest: {type(exc).__name__}: {exc}") from None


def read_corpus(recordings: Sequence[Path] = (), supervisions: Sequence[Path] = (),
                cuts: Sequence[Path] = ()) -> LhotseCorpus:
    """Read Lhotse manifests into recordings and supervisions keyed by recording id.

    Every supervision must refer to a recording, and every recording must have supervisions.
    """
    recs: dict[str, Any] = {}
    sups: dict[str, list[Any]] = defaultdict(list)
    seen_sups: set[str] = set()
    custom: dict[str, dict] = {}
    sources: dict[str, str] = {}

    def add_recording(rec: Any, path: Path) -> None:
        if rec.id in recs and recs[rec.id] != rec:
            raise FormatError(path, f"recording {rec.id!r} differs from the one in {sources[rec.id]}")
        recs.setdefault(rec.id, rec)
        sources.setdefault(rec.id, str(path))

    def add_supervision(sup: Any, path: Path) -> None:
        if sup.id not in seen_sups:
            seen_sups.add(sup.id)
            sups[sup.recording_id].append((sup, path))

    for path in map(Path, recordings):
        for rec in _read("recordings", path):
            add_recording(rec, path)
    for path in map(Path, cuts):
        for cut in _read("cuts", path):
            tracks = [t.cut for t in cut.tracks] if hasattr(cut, "tracks") else [cut]
            for c in tracks:
                if not getattr(c, "has_recording", False):
                    raise FormatError(path, f"cut {c.id!r} has no recording")
                add_recording(c.recording, path)
                if getattr(c, "custom", None):
                    custom.setdefault(c.recording_id, {}).update(
                        {k: v for k, v in c.custom.items() if k in CUT_CUSTOM})
                for sup in c.supervisions:  # relative to the cut: back to recording time
                    add_supervision(sup.with_offset(c.start), path)
    for path in map(Path, supervisions):
        for sup in _read("supervisions", path):
            add_supervision(sup, path)
    if not recs:
        raise SpeechkitError("no recordings: give --recordings and --supervisions, or --cuts")
    for rid, items in sups.items():
        if rid not in recs:
            sup, path = items[0]
            raise FormatError(path, f"supervision {sup.id!r} refers to recording {rid!r}, which no recordings "
                                    "manifest holds")
    empty = [rid for rid in recs if not sups.get(rid)]
    if empty:
        raise FormatError(sources[empty[0]], f"recording {empty[0]!r} has no supervisions (no reference); "
                                             f"{len(empty)} recording(s) without: {', '.join(empty[:5])}")
    return LhotseCorpus(recs, {rid: [s for s, _ in items] for rid, items in sups.items()}, custom, sources)


def _audio(recording: Any, channel: int | None) -> Iterator[np.ndarray]:
    """The recording as 16 kHz mono float32 blocks: the mix of its channels, or one channel."""
    import soxr

    channels = None if channel is None else recording.channel_ids[channel]
    rate = recording.sampling_rate
    resampler = soxr.ResampleStream(rate, SAMPLE_RATE, 1, dtype="float32", quality="HQ") \
        if rate != SAMPLE_RATE else None
    where = ", ".join(str(s.source) for s in recording.sources)
    offset = 0.0
    while offset < recording.duration:
        length = min(_BLOCK_S, recording.duration - offset)
        try:
            block = np.asarray(recording.load_audio(channels=channels, offset=offset, duration=length), np.float32)
        except Exception as exc:  # lhotse's audio backends raise anything
            raise AudioError(where, f"lhotse cannot load recording {recording.id!r} at {offset:.0f} s: "
                                    f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}") from None
        mono = np.ascontiguousarray(block.mean(axis=0) if block.ndim == 2 else block, dtype=np.float32)
        if not np.isfinite(mono).all():
            raise AudioError(where, f"NaN or infinite samples near {offset:.0f} s")
        yield resampler.resample_chunk(mono) if resampler else mono
        offset += length
    if resampler:
        yield resampler.resample_chunk(np.zeros(0, dtype=np.float32), last=True)


def _words(sup: Any, where: str) -> tuple[Word, ...] | None:
    """The supervision's words with times from its ``word`` alignment (None without one)."""
    items = (sup.alignment or {}).get("word")
    if not items:
        return None
    words = tuple(Word(i.symbol, round(i.start, 3), round(i.start + i.duration, 3),
                       None if i.score is None else float(i.score)) for i in items if i.symbol.strip())
    if any(w.start < sup.start - ALIGNMENT_SLACK_S or w.end > sup.end + ALIGNMENT_SLACK_S for w in words):
        raise FormatError(where, f"supervision {sup.id!r} ({sup.start:.2f}-{sup.end:.2f} s): its word alignment "
                                 "lies outside it; word times must be in recording time, as Lhotse's recipes write them")
    return words


def _transcripts(rid: str, sups: list[Any], where: str) -> tuple[Transcript, Transcript | None]:
    """The speaker turns and (when any supervision has text) the words of one recording."""
    turns, segments = [], []
    with_text = any((s.text or "").strip() or _words(s, where) for s in sups)
    for sup in sups:
        if not sup.speaker:
            raise FormatError(where, f"supervision {sup.id!r} of recording {rid!r} has no speaker")
        start, end = round(sup.start, 3), round(sup.start + sup.duration, 3)
        if sup.duration < 0 or sup.start < 0:
            raise FormatError(where, f"supervision {sup.id!r}: negative start or duration")
        turns.append(Segment(start=start, end=end, speaker=sup.speaker))
        if with_text:
            words = _words(sup, where)
            if words:
                segments.append(Segment(start=start, end=end, speaker=sup.speaker,
                                        text=" ".join(w.text for w in words), words=words))
            else:
                tokens = (sup.text or "").split()
                segments.append(Segment(start=start, end=end, speaker=sup.speaker, text=" ".join(tokens),
                                        words=tuple(Word(t) for t in tokens)))
    reference = Transcript(rid, segments) if with_text else None
    return Transcript(rid, turns, has_words=False), reference


def _people(corpus: LhotseCorpus, ids: Sequence[str], named: dict[str, SourcePerson]) -> list[SourcePerson]:
    """People in order of first speech over the series; names from a people file or the supervisions."""
    out: dict[str, SourcePerson] = {}
    for rid in ids:
        for sup in sorted(corpus.supervisions[rid], key=lambda s: s.start):
            if sup.speaker in out:
                continue
            name = (sup.custom or {}).get("speaker_name") if isinstance(sup.custom, dict) else None
            out[sup.speaker] = named.get(sup.speaker) or SourcePerson(sup.speaker, str(name or sup.speaker))
    return list(out.values())


def _marked_enrollment(corpus: LhotseCorpus, ids: Sequence[str]) -> EnrollmentOptions | None:
    """The enrollment settings a cut carries (``speechkit export lhotse`` writes them), if one does."""
    marked = [rid for rid in ids if corpus.custom.get(rid, {}).get("enrollment_only")]
    settings = corpus.custom[marked[0]].get("enrollment") if len(marked) == 1 else None
    if not isinstance(settings, dict):
        return None
    try:
        return EnrollmentOptions(marked[0], **{k: float(v) for k, v in settings.items() if v is not None})
    except (TypeError, ValueError) as exc:
        raise FormatError(corpus.sources[marked[0]], f"cut custom 'enrollment' of {marked[0]!r}: {exc}") from None


def import_lhotse(out: str | Path, *, recordings: Sequence[Path] = (), supervisions: Sequence[Path] = (),
                  cuts: Sequence[Path] = (), series: str | None = None, select: str | None = None,
                  order: str = "id", channel: int | None = None, name: str | None = None,
                  people: Sequence[SourcePerson] = (), terms: TermSet | None = None,
                  derive: bool = True, enrollment: EnrollmentOptions | None = None,
                  progress: bool = True) -> Workspace:
    """Import one series of a Lhotse corpus into a new workspace at ``out``.

    ``series``/``select``: see :func:`speechkit.corpora.series.select_series`. ``order``: calendar
    order by recording ``id`` or by ``date`` (from the cuts' custom fields). ``channel``: the
    channel index to keep (None: the mix of all channels). ``people``: names, nicknames and clips
    for speaker ids (the others are named by their id). ``terms``: the user's term list; without
    it and with ``derive``, terms are derived from the references (:mod:`speechkit.corpora.terms`).
    """
    corpus = read_corpus(recordings, supervisions, cuts)
    chosen = select_series(list(corpus.recordings), series, select)
    dates = {rid: parse_date(corpus.custom.get(rid, {}).get("date"), f"{corpus.sources[rid]}: cut of {rid!r}: "
                                                                      "custom 'date'") for rid in chosen.ids}
    ordered = calendar_order(chosen.ids, dates, order, corpus.sources)
    days, placeholder = meeting_dates(ordered, dates, corpus.sources)
    for rid in ordered:
        rec = corpus.recordings[rid]
        for source in rec.sources:
            if source.type == "file" and not Path(source.source).is_file():
                raise FormatError(corpus.sources[rid], f"recording {rid!r}: audio file {source.source} not found")
        if channel is not None and not 0 <= channel < len(rec.channel_ids):
            raise FormatError(corpus.sources[rid], f"recording {rid!r} has {len(rec.channel_ids)} channel(s); "
                                                   f"--channel {channel} is out of range")
    meetings = []
    for rid in ordered:
        turns, reference = _transcripts(rid, corpus.supervisions[rid], corpus.sources[rid])
        rec, custom = corpus.recordings[rid], corpus.custom.get(rid, {})
        meetings.append(SourceMeeting(id=rid, audio=lambda rec=rec: _audio(rec, channel), turns=turns,
                                      reference=reference, origin=f"{corpus.sources[rid]}: recording {rid!r}",
                                      date=days[rid], title=custom.get("title"), kind=custom.get("kind")))
    persons = _people(corpus, ordered, {p.id: p for p in people})
    enrollment = enrollment or _marked_enrollment(corpus, ordered)
    metadata: dict[str, Any] = {"import": {
        "from": "lhotse", "recordings": [str(Path(p).resolve()) for p in recordings],
        "supervisions": [str(Path(p).resolve()) for p in supervisions], "cuts": [str(Path(p).resolve()) for p in cuts],
        "series": {"pattern": series, "key": chosen.key, "left_out": list(chosen.skipped)},
        "order": order, "channel": "mix" if channel is None else channel,
        "dates": "placeholders (the corpus has no dates): they encode the calendar order only" if placeholder
        else "from the cuts' custom field 'date'",
        "references": {m.id: m.reference_kind for m in meetings}}}
    terms, metadata["terms"] = term_list(
        {m.id: m.reference.text for m in meetings if m.reference is not None}, terms, derive)
    exported = {corpus.custom.get(rid, {}).get("workspace") for rid in ordered} - {None}
    name = name or chosen.key or (str(exported.pop()) if len(exported) == 1 else Path(out).name)
    return build_workspace(out, name, persons, meetings, terms=terms,
                           enrollment=enrollment, metadata=metadata, progress=progress)

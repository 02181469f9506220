"""Lhotse manifests to a workspace: one meeting per recording, people from the speaker ids.

Reads a ``RecordingSet`` and a ``SupervisionSet`` (several files each, e.g. the train/dev/test
parts of ``lhotse prepare ami``), or a ``CutSet``: JSON lines read in bounded memory
(:mod:`speechkit.io.jsonfile`), each item checked on its line before the ``lhotse`` package builds
it (a manifest from elsewhere is untrusted: audio sources other than files are refused, see
:func:`read_corpus`). Supervisions give
the references: speaker turns always; the words when they carry text (word times when they carry
a ``word`` alignment, else segment level). A supervision's ``custom["speaker_name"]`` names its
person; a cut's ``custom`` may give the ``workspace`` name, its recording's ``date``, ``title`` and ``kind``, and mark
the meeting enrollments are cut from (``enrollment_only``, ``enrollment`` settings) unless
``--enroll-from`` says otherwise; ``speechkit export lhotse`` writes them, so export then import
gives back the same workspace.
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from speechkit.corpora.build import build_workspace
from speechkit.corpora.enroll import EnrollmentOptions
from speechkit.corpora.records import SAMPLE_RATE, SourceMeeting, SourcePerson
from speechkit.corpora.series import calendar_order, meeting_dates, parse_date, select_series
from speechkit.corpora.terms import term_list
from speechkit.errors import AudioError, FormatError, SpeechkitError, brief
from speechkit.io._lines import check_input, open_input
from speechkit.io.jsonfile import iter_jsonl, read_json
from speechkit.io.names import id_problem
from speechkit.transcript import Segment, Transcript, Word
from speechkit.workspace import TermSet, Workspace

_BLOCK_S = 60.0  # seconds of audio loaded per read
ALIGNMENT_SLACK_S = 0.5  # how far a word may stick out of its supervision, a supervision out of its recording
CUT_CUSTOM = ("workspace", "date", "title", "kind", "enrollment_only", "enrollment")  # the cut custom fields read
#: Recording source types an import reads: files; URLs only when the user allows them (``--allow-url``).
#: Every other type (``command`` runs a shell command, ``memory``, ``shar``, ...) is refused by name.
SAFE_SOURCES = ("file",)


@dataclass
class LhotseCorpus:
    """Recordings, their supervisions (recording time) and the custom fields of their cuts."""

    recordings: dict[str, Any]
    supervisions: dict[str, list[Any]]
    custom: dict[str, dict]
    sources: dict[str, str]  # recording id -> the manifest file (and line) it came from


@dataclass(frozen=True)
class _At:
    """Where a manifest item was read: the file and its line (None in a JSON list file)."""

    path: Path
    line: int | None
    index: int | None = None

    def error(self, problem: str) -> FormatError:
        return FormatError(self.path, problem, line=self.line,
                           field=None if self.index is None else f"[{self.index}]")

    def __str__(self) -> str:
        return f"{self.path}:{self.line}" if self.line is not None else f"{self.path}[{self.index}]"


def _items(kind: str, path: Path) -> Iterator[tuple[_At, dict]]:
    """The objects of a Lhotse manifest (JSON lines or a JSON list, gzip-compressed or not), bounded."""
    name = path.name.lower().removesuffix(".gz")
    if name.endswith(".json"):
        data = read_json(path)
        if not isinstance(data, list):
            raise FormatError(path, f"expected a JSON list of {kind}, got {type(data).__name__}")
        items: Iterator[tuple[_At, Any]] = ((_At(path, None, i), obj) for i, obj in enumerate(data))
    elif name.endswith(".jsonl"):
        items = ((_At(path, n), obj) for n, obj in iter_jsonl(path))
    else:
        check_input(path)
        raise FormatError(path, f"expected a Lhotse {kind} manifest in JSON lines (.jsonl, .jsonl.gz) or "
                                "JSON (.json, .json.gz)")
    count = 0
    for at, obj in items:
        if not isinstance(obj, dict):
            raise at.error(f"expected a Lhotse {kind[:-1]} (a JSON object), got {type(obj).__name__}")
        count += 1
        yield at, obj
    if not count:
        raise FormatError(path, f"no {kind} in the file (an empty manifest)")


def _build(kind: str, obj: dict, at: _At) -> Any:
    """The lhotse object of one manifest item; lhotse's own errors name the file and line."""
    from lhotse import Recording, SupervisionSegment
    from lhotse.cut.set import deserialize_cut

    build = {"recordings": Recording.from_dict, "supervisions": SupervisionSegment.from_dict,
             "cuts": deserialize_cut}[kind]
    try:
        return build(obj)
    except Exception as exc:  # lhotse raises anything from dataclass and dict errors
        raise at.error(f"not a Lhotse {kind[:-1]}: {type(exc).__name__}: {brief(str(exc), 200)}") from None


def _finite(value: Any, low: float = 0.0) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= low


def _raw_sources(obj: Any) -> Iterator[dict]:
    """Every audio source object (an item of a ``sources`` list) in a manifest item, however nested."""
    stack = [obj]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            for key, child in value.items():
                if key == "sources" and isinstance(child, list):
                    yield from (s for s in child if isinstance(s, dict))
                stack.append(child)
        elif isinstance(value, list):
            stack.extend(value)


def _check_sources(obj: dict, at: _At, allow_url: bool) -> None:
    """Refuse, before lhotse builds anything from the item, an audio source that is not a file (or an allowed URL)."""
    allowed = SAFE_SOURCES + (("url",) if allow_url else ())
    for source in _raw_sources(obj):
        kind = source.get("type")
        if kind not in allowed:
            hint = " (allow URLs with --allow-url)" if kind == "url" else ""
            raise at.error(f"audio source of type {brief(kind)} refused: an imported manifest may name audio files "
                           f"only{hint}; a {brief(kind)} source ({brief(str(source.get('source')), 60)}) is neither "
                           "run nor read")


def _check_recording(rec: Any, at: _At) -> None:
    if problem := id_problem(rec.id):
        raise at.error(f"recording id: {problem}")
    if not isinstance(rec.sampling_rate, int) or isinstance(rec.sampling_rate, bool) or rec.sampling_rate <= 0:
        raise at.error(f"recording {rec.id!r}: sampling_rate must be a positive integer, "
                       f"got {brief(rec.sampling_rate)}")
    if not _finite(rec.duration) or rec.duration <= 0 or not _finite(rec.num_samples):
        raise at.error(f"recording {rec.id!r}: duration and num_samples must be finite and positive, got "
                       f"{brief(rec.duration)} s, {brief(rec.num_samples)} samples")


def _check_supervision(sup: Any, at: _At) -> None:
    if not isinstance(sup.id, str) or not sup.id:
        raise at.error(f"supervision id: expected a string, got {brief(sup.id)}")
    for name in ("start", "duration"):
        if not _finite(getattr(sup, name)):
            raise at.error(f"supervision {sup.id!r}: {name} must be a finite number >= 0, got "
                           f"{brief(getattr(sup, name))}")
    if not sup.speaker:
        raise at.error(f"supervision {sup.id!r} of recording {sup.recording_id!r} has no speaker")
    if problem := id_problem(sup.speaker):
        raise at.error(f"supervision {sup.id!r}: speaker (a person id): {problem}")
    end = sup.start + sup.duration
    for item in (sup.alignment or {}).get("word") or ():
        if not (_finite(item.start) and _finite(item.duration)):
            raise at.error(f"supervision {sup.id!r}: word {brief(item.symbol)}: start and duration must be finite "
                           f"numbers >= 0, got {brief(item.start)} and {brief(item.duration)}")
        if item.start < sup.start - ALIGNMENT_SLACK_S or item.start + item.duration > end + ALIGNMENT_SLACK_S:
            raise at.error(f"supervision {sup.id!r} ({sup.start:.2f}-{end:.2f} s): its word alignment lies outside "
                           "it; word times must be in recording time, as Lhotse's recipes write them")


def _check_custom(custom: dict, rid: str, at: _At) -> None:
    for key in ("workspace", "date", "title", "kind"):
        if custom.get(key) is not None and not isinstance(custom[key], str):
            raise at.error(f"cut of {rid!r}: custom {key!r} must be a string, got {brief(custom[key])}")
    if custom.get("enrollment") is not None and not isinstance(custom["enrollment"], dict):
        raise at.error(f"cut of {rid!r}: custom 'enrollment' must be a mapping, got {brief(custom['enrollment'])}")


def read_corpus(recordings: Sequence[Path] = (), supervisions: Sequence[Path] = (),
                cuts: Sequence[Path] = (), allow_url: bool = False) -> LhotseCorpus:
    """Read Lhotse manifests into recordings and supervisions keyed by recording id.

    Every item is checked as it is read, and an error names the file and line: recording sources
    (files only, URLs with ``allow_url``), sampling rates, finite times, speaker ids; an id given
    twice with different contents is an error (a cut set may repeat the same recording or
    supervision, and several supervision files may hold the same one). Every supervision
    must refer to a recording and lie within it, and every
    recording must have supervisions.
    """
    recs: dict[str, Any] = {}
    sups: dict[str, list[tuple[Any, _At]]] = defaultdict(list)
    seen_sups: dict[str, tuple[Any, _At]] = {}
    custom: dict[str, dict] = {}
    sources: dict[str, _At] = {}

    def add_recording(rec: Any, at: _At) -> None:
        _check_recording(rec, at)
        if rec.id in recs:
            if recs[rec.id] != rec:
                raise at.error(f"recording {rec.id!r} is given again, differently, first at {sources[rec.id]}: "
                               "duplicate id")
            return
        recs[rec.id] = rec
        sources[rec.id] = at

    def add_supervision(sup: Any, at: _At) -> None:
        _check_supervision(sup, at)
        if sup.id in seen_sups:
            first, first_at = seen_sups[sup.id]
            if first != sup:
                raise at.error(f"supervision {sup.id!r} is given again, differently, first at {first_at}: duplicate id")
            return
        seen_sups[sup.id] = (sup, at)
        sups[sup.recording_id].append((sup, at))

    for path in map(Path, recordings):
        for at, obj in _items("recordings", path):
            _check_sources(obj, at, allow_url)
            add_recording(_build("recordings", obj, at), at)
    for path in map(Path, cuts):
        for at, obj in _items("cuts", path):
            _check_sources(obj, at, allow_url)
            cut = _build("cuts", obj, at)
            tracks = [t.cut for t in cut.tracks] if hasattr(cut, "tracks") else [cut]
            for c in tracks:
                if not getattr(c, "has_recording", False):
                    raise at.error(f"cut {c.id!r} has no recording")
                add_recording(c.recording, at)
                if getattr(c, "custom", None):
                    if not isinstance(c.custom, dict):
                        raise at.error(f"cut {c.id!r}: custom must be a mapping, got {brief(c.custom)}")
                    _check_custom(c.custom, c.recording_id, at)
                    custom.setdefault(c.recording_id, {}).update(
                        {k: v for k, v in c.custom.items() if k in CUT_CUSTOM})
                for sup in c.supervisions:  # relative to the cut: back to recording time
                    add_supervision(sup.with_offset(c.start), at)
    for path in map(Path, supervisions):
        for at, obj in _items("supervisions", path):
            add_supervision(_build("supervisions", obj, at), at)
    if not recs:
        raise SpeechkitError("no recordings: give --recordings and --supervisions, or --cuts")
    for rid, items in sups.items():
        if rid not in recs:
            sup, at = items[0]
            raise at.error(f"supervision {sup.id!r} refers to recording {rid!r}, which no recordings manifest holds")
        duration = recs[rid].duration
        for sup, at in items:
            if sup.start + sup.duration > duration + ALIGNMENT_SLACK_S:
                raise at.error(f"supervision {sup.id!r} ({sup.start:.2f}-{sup.start + sup.duration:.2f} s) lies "
                               f"outside its recording {rid!r} ({duration:.2f} s)")
    empty = [rid for rid in recs if not sups.get(rid)]
    if empty:
        raise sources[empty[0]].error(f"recording {empty[0]!r} has no supervisions (no reference); "
                                      f"{len(empty)} recording(s) without: {', '.join(empty[:5])}")
    return LhotseCorpus(recs, {rid: [s for s, _ in items] for rid, items in sups.items()}, custom,
                        {rid: str(at) for rid, at in sources.items()})


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


def _words(sup: Any) -> tuple[Word, ...] | None:
    """The supervision's words with times from its ``word`` alignment (None without one)."""
    items = (sup.alignment or {}).get("word")
    if not items:
        return None
    return tuple(Word(i.symbol, round(i.start, 3), round(i.start + i.duration, 3),
                      None if i.score is None else float(i.score)) for i in items if i.symbol.strip())


def _transcripts(rid: str, sups: list[Any]) -> tuple[Transcript, Transcript | None]:
    """The speaker turns and (when any supervision has text) the words of one recording."""
    turns, segments = [], []
    with_text = any((s.text or "").strip() or _words(s) for s in sups)
    for sup in sups:
        start, end = round(sup.start, 3), round(sup.start + sup.duration, 3)
        turns.append(Segment(start=start, end=end, speaker=sup.speaker))
        if with_text:
            words = _words(sup)
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
    bad = {k: v for k, v in settings.items() if v is not None and not _finite(v)}
    if bad:
        raise FormatError(corpus.sources[marked[0]], f"cut custom 'enrollment' of {marked[0]!r}: expected numbers "
                                                     f">= 0, got {brief(bad)}")
    try:  # numbers kept as written (1 stays 1), so that export -> import -> export gives the same manifest
        return EnrollmentOptions(marked[0], **{k: v for k, v in settings.items() if v is not None})
    except (TypeError, ValueError) as exc:
        raise FormatError(corpus.sources[marked[0]], f"cut custom 'enrollment' of {marked[0]!r}: {exc}") from None


def import_lhotse(out: str | Path, *, recordings: Sequence[Path] = (), supervisions: Sequence[Path] = (),
                  cuts: Sequence[Path] = (), series: str | None = None, select: str | None = None,
                  order: str = "id", channel: int | None = None, name: str | None = None,
                  people: Sequence[SourcePerson] = (), terms: TermSet | None = None,
                  derive: bool = True, enrollment: EnrollmentOptions | None = None,
                  allow_url: bool = False, progress: bool = True) -> Workspace:
    """Import one series of a Lhotse corpus into a new workspace at ``out``.

    ``series``/``select``: see :func:`speechkit.corpora.series.select_series`. ``order``: calendar
    order by recording ``id`` or by ``date`` (from the cuts' custom fields). ``channel``: the
    channel index to keep (None: the mix of all channels). ``people``: names, nicknames and clips
    for speaker ids (the others are named by their id). ``terms``: the user's term list; without
    it and with ``derive``, terms are derived from the references (:mod:`speechkit.corpora.terms`).
    ``allow_url``: read recordings whose audio source is a URL (never by default).
    """
    corpus = read_corpus(recordings, supervisions, cuts, allow_url)
    chosen = select_series(list(corpus.recordings), series, select)
    dates = {rid: parse_date(corpus.custom.get(rid, {}).get("date"), f"{corpus.sources[rid]}: cut of {rid!r}: "
                                                                      "custom 'date'") for rid in chosen.ids}
    ordered = calendar_order(chosen.ids, dates, order, corpus.sources)
    days, placeholder = meeting_dates(ordered, dates, corpus.sources)
    for rid in ordered:
        rec = corpus.recordings[rid]
        for source in (s for s in rec.sources if s.type == "file"):
            try:
                with open_input(source.source):  # a missing or unreadable file fails now, before any decoding
                    pass
            except FormatError as exc:
                raise FormatError(corpus.sources[rid], f"recording {rid!r}: audio file {source.source}: "
                                                       f"{exc.problem}") from None
        if channel is not None and not 0 <= channel < len(rec.channel_ids):
            raise FormatError(corpus.sources[rid], f"recording {rid!r} has {len(rec.channel_ids)} channel(s); "
                                                   f"--channel {channel} is out of range")
    meetings = []
    for rid in ordered:
        turns, reference = _transcripts(rid, corpus.supervisions[rid])
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
